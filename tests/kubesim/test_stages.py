"""kubesim's life cycles as data: every stage file under kubesim/stages/ loads, and each stage, played on its input
(kubesim/stages/testdata/<stage>.input.yaml), gives its output (<stage>.output.yaml).

KUBESIM_STAGES_WRITE=1 writes the outputs instead of comparing them (read the diff before committing it).
"""

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from kubesim.controllers.jobs import JobController
from kubesim.controllers.kubeflow import KubeflowJobs
from kubesim.node import stages
from kubesim.node.kubelet import Kubelet, PodState
from kubesim.sim import CRASH_MARK, PULL_FAIL_MARK

from .conftest import pod_manifest, wait_until, waiting_reason

TESTDATA = stages.DIRECTORY / "testdata"
FILES = sorted(stages.DIRECTORY.glob("*.yaml"))
ALL = [stage for path in FILES for stage in stages.load_file(path)]
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
SINCE = 1_800_000_000.0


class Recorder:
    def __init__(self):
        self.events = []

    def emit(self, obj, type_, reason, message, component, *rest):
        self.events.append([type_, reason, message, *rest[1:]])


def _controller(settings: dict | None = None, pods: list | None = None):
    sim = SimpleNamespace(**(settings or {}), pull_fails=lambda image: PULL_FAIL_MARK in image,
                          crashes=lambda image: CRASH_MARK in image)
    ctl = SimpleNamespace(sim=sim, store=SimpleNamespace(), recorder=Recorder(), deleted=[], timers=[], written=[],
                          scheduler=SimpleNamespace(release=lambda uid: None))
    ctl.owned_pods = lambda job: pods or []
    ctl.delete_object = lambda key, obj, *rest: ctl.deleted.append(obj["metadata"]["name"])
    ctl.after = lambda seconds, *rest: ctl.timers.append(seconds)
    ctl.create_pod = lambda job, template, prefix: {"metadata": {"name": prefix + "new", "uid": "uid-new"}}
    ctl.store.update = lambda key, obj: ctl.written.append(obj)
    ctl.owner_ref = lambda obj: {"kind": obj["kind"], "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}
    ctl.create = lambda key, namespace, body: (ctl.created.append(body["metadata"]["name"]), body)[1]
    ctl.created = []
    return ctl


def play_pod(data: dict) -> dict:
    """One step of the kubelet on the pod: the stage that applies, its delay, the state, status and Events after."""
    ctl = _controller(data["settings"])
    kubelet, pod, state = Kubelet(ctl), data["pod"], data["kubelet"]
    st = PodState("node-1", "10.244.1.2", "172.18.0.3", SINCE)
    st.stage, st.restarts, st.pull_backoffs = state["stage"], state["restarts"], state["pullBackoffs"]
    if st.stage in ("running", "crash_backoff"):
        st.started_at, st.phase = SINCE, "Running"
    stage, due, _ = stages.next_due(kubelet.stages, kubelet.view(pod, st), st.since, SINCE + 3600,
                                    kubelet._settings(), pod["metadata"]["uid"])
    if stage is None:
        return {"stage": None}
    kubelet.apply(stage, pod, kubelet.view(pod, st), st, due)
    status = kubelet._status(pod, st)
    return {"stage": stage.name, "delaySeconds": round(due - SINCE, 6),
            "kubelet": {"stage": st.stage, "restarts": st.restarts, "pullBackoffs": st.pull_backoffs},
            "phase": status["phase"],
            "containers": {s["name"]: _state(s) for s in status["containerStatuses"]},
            "events": ctl.recorder.events}


def _state(status: dict) -> str:
    kind, detail = next(iter(status["state"].items()))
    reason = detail.get("reason")
    words = [kind, reason] if reason else [kind]
    if status["restartCount"]:
        words.append(f"restarts={status['restartCount']}")
    return " ".join(words)


def play_job(data: dict) -> dict:
    """One sync of the Job controller: the stages that applied, the pods deleted and created, the Events, the
    status written (times as <time>), and whether it looks again later."""
    ctl = _controller(pods=data["pods"])
    jobs, applied = JobController(ctl), []
    apply = jobs.apply
    jobs.apply = lambda stage, *args: (applied.append(stage.name), apply(stage, *args))[1]
    jobs.sync(data["job"])
    status = ctl.written[-1]["status"] if ctl.written else None
    return {"stages": applied, "deletedPods": ctl.deleted, "events": ctl.recorder.events,
            "status": _times(status), "looksAgain": bool(ctl.timers)}


def _times(value):
    if isinstance(value, dict):
        return {k: _times(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_times(v) for v in value]
    return "<time>" if isinstance(value, str) and TIME.match(value) else value


def play_training(data: dict) -> dict:
    """One sync of the training operator: as play_job, with the pods created."""
    ctl = _controller(pods=data["pods"])
    operator, applied = KubeflowJobs(ctl), []
    apply = operator.apply
    operator.apply = lambda stage, *args: (applied.append(stage.name), apply(stage, *args))[1]
    operator.sync(data["key"], data["job"])
    status = ctl.written[-1]["status"] if ctl.written else None
    return {"stages": applied, "deletedPods": ctl.deleted, "createdPods": ctl.created, "events": ctl.recorder.events,
            "status": _times(status), "looksAgain": bool(ctl.timers)}


PLAYERS = {"Pod": play_pod, "Job": play_job, "TrainingJob": play_training}


@pytest.mark.parametrize("stage", ALL, ids=[s.name for s in ALL])
def test_stage_input_gives_output(stage):
    data = yaml.safe_load((TESTDATA / f"{stage.name}.input.yaml").read_text())
    got = PLAYERS[stage.kind](data)
    assert stage.name in (got.get("stages") or [got.get("stage")]), f"{stage.name} did not apply: {got}"
    out = TESTDATA / f"{stage.name}.output.yaml"
    if os.environ.get("KUBESIM_STAGES_WRITE"):
        out.write_text(f"# What {stage.name} makes of {stage.name}.input.yaml (tests/kubesim/test_stages.py).\n"
                       + yaml.safe_dump(got, sort_keys=False, width=120))
    assert got == yaml.safe_load(out.read_text())


def test_every_stage_has_test_data_and_every_test_data_a_stage():
    names = {s.name for s in ALL}
    assert names, "no stage files"
    assert {p.name.split(".")[0] for p in TESTDATA.glob("*.yaml")} == names
    for kind in PLAYERS:
        assert stages.load(kind), kind


def test_the_controllers_load_every_stage_of_their_kind():
    assert sum(len(stages.load(kind)) for kind in PLAYERS) == len(ALL)


@pytest.mark.parametrize("broken", [
    {"kind": "Stage", "metadata": {"name": "x"}, "spec": {"next": {}}},  # no resourceRef
    {"kind": "Stage", "metadata": {"name": "x"}, "spec": {"resourceRef": {"kind": "Pod"}}},  # no next
    {"kind": "Stage", "metadata": {"name": "x"}, "spec": {"resourceRef": {"kind": "Pod"}, "next": {}, "selector": {
        "matchExpressions": [{"key": ".status.phase", "operator": "Equals", "values": ["Running"]}]}}},
    {"kind": "Stage", "metadata": {"name": "x"}, "spec": {"resourceRef": {"kind": "Pod"}, "next": {}, "selector": {
        "matchExpressions": [{"key": "status phase", "operator": "Exists"}]}}},
    {"kind": "Stage", "metadata": {"name": "x"}, "spec": {"resourceRef": {"kind": "Pod"}, "next": {},
                                                          "delay": {"seconds": 3}}},
    {"kind": "Pod", "metadata": {"name": "x"}},
])
def test_a_broken_stage_is_refused(broken, tmp_path: Path):
    (tmp_path / "broken.yaml").write_text(yaml.safe_dump(broken))
    with pytest.raises(stages.StageError):
        stages.load("Pod", tmp_path)


def test_a_stage_name_used_twice_is_refused(tmp_path: Path):
    text = (stages.DIRECTORY / "pod.yaml").read_text()
    (tmp_path / "a.yaml").write_text(text)
    (tmp_path / "b.yaml").write_text(text)
    with pytest.raises(stages.StageError, match="twice"):
        stages.load("Pod", tmp_path)


def test_paths_selectors_and_delays():
    assert stages.value_at({"l": [1, 2]}, ".l[1]") == 2 and stages.value_at({"l": []}, ".l[0]") is None
    doc = {"metadata": {"annotations": {"a/b": "2"}, "labels": {"app": "x"}},
           "status": {"conditions": [{"type": "Ready", "status": "True"}], "ok": True}}
    assert stages.value_at(doc, '.metadata.annotations["a/b"]') == "2"
    assert stages.value_at(doc, ".status.conditions[type=Ready].status") == "True"
    assert stages.value_at(doc, ".status.conditions[type=Done].status") is None
    assert stages.matches({"matchLabels": {"app": "x"}, "matchExpressions": [
        {"key": ".status.ok", "operator": "In", "values": [True]},
        {"key": ".status.phase", "operator": "NotIn", "values": ["Failed"]},
        {"key": ".status.phase", "operator": "DoesNotExist"}]}, doc)
    assert not stages.matches({"matchAnnotations": {"a/b": "3"}}, doc)
    stage = stages.Stage("s", "Pod", {}, {"durationFrom": {"expressionFrom": '.metadata.annotations["a/b"]'},
                                          "durationMilliseconds": 500}, {})
    assert stages.delay_seconds(stage, doc, {}) == 2.0
    assert stages.delay_seconds(stage, {}, {}) == 0.5
    jittered = stages.Stage("j", "Pod", {}, {"durationMilliseconds": 1000, "jitterDurationMilliseconds": 2000}, {})
    first = stages.delay_seconds(jittered, {}, {}, "uid-1")
    assert 1.0 <= first <= 2.0 and stages.delay_seconds(jittered, {}, {}, "uid-1") == first
    backoff = stages.Stage("b", "Pod", {}, {"durationFrom": {"setting": "base"}, "backoffFrom": ".n"}, {})
    assert [stages.delay_seconds(backoff, {"n": n}, {"base": 1.0}) for n in (0, 1, 3, 9)] == [1.0, 1.0, 4.0, 30.0]


def test_failures_chosen_by_annotation_as_by_image(core, ns):
    """The annotations the stages select on fail a pod whatever its image: the image markers are only sugar."""
    core.create_namespaced_pod(ns, pod_manifest("pulls", annotations={"kubesim.paas-studio/pull-fails": "true"}))
    wait_until(lambda: waiting_reason(core.read_namespaced_pod("pulls", ns)) in ("ErrImagePull", "ImagePullBackOff"))
    core.create_namespaced_pod(ns, pod_manifest("crashes", annotations={"kubesim.paas-studio/crashes": "main"}))
    pod = wait_until(lambda: (p := core.read_namespaced_pod("crashes", ns)).status.container_statuses
                     and p.status.container_statuses[0].restart_count >= 1 and p, timeout=8)
    assert pod.status.container_statuses[0].last_state.terminated.exit_code == 1
    assert core.read_namespaced_pod_log("crashes", ns).endswith("kubesim: main crashed: exit status 1\n")
