"""The kubelet's side of a pod: image pull, container start, completion, crash loop, graceful stop, and the pod
status and Events a real kubelet reports at each step.

The life cycle is data: the stages in kubesim/stages/pod.yaml (kubesim/node/stages.py reads them) say, for each
step, when it applies, after how long, and what comes next (the kubelet's stage, the phase, counters, Events).
Timing: a bound pod shows ContainerCreating for `pull_seconds`, then runs. Pods of a Job (or any pod with
restartPolicy other than Always and the `kubesim.paas-studio/run-seconds` annotation) succeed after
`run_seconds`; the rest run until deleted. A container named in the pod's `kubesim.paas-studio/pull-fails`
annotation ("true": every container), or whose image reference contains `does-not-exist` (or is listed in the
pull-failure fault), cycles through ErrImagePull / ImagePullBackOff; one named in `kubesim.paas-studio/crashes`,
or whose image contains `crashloop` (or is listed in the crash fault), exits 1 shortly after each start:
CrashLoopBackOff with a growing restartCount, or phase Failed under restartPolicy Never.
"""

import hashlib
import time

from ..errors import Unavailable, bad_request
from ..store import now_rfc3339, parse_rfc3339
from . import stages
from .podgrouper import SCHEDULER_NAME

RUN_SECONDS_ANNOTATION = "kubesim.paas-studio/run-seconds"
PULL_FAILS_ANNOTATION = "kubesim.paas-studio/pull-fails"  # the containers (by name, "true": all) whose pull fails
CRASHES_ANNOTATION = "kubesim.paas-studio/crashes"  # the containers (by name, "true": all) that exit 1 after a start
_COUNTERS = {"restarts": "restarts", "pullBackoffs": "pull_backoffs"}
TERMINAL = ("succeeded", "failed")
RETRY_SECONDS = 0.5  # a bind whose write the server did not take is sent again this much later


class PodState:
    def __init__(self, node: str, ip: str, host_ip: str, now: float):
        self.node, self.ip, self.host_ip = node, ip, host_ip
        self.stage, self.since, self.bound_at = "creating", now, now
        self.phase = "Pending"
        self.started_at = self.finished_at = self.removing = None
        self.restarts, self.pull_backoffs = 0, 0
        self.last_term = None
        self.conditions = {}  # type -> (status, lastTransitionTime)
        self.written = None   # (stage, since, restarts, resourceVersion) of the last status written


def full_image(image: str) -> str:
    """`busybox` -> `docker.io/library/busybox:latest`, as containerd names it in its messages."""
    first = image.split("/", 1)[0]
    if "/" not in image or not ("." in first or ":" in first or first == "localhost"):
        image = "docker.io/" + ("library/" if "/" not in image else "") + image
    tail = image.rsplit("/", 1)[-1]
    return image if ":" in tail or "@" in image else image + ":latest"


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


