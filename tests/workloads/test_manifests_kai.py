"""Workloads on a cluster that schedules with KAI Scheduler (workloads/manifests/placement.py): the project's queue,
Run:ai's priority class and preemptibility as KAI's labels on every pod and on its owner, KAI's scheduler name, a
Job that ignores KAI's evictions, a distributed job gang-scheduled by KAI's pod-grouper; and the default node pool
(every node) is no pool rule."""

import pytest

from studio.clusters.scheduler import Placement
from tests.workloads.test_manifests import assert_valid, build, minimal, one, pod_template
from workloads import manifests as m

KAI_LABELS = {"kai.scheduler/queue": "team-a", "priorityClassName": "train",
              "kai.scheduler/preemptibility": "preemptible"}


def test_a_training_is_placed_in_its_projects_queue_and_ignores_evictions():
    objects = build("training", minimal(compute={"gpuDevicesRequest": 1}), placement=Placement("team-a", "train"))
    assert_valid(objects)
    job, template = one(objects, "Job"), pod_template(objects)
    for meta in (job["metadata"], template["metadata"]):
        assert KAI_LABELS.items() <= meta["labels"].items()
        assert meta["labels"][m.WORKLOAD_ID_LABEL]  # ours stay
    assert template["spec"]["schedulerName"] == "kai-scheduler"
    assert job["spec"]["podFailurePolicy"] == {"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]}


@pytest.mark.parametrize("kind, cls, preemptibility", [("workspace", "build", "non-preemptible"),
                                                        ("inference", "inference", "non-preemptible"),
                                                        ("workspace", "interactive-preemptible", "preemptible")])
def test_other_kinds_carry_their_class_and_no_job_policy(kind, cls, preemptibility):
    objects = build(kind, minimal(compute={"gpuPortionRequest": 0.5, "gpuRequestType": "portion"}),
                    knative=False, placement=Placement("team-a", cls))
    assert_valid(objects)
    template = pod_template(objects)
    labels = template["metadata"]["labels"]
    assert labels["priorityClassName"] == ("build-preemptible" if cls == "interactive-preemptible" else cls)
    assert labels["kai.scheduler/preemptibility"] == preemptibility
    assert template["spec"]["schedulerName"] == "kai-scheduler"  # not the GPU-sharing scheduler's name
    assert template["metadata"]["annotations"]["gpu-fraction"] == "0.5"
    assert all("podFailurePolicy" not in o["spec"] for o in objects)


def test_a_training_that_restarts_in_place_gets_no_failure_policy():
    objects = build("training", minimal(restartPolicy="OnFailure"), placement=Placement("team-a", "train"))
    assert "podFailurePolicy" not in one(objects, "Job")["spec"]


def test_a_distributed_training_is_kais_pod_groupers_gang():
    spec = minimal(distributedFramework="PyTorch", numWorkers=2, minReplicas=1, maxReplicas=2,
                   compute={"gpuDevicesRequest": 1})
    ref = m.WorkloadRef(id="06d16c5d-4728-42fa-b573-3b11820d999f", name="d", kind="distributed", project="team-a",
                        namespace="studio-team-a")
    objects = m.build_manifests(ref, spec, master=spec, gang="scheduler-plugins", placement=Placement("team-a", "train"))
    assert [o for o in objects if o["kind"] == "PodGroup"] == []  # none of ours: KAI's pod-grouper makes it
    job = one(objects, "PyTorchJob")
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 2}  # master + minReplicas
    assert KAI_LABELS.items() <= job["metadata"]["labels"].items()
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        assert replica["template"]["spec"]["schedulerName"] == "kai-scheduler"
        assert "scheduling.x-k8s.io/pod-group" not in replica["template"]["metadata"]["labels"]


def test_without_kai_nothing_changes():
    assert build("training", minimal()) == build("training", minimal(), placement=None)
    assert "schedulerName" not in pod_template(build("training", minimal()))["spec"]


def test_the_default_node_pool_is_every_node():
    affinity = pod_template(build("training", minimal(nodePools=["default"])))["spec"].get("affinity")
    assert affinity is None
    assert pod_template(build("training", minimal(nodePools=["default", "pool-a"])))["spec"].get("affinity") is None