class Kubelet:
    def __init__(self, controller):
        self.ctl, self.sim, self.store = controller, controller.sim, controller.store
        self.states = {}      # pod uid -> PodState
        self._next_ip = {}    # node name -> last host octet handed out
        self.stages = stages.load("Pod")

    # --- scheduling outcomes ---------------------------------------------------------------------------------

    def bind(self, pod: dict, placement) -> None:
        node_name, _devices = placement
        index = int(node_name.rsplit("-", 1)[-1])
        octet = self._next_ip.get(node_name, 1) % 253 + 1
        self._next_ip[node_name] = octet
        now = time.time()
        st = self.states[pod["metadata"]["uid"]] = PodState(node_name, f"10.244.{index}.{octet + 1}",
                                                            f"172.18.0.{index + 2}", now)
        pod = {**pod, "spec": {**pod["spec"], "nodeName": node_name}}
        meta = pod["metadata"]
        if pod["spec"].get("schedulerName") == SCHEDULER_NAME and self.ctl.kai is not None:
            self.ctl.recorder.emit(pod, "Normal", "Scheduled", f"Successfully assigned pod {meta['namespace']}/"
                                   f"{meta['name']} to node {node_name} at node-pool default", SCHEDULER_NAME)
        else:
            self.ctl.recorder.emit(pod, "Normal", "Scheduled", f"Successfully assigned {meta['namespace']}/"
                                                               f"{meta['name']} to {node_name}", "default-scheduler")
        self._pulling(pod, st)
        try:
            self.store.update("pods", {**pod, "metadata": dict(meta), "status": self._status(pod, st)})
        except Unavailable:  # the binding or the first status did not reach the server: the next sync sends both
            self.ctl.after(RETRY_SECONDS, "pods", meta["namespace"], meta["name"])
            return
        self.ctl.after(self.sim.pull_seconds, "pods", meta["namespace"], meta["name"])

    def unschedulable(self, pod: dict, message: str) -> None:
        status = {**(pod.get("status") or {}), "phase": "Pending",
                  "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                  "lastTransitionTime": _condition_time(pod, "PodScheduled", "False"),
                                  "reason": "Unschedulable", "message": message}]}
        if status != pod.get("status"):
            try:
                self.store.update("pods", {**pod, "metadata": dict(pod["metadata"]), "status": status})
            except Unavailable:  # said again on the scheduler's next pass
                self.ctl.scheduler.reported.pop(pod["metadata"]["uid"], None)
                return
            self.ctl.recorder.emit(pod, "Warning", "FailedScheduling", message, "default-scheduler")

    # --- lifecycle -------------------------------------------------------------------------------------------

    def sync(self, pod: dict) -> None:
        meta = pod["metadata"]
        st = self.states.get(meta["uid"])
        if meta.get("deletionTimestamp"):
            return self._terminate(pod, st)
        if st is None:
            # The scheduler sees a new pod only after `schedule_seconds`, so it is observably Pending first.
            waited = time.time() - parse_rfc3339(meta["creationTimestamp"])
            if waited < self.sim.schedule_seconds:
                self.ctl.after(self.sim.schedule_seconds - waited, "pods", meta["namespace"], meta["name"])
                return
            if self.ctl.kai is not None and pod["spec"].get("schedulerName") == SCHEDULER_NAME:
                self.ctl.kai.enqueue(pod)  # KAI's queues decide (node/kai.py)
            else:
                self.ctl.scheduler.enqueue(pod)
            return
        now = time.time()
        due = self._advance(pod, st, now)
        self._write(pod, st)
        if due is not None:
            self.ctl.after(max(0.0, due - now), "pods", meta["namespace"], meta["name"])

    def forget(self, pod: dict) -> None:
        self.states.pop(pod["metadata"]["uid"], None)
        self.ctl.scheduler.forget(pod["metadata"]["uid"])
        if self.ctl.kai is not None:
            self.ctl.kai.forget(pod["metadata"]["uid"])

    def _terminate(self, pod, st) -> None:
        meta = pod["metadata"]
        if st is None or st.stage in TERMINAL:
            self.store.remove("pods", meta["namespace"], meta["name"])
            return
        now = time.time()
        if st.removing is None:
            st.removing = now + 2 * self.sim.tick  # containers stop quickly; the grace period is not waited out
            for c in pod["spec"]["containers"]:
                self._event(pod, st, "Normal", "Killing", f"Stopping container {c['name']}", c["name"])
            self.ctl.after(st.removing - now, "pods", meta["namespace"], meta["name"])
        elif now >= st.removing:
            self.store.remove("pods", meta["namespace"], meta["name"])
        else:
            self.ctl.after(st.removing - now, "pods", meta["namespace"], meta["name"])

    def _advance(self, pod: dict, st: PodState, now: float) -> float | None:
        """Play the pod's stages (kubesim/stages/pod.yaml) up to now; the time to look again, or None."""
        settings = self._settings()
        while True:
            view = self.view(pod, st)
            stage, due, pending = stages.next_due(self.stages, view, st.since, now, settings, pod["metadata"]["uid"])
            if stage is None:
                return pending
            self.apply(stage, pod, view, st, due)

    def view(self, pod: dict, st: PodState) -> dict:
        """The pod as its stages see it: with its failure annotations as the kubelet reads them, and the kubelet's
        own block of facts."""
        meta = pod["metadata"]
        annotations = dict(meta.get("annotations") or {})
        for key, names in zip((PULL_FAILS_ANNOTATION, CRASHES_ANNOTATION), self._failing(pod), strict=True):
            annotations.pop(key, None)
            if names:
                annotations[key] = ",".join(names)
        owned_by_job = any(str(r.get("kind") or "").endswith("Job") for r in meta.get("ownerReferences") or [])
        return {**pod, "metadata": {**meta, "annotations": annotations},
                "kubelet": {"stage": st.stage, "restarts": st.restarts, "pullBackoffs": st.pull_backoffs,
                            "ownedByJob": True if owned_by_job else None}}

    def apply(self, stage, pod: dict, view: dict, st: PodState, at: float) -> None:
        """A stage's `next`, from `at` (when its delay ended)."""
        nxt, kubelet = stage.next, stage.next.get("kubelet") or {}
        if "lastTermination" in kubelet:
            st.last_term = {**kubelet["lastTermination"], "startedAt": now_rfc3339(st.started_at),
                            "finishedAt": now_rfc3339(at)}
        counter = _COUNTERS.get(kubelet.get("increment"))
        if counter:
            setattr(st, counter, getattr(st, counter) + 1)
        st.stage, st.since = kubelet.get("stage", st.stage), at
        st.phase = (nxt.get("status") or {}).get("phase", st.phase)
        if kubelet.get("start"):
            st.started_at = at
        for group in nxt.get("events") or []:
            for c in self._containers(pod, view, group["containers"]):
                for event in group["emit"]:
                    self._event(pod, st, event["type"], event["reason"],
                                event["message"].format_map(self._words(pod, c)), c["name"])
        if kubelet.get("finish"):
            st.finished_at = at
            self.ctl.scheduler.release(pod["metadata"]["uid"])  # a finished pod no longer holds node resources

    def _settings(self) -> dict:
        return {"pull_seconds": self.sim.pull_seconds, "run_seconds": self.sim.run_seconds,
                "restart_seconds": max(2 * self.sim.tick, self.sim.pull_seconds)}

    def _failing(self, pod: dict) -> tuple[list[str], list[str]]:
        """The names of the containers whose image pull fails, and of those that crash: by annotation ("true" or
        "*" for all), or by the image markers and the faults of the simulator."""
        annotations = pod["metadata"].get("annotations") or {}
        out = []
        for key, test in ((PULL_FAILS_ANNOTATION, self.sim.pull_fails), (CRASHES_ANNOTATION, self.sim.crashes)):
            named = {n.strip() for n in (annotations.get(key) or "").split(",") if n.strip()}
            every = bool(named & {"true", "*"})
            out.append([c["name"] for c in pod["spec"]["containers"]
                        if every or c["name"] in named or test(c["image"])])
        return out[0], out[1]

    @staticmethod
    def _containers(pod: dict, view: dict, which: str) -> list[dict]:
        if which == "all":
            return pod["spec"]["containers"]
        names = (stages.value_at(view, which) or "").split(",")
        return [c for c in pod["spec"]["containers"] if c["name"] in names]

    def _words(self, pod: dict, c: dict) -> dict:
        return {"container": c["name"], "image": c["image"], "pod": _pod_ref(pod),
                "pullError": _pull_error(c["image"]), "pullMilliseconds": int(self.sim.pull_seconds * 1000)}

    def _pulling(self, pod, st):
        for c in pod["spec"]["containers"]:
            self._event(pod, st, "Normal", "Pulling", f'Pulling image "{c["image"]}"', c["name"])

    def _event(self, pod, st, type_, reason, message, container):
        self.ctl.recorder.emit(pod, type_, reason, message, "kubelet", st.node, f"spec.containers{{{container}}}")

    # --- status ----------------------------------------------------------------------------------------------

    def _write(self, pod: dict, st: PodState) -> None:
        # The status is a function of the pod state; rebuild it only when that moved (most syncs are echoes).
        signature = (st.stage, st.since, st.restarts, pod["metadata"]["resourceVersion"])
        if signature == st.written:
            return
        status = self._status(pod, st)
        if status != pod.get("status") or not pod["spec"].get("nodeName"):
            # With the node it was bound to: where the binding's answer was lost, the write binds it again.
            pod = self.store.update("pods", {**pod, "metadata": dict(pod["metadata"]), "status": status,
                                             "spec": {**pod["spec"], "nodeName": st.node}})
        st.written = (st.stage, st.since, st.restarts, pod["metadata"]["resourceVersion"])

    def _condition(self, st, type_, ok, reason=None, message=None) -> dict:
        status = "True" if ok else "False"
        if st.conditions.get(type_, ("",))[0] != status:
            st.conditions[type_] = (status, now_rfc3339())
        cond = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": st.conditions[type_][1]}
        if reason:
            cond["reason"] = reason
        if message:
            cond["message"] = message
        return cond

    def _status(self, pod: dict, st: PodState) -> dict:
        pull_fails, crashes = self._failing(pod)
        statuses = [self._container_status(pod, st, c, c["name"] in pull_fails, c["name"] in crashes)
                    for c in pod["spec"]["containers"]]
        unready = [s["name"] for s in statuses if not s["ready"]]
        if st.stage in TERMINAL:
            ready = [self._condition(st, t, False, "PodCompleted") for t in ("Ready", "ContainersReady")]
        else:
            message = f"containers with unready status: [{' '.join(unready)}]" if unready else None
            ready = [self._condition(st, t, not unready, "ContainersNotReady" if unready else None, message)
                     for t in ("Ready", "ContainersReady")]
        conditions = [self._condition(st, "PodReadyToStartContainers", st.stage not in TERMINAL),
                      self._condition(st, "Initialized", True), *ready, self._condition(st, "PodScheduled", True)]
        status = {"phase": st.phase, "conditions": conditions, "hostIP": st.host_ip,
                  "hostIPs": [{"ip": st.host_ip}], "podIP": st.ip, "podIPs": [{"ip": st.ip}],
                  "startTime": now_rfc3339(st.bound_at), "containerStatuses": statuses,
                  "qosClass": (pod.get("status") or {}).get("qosClass", "BestEffort")}
        return status

    def _container_status(self, pod, st, c, pull_fails: bool, crashing: bool) -> dict:
        name, image = c["name"], c["image"]
        out = {"name": name, "image": image, "imageID": "", "ready": False, "started": False,
               "restartCount": st.restarts if crashing else 0}
        if st.started_at is not None:
            out["imageID"] = f"{full_image(image).rsplit(':', 1)[0]}@sha256:{_digest(image)}"
            out["containerID"] = f"containerd://{_digest(pod['metadata']['uid'], name, str(st.restarts))}"
        failed = st.stage == "failed" and crashing
        out["lastState"] = {"terminated": {**st.last_term, "containerID": out.get("containerID", "")}} \
            if crashing and st.last_term and not failed else {}
        out["state"] = _container_state(pod, st, c, pull_fails, crashing, out.get("containerID", ""))
        if "running" in out["state"]:
            out.update(ready=True, started=True)
        return out

    # --- logs ------------------------------------------------------------------------------------------------

    def logs(self, pod: dict, query: dict) -> str:
        meta = pod["metadata"]
        name = _log_container(pod, query.get("container"))
        st = self.states.get(meta["uid"])
        if st is None or st.started_at is None:
            waiting = next((s["state"].get("waiting", {}).get("reason") for s in
                            (pod.get("status") or {}).get("containerStatuses") or [] if s["name"] == name), None)
            raise bad_request(f'container "{name}" in pod "{meta["name"]}" is waiting to start: '
                              f"{waiting or 'ContainerCreating'}")
        image = next(c["image"] for c in pod["spec"]["containers"] if c["name"] == name)
        crashing = name in self._failing(pod)[1]
        if query.get("previous") == "true":  # the instance before the last restart, as the kubelet keeps it
            if not (crashing and st.last_term):
                raise bad_request(f'previous terminated container "{name}" in pod "{meta["name"]}" not found')
            lines = [(st.started_at, f"kubesim: container {name} started from image {image}"),
                     (st.started_at + 1, f"kubesim: {name} crashed: exit status 1")]
        else:
            end = st.finished_at or time.time()
            seconds = int(max(0.0, end - st.started_at))
            lines = [(st.started_at, f"kubesim: container {name} started from image {image}")]
            lines += [(st.started_at + i + 1, f"kubesim: {name} working, step {i + 1}")
                      for i in range(min(seconds, 1000))]
            if st.stage == "succeeded":
                lines.append((end, f"kubesim: {name} finished"))
            if crashing:
                lines.append((end, f"kubesim: {name} crashed: exit status 1"))
        tail = query.get("tailLines")
        if tail and tail.isdigit():
            lines = lines[-int(tail):] if int(tail) else []
        stamped = query.get("timestamps") == "true"  # RFC 3339 with nanoseconds, then a space, as the kubelet
        return "".join((f"{_rfc3339_nano(at)} " if stamped else "") + line + "\n" for at, line in lines)


def _rfc3339_nano(at: float) -> str:
    whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at))
    return f"{whole}.{int((at % 1) * 1e9):09d}Z"


def _log_container(pod: dict, name: str | None) -> str:
    """The container a log request reads: the one named, or the pod's only one."""
    meta, names = pod["metadata"], [c["name"] for c in pod["spec"]["containers"]]
    name = name or (names[0] if len(names) == 1 else None)
    if name is None:
        raise bad_request(f"a container name must be specified for pod {meta['name']}, choose one of: "
                          f"[{' '.join(names)}]")
    if name not in names:
        raise bad_request(f"container {name} is not valid for pod {meta['name']}")
    return name


def _container_state(pod, st, c, pull_fails: bool, crashing: bool, container_id: str) -> dict:
    name, image = c["name"], c["image"]
    if st.stage == "creating" or (st.stage in ("pull_error", "pull_backoff") and not pull_fails):
        return {"waiting": {"reason": "ContainerCreating"}}
    if st.stage == "pull_error":
        return {"waiting": {"reason": "ErrImagePull", "message": _pull_error(image)}}
    if st.stage == "pull_backoff":
        return {"waiting": {"reason": "ImagePullBackOff",
                            "message": f'Back-off pulling image "{image}": ErrImagePull: {_pull_error(image)}'}}
    if st.stage == "crash_backoff" and crashing:
        seconds = min(10 * 2 ** (st.restarts - 1), 300)  # the kubelet's wording, in its own (real) seconds
        return {"waiting": {"reason": "CrashLoopBackOff", "message": f"back-off {seconds}s restarting "
                            f"failed container={name} pod={_pod_ref(pod)}"}}
    if st.stage in ("running", "crash_backoff"):
        return {"running": {"startedAt": now_rfc3339(st.started_at)}}
    failed = st.stage == "failed" and crashing
    return {"terminated": {"exitCode": 1 if failed else 0, "reason": "Error" if failed else "Completed",
                           "startedAt": now_rfc3339(st.started_at), "finishedAt": now_rfc3339(st.finished_at),
                           "containerID": container_id}}


def _pod_ref(pod) -> str:
    meta = pod["metadata"]
    return f"{meta['name']}_{meta['namespace']}({meta['uid']})"


def _pull_error(image: str) -> str:
    full = full_image(image)
    return (f'rpc error: code = NotFound desc = failed to pull and unpack image "{full}": failed to resolve '
            f'reference "{full}": {full}: not found')


def _condition_time(pod: dict, type_: str, status: str) -> str:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond["type"] == type_ and cond["status"] == status:
            return cond["lastTransitionTime"]
    return now_rfc3339()
