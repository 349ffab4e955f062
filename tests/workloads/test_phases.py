"""workloads.cluster.phases: observed objects -> (actualPhase, phaseMessage). Objects are shaped as the API server,
the Job/Deployment controllers, the kubelet and Knative write them."""

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workloads.cluster.phases import DELETED, MISSING, PHASES, Observed, derive_phase, pod_summary

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
LONG_AGO = "2024-05-01T11:50:00Z"  # past the image pull grace
JUST_NOW = "2024-05-01T11:59:30Z"
UNSCHEDULABLE = ("0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: "
                 "4 No preemption victims found for incoming pod.")
PULL_ERROR = ('rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/pyhton:3.8": '
              'failed to resolve reference "docker.io/library/pyhton:3.8": not found')
QUOTA = ('pods "w-7d9c8b-" is forbidden: exceeded quota: gpu, requested: requests.nvidia.com/gpu=1, '
         'used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4')


def cond(kind, status, reason=None, message=None, at=LONG_AGO):
    c = {"type": kind, "status": status, "lastProbeTime": None, "lastTransitionTime": at}
    return {**c, **({"reason": reason} if reason else {}), **({"message": message} if message else {})}


def container_status(state, *, ready=False, restarts=0, last=None, name="main"):
    status = {"name": name, "state": state, "ready": ready, "restartCount": restarts, "image": "python:3.8",
              "imageID": "", "started": "running" in state}
    if last:
        status["lastState"] = {"terminated": last}
    return status


def pod(phase="Pending", *, scheduled=True, ready=False, containers=(), init=(), deleting=False, at=LONG_AGO,
        reason=None, message=None):
    conditions = []
    if scheduled is False:
        conditions.append(cond("PodScheduled", "False", "Unschedulable", UNSCHEDULABLE, at))
    elif scheduled:
        conditions += [cond("Initialized", "True" if not init else "False", at=at), cond("PodScheduled", "True", at=at),
                       cond("Ready", "True" if ready else "False", None if ready else "ContainersNotReady", at=at)]
    metadata = {"name": "w-06d16c5d-x7k2p", "namespace": "studio-team-a", "uid": "8f7e6d5c-0000-4000-8000-000000000001",
                "creationTimestamp": at}
    if deleting:
        metadata["deletionTimestamp"] = NOW.isoformat()
    status = {"phase": phase, "conditions": conditions, "qosClass": "Burstable"}
    if containers:
        status["containerStatuses"] = list(containers)
    if init:
        status["initContainerStatuses"] = list(init)
    status.update({k: v for k, v in (("reason", reason), ("message", message)) if v})
    spec = {"containers": [{"name": "main", "image": "python:3.8"}]}
    if scheduled:
        spec["nodeName"] = "gpu-node-1"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def waiting(reason, message=None, **kw):
    return container_status({"waiting": {"reason": reason, **({"message": message} if message else {})}}, **kw)


RUNNING_STATE = {"running": {"startedAt": LONG_AGO}}
CREATED = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "w-x", "creationTimestamp": JUST_NOW},
           "spec": {}, "status": {"phase": "Pending", "qosClass": "Burstable"}}
UNSCHED = pod(scheduled=False)
CREATING = pod(containers=[waiting("ContainerCreating")])
INIT_GIT = pod(init=[container_status({"running": {"startedAt": LONG_AGO}}, name="git-clone-0")],
               containers=[waiting("PodInitializing")])
RUNNING = pod("Running", containers=[container_status(RUNNING_STATE)])
READY = pod("Running", ready=True, containers=[container_status(RUNNING_STATE, ready=True)])
PULL_FAILED = pod(containers=[waiting("ErrImagePull", PULL_ERROR)])
PULL_BACKOFF = pod(containers=[waiting("ImagePullBackOff", 'Back-off pulling image "pyhton:3.8"')])
PULL_FRESH = pod(containers=[waiting("ErrImagePull", PULL_ERROR)], at=JUST_NOW)
BAD_NAME = pod(containers=[waiting("InvalidImageName", 'Failed to apply default image tag "Py:3": invalid')],
               at=JUST_NOW)
CRASHING = pod("Running", containers=[waiting(
    "CrashLoopBackOff", "back-off 1m20s restarting failed container=main pod=w-06d16c5d-x7k2p_studio-team-a(8f7e)",
    restarts=4, last={"exitCode": 1, "reason": "Error", "startedAt": LONG_AGO, "finishedAt": LONG_AGO})])
CRASHED_ONCE = pod("Running", containers=[waiting("CrashLoopBackOff", "back-off 10s restarting failed container",
                                                  restarts=1)])
SUCCEEDED = pod("Succeeded", containers=[container_status(
    {"terminated": {"exitCode": 0, "reason": "Completed", "startedAt": LONG_AGO, "finishedAt": LONG_AGO}})])
TERMINATING = pod("Running", ready=True, containers=[container_status(RUNNING_STATE, ready=True)], deleting=True)
LOST = pod("Unknown", reason="NodeLost", message="Node gpu-node-1 which was running pod w is unresponsive")


def job(*conditions, suspend=False, parallelism=1, **status):
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "w-06d16c5d", "namespace": "studio-team-a", "generation": 1},
            "spec": {"parallelism": parallelism, "completions": parallelism, "backoffLimit": 3, "suspend": suspend},
            "status": {"conditions": list(conditions), **status} if conditions or status else {}}


def deployment(replicas=1, *conditions, ready=0):
    status = {"observedGeneration": 1, "replicas": replicas, "readyReplicas": ready, "conditions": list(conditions)}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w-06d16c5d", "generation": 1},
            "spec": {"replicas": replicas}, "status": status}


def knative(ready=None, reason=None, message=None, min_scale="0"):
    annotations = {"autoscaling.knative.dev/min-scale": min_scale, "autoscaling.knative.dev/max-scale": "2"}
    svc = {"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"name": "w-06d16c5d"},
           "spec": {"template": {"metadata": {"annotations": annotations}, "spec": {"containers": [{}]}}}}
    if ready:
        svc["status"] = {"observedGeneration": 1, "conditions": [
            cond("ConfigurationsReady", ready, reason, message), cond("Ready", ready, reason, message),
            cond("RoutesReady", ready, reason, message)]}
    return svc


def event(reason, message, at=LONG_AGO):
    return {"apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": reason, "message": message,
            "involvedObject": {"kind": "Job", "name": "w-06d16c5d"}, "lastTimestamp": at, "count": 3}


COMPLETE = cond("Complete", "True")
FAILED = cond("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
FAILURE_TARGET = cond("FailureTarget", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
REPLICA_FAILURE = cond("ReplicaFailure", "True", "FailedCreate", QUOTA)

T, W, INF, S = "training", "workspace", "inference", "stream"
ROWS = [
    # (kind, desired, previous, primary, pods, events, phase, message or a part of it)
    (T, "Running", "Creating", None, [], [], "Creating", ""),
    (T, "Running", "", None, [], [], "Creating", ""),
    (T, "Running", "Running", None, [], [], "Creating", MISSING),
    (T, "Running", "Creating", job(), [], [], "Pending", "Waiting for pods to be created"),
    (T, "Running", "Pending", job(), [], [event("FailedCreate", QUOTA)], "Pending", "FailedCreate: " + QUOTA),
    (T, "Running", "Pending", job(), [CREATED], [], "Pending", "Waiting for pods to be scheduled"),
    (T, "Running", "Pending", job(), [UNSCHED], [], "Pending", UNSCHEDULABLE),
    (T, "Running", "Pending", job(), [CREATING], [], "Initializing", "ContainerCreating"),
    (T, "Running", "Pending", job(), [CREATING], [event("FailedMount", 'MountVolume.SetUp failed for volume "s3-0"')],
     "Initializing", "FailedMount: MountVolume.SetUp failed"),
    (T, "Running", "Pending", job(), [INIT_GIT], [], "Initializing", "PodInitializing"),
    (T, "Running", "Initializing", job(), [RUNNING], [], "Running", ""),
    (T, "Running", "Running", job(parallelism=2), [READY, UNSCHED], [], "Degraded", "1/2 pods ready: 0/4 nodes"),
    (T, "Running", "Running", job(COMPLETE, succeeded=1), [SUCCEEDED], [], "Completed", ""),
    (T, "Running", "Running", job(cond("SuccessCriteriaMet", "True")), [SUCCEEDED], [], "Completed", ""),
    (T, "Running", "Running", job(FAILED, failed=4), [], [], "Failed",
     "BackoffLimitExceeded: Job has reached the specified backoff limit"),
    (T, "Running", "Running", job(FAILURE_TARGET), [TERMINATING], [], "Failed", "BackoffLimitExceeded"),
    (T, "Running", "Initializing", job(), [PULL_FAILED], [], "Failed", "ErrImagePull: " + PULL_ERROR),
    (T, "Running", "Initializing", job(), [PULL_FRESH], [], "Initializing", "ErrImagePull: "),
    (T, "Running", "Initializing", job(), [BAD_NAME], [], "Failed", "InvalidImageName: "),
    (T, "Running", "Running", job(failed=1), [pod("Failed", reason="Error")], [], "Pending",
     "Restarting after 1 failed attempt(s)"),
    (T, "Running", "Completed", None, [], [], "Completed", ""),  # removed by ttlSecondsAfterFinished
    (T, "Running", "Failed", None, [], [], "Failed", ""),
    (T, "Running", "Failed", job(), [RUNNING], [], "Failed", ""),
    (T, "Stopped", "Running", job(), [RUNNING], [], "Stopping", "Waiting for 1 pod(s) to stop"),
    (T, "Stopped", "Stopping", job(suspend=True), [TERMINATING], [], "Stopping", "Waiting for 1 pod(s) to stop"),
    (T, "Stopped", "Stopping", job(cond("Suspended", "True", "JobSuspended", "Job suspended"), suspend=True),
     [SUCCEEDED], [], "Stopped", ""),
    (T, "Stopped", "Running", job(COMPLETE), [SUCCEEDED], [], "Completed", ""),
    (T, "Running", "Stopped", job(suspend=True), [], [], "Resuming", "Job is suspended"),
    (T, "Running", "Resuming", job(), [UNSCHED], [], "Resuming", UNSCHEDULABLE),
    (T, "Running", "Resuming", job(), [RUNNING], [], "Running", ""),
    (T, "Deleted", "Running", job(), [], [], "Deleting", "Waiting for the Job to be deleted"),
    (T, "Deleted", "Deleting", None, [TERMINATING], [], "Deleting", "Waiting for 1 pod(s) to terminate"),
    (T, "Deleted", "Deleting", None, [SUCCEEDED], [], DELETED, ""),
    (W, "Running", "Initializing", deployment(1, ready=1), [READY], [], "Running", ""),
    (W, "Running", "Initializing", deployment(), [RUNNING], [], "Initializing", "Waiting for the readiness probe"),
    (W, "Running", "Running", deployment(), [RUNNING], [], "Degraded", "Waiting for the readiness probe"),
    (W, "Running", "Running", deployment(), [TERMINATING, CREATING], [], "Degraded", "ContainerCreating"),
    (W, "Running", "Initializing", deployment(), [PULL_BACKOFF], [], "Failed", "ImagePullBackOff: Back-off pulling"),
    (W, "Running", "Running", deployment(), [CRASHING], [], "Failed",
     "CrashLoopBackOff: back-off 1m20s restarting failed container=main"),
    (W, "Running", "Running", deployment(), [CRASHING], [], "Failed", "(last exit code 1, Error)"),
    (W, "Running", "Running", deployment(2, ready=1), [READY, CRASHING], [], "Degraded", "CrashLoopBackOff"),
    (W, "Running", "Initializing", deployment(), [CRASHED_ONCE], [], "Initializing", "CrashLoopBackOff: back-off 10s"),
    (W, "Running", "Failed", deployment(1, ready=1), [READY], [], "Running", ""),  # a Deployment recovers
    (W, "Running", "Pending", deployment(1, REPLICA_FAILURE), [], [], "Pending", "FailedCreate: " + QUOTA),
    (W, "Running", "Running", deployment(), [LOST], [], "Unknown", "NodeLost"),
    (W, "Stopped", "Stopping", deployment(0), [], [], "Stopped", ""),
    (W, "Stopped", "Running", deployment(1), [READY], [], "Stopping", "Waiting for 1 pod(s) to stop"),
    (W, "Running", "Stopped", deployment(0), [], [], "Resuming", "Scaling up"),
    (W, "Running", "Resuming", deployment(1), [CREATING], [], "Resuming", "ContainerCreating"),
    (W, "Deleted", "Running", deployment(), [READY], [], "Deleting", "Waiting for 1 pod(s) to terminate"),
    (S, "Running", "Initializing", deployment(1, ready=1), [READY], [], "Running", ""),
    (INF, "Running", "Initializing", deployment(2, ready=2), [READY, READY], [], "Running", ""),
    (INF, "Running", "Creating", knative(), [], [], "Pending", "Waiting for pods to be created"),
    (INF, "Running", "Pending", knative("Unknown", "RevisionMissing", 'Configuration "w" does not have any ready Revision.'),
     [CREATING], [], "Initializing", "ContainerCreating"),
    (INF, "Running", "Initializing", knative("Unknown", "RevisionMissing"), [READY], [], "Initializing", "RevisionMissing"),
    (INF, "Running", "Initializing", knative("True"), [READY], [], "Running", ""),
    (INF, "Running", "Running", knative("True"), [], [], "Running", "Scaled to zero"),
    (INF, "Running", "Running", knative("True", min_scale="1"), [], [], "Running", ""),
    (INF, "Running", "Initializing", knative("False", "RevisionFailed",
                                           'Revision "w-00001" failed with message: Unable to fetch image "pyhton:3.8"'),
     [], [], "Failed", "RevisionFailed: Revision \"w-00001\" failed"),
    (INF, "Running", "Pending", knative("False", "RevisionFailed", f'Revision "w-00001" failed with message: {UNSCHEDULABLE}'),
     [UNSCHED], [], "Pending", "Insufficient nvidia.com/gpu"),
    (INF, "Running", "Running", knative("False", "RevisionFailed", "Container failed with: exit 1"), [CRASHING], [],
     "Degraded", "Container failed"),
    (INF, "Running", "Initializing", knative("Unknown", "Deploying"), [PULL_FAILED], [], "Failed", "ErrImagePull"),
    (INF, "Deleted", "Running", None, [], [], DELETED, ""),
]


@pytest.mark.parametrize(("kind", "desired", "previous", "primary", "pods", "events", "phase", "message"), ROWS,
                         ids=[f"{i}-{r[0]}-{r[2] or 'new'}-to-{r[6]}" for i, r in enumerate(ROWS)])
def test_derive_phase(kind, desired, previous, primary, pods, events, phase, message):
    got = derive_phase(kind, desired, previous, Observed(primary=primary, pods=pods, events=events), now=NOW)
    assert got[0] == phase
    assert (got[1] == message) if message == "" else (message in got[1]), got[1]


def test_image_pull_failure_waits_for_the_grace_period():
    fresh = Observed(primary=job(), pods=[PULL_FRESH])
    assert derive_phase("training", "Running", "Initializing", fresh, now=NOW)[0] == "Initializing"
    later = datetime(2024, 5, 1, 12, 5, tzinfo=UTC)
    assert derive_phase("training", "Running", "Initializing", fresh, now=later)[0] == "Failed"


def test_naive_now_is_taken_as_utc():
    naive = datetime(2024, 5, 1, 12, 0)
    assert derive_phase("training", "Running", "", Observed(job(), [PULL_FRESH]), now=naive)[0] == "Initializing"


def test_newest_scheduling_event_explains_a_pending_pod_without_condition_message():
    bare = pod(scheduled=None)
    bare["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    events = [event("FailedScheduling", "0/2 nodes are available: old.", "2024-05-01T11:00:00Z"),
              event("FailedScheduling", "0/2 nodes are available: new.", "2024-05-01T11:58:00Z")]
    result = derive_phase("workspace", "Running", "Pending", Observed(deployment(), [bare], events), now=NOW)
    assert result == ("Pending", "Unschedulable")
    del bare["status"]["conditions"][0]["reason"]
    result = derive_phase("workspace", "Running", "Pending", Observed(deployment(), [bare], events), now=NOW)
    assert result == ("Pending", "0/2 nodes are available: new.")


def test_pod_summary():
    assert pod_summary(READY, now=NOW) == {"id": "8f7e6d5c-0000-4000-8000-000000000001", "name": "w-06d16c5d-x7k2p",
                                           "phase": "Running", "nodeName": "gpu-node-1", "createdAt": LONG_AGO,
                                           "message": "", "role": ""}
    summary = pod_summary(UNSCHED, now=NOW)
    assert (summary["phase"], summary["nodeName"], summary["message"]) == ("Pending", None, UNSCHEDULABLE)
    assert pod_summary(PULL_FAILED, now=NOW)["message"] == "ErrImagePull: " + PULL_ERROR
    assert pod_summary({}) == {"id": "", "name": "", "phase": "Pending", "nodeName": None, "createdAt": None,
                               "message": "", "role": ""}
    worker = {**READY, "metadata": {**READY["metadata"], "labels": {"training.kubeflow.org/replica-type": "worker"}}}
    assert pod_summary(worker, now=NOW)["role"] == "worker"


# --- property: any partial object gives a phase of the enum ------------------------------------------

KEYS = ["apiVersion", "kind", "metadata", "spec", "status", "conditions", "type", "reason", "message", "phase",
        "containerStatuses", "initContainerStatuses", "state", "waiting", "running", "terminated", "lastState",
        "restartCount", "exitCode", "replicas", "suspend", "deletionTimestamp", "creationTimestamp", "nodeName",
        "lastTransitionTime", "lastTimestamp", "startTime", "annotations", "template", "failed", "name", "uid"]
VALUES = ["True", "False", "Unknown", "Running", "Pending", "Succeeded", "Failed", "Complete", "Ready",
          "PodScheduled", "ReplicaFailure", "FailureTarget", "ErrImagePull", "ImagePullBackOff", "InvalidImageName",
          "CrashLoopBackOff", "Warning", "FailedScheduling", "FailedCreate", "FailedMount", "ContainerCreating",
          "serving.knative.dev/v1", "batch/v1", "2024-05-01T11:00:00Z", "0001-01-01T00:00:00+23:59",
          "9999-12-31T23:59:59-23:59", "not a time", "autoscaling.knative.dev/min-scale"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 10), st.floats(allow_nan=True), st.text(max_size=5),
                    st.sampled_from(VALUES))
json_like = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=5)), max_leaves=25)
objects = st.dictionaries(st.sampled_from(KEYS), json_like, max_size=6)
phases = st.sampled_from(sorted(PHASES) + ["", "Deleted", "nonsense"])


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["training", "workspace", "inference", "stream", "other"]),
       desired=st.sampled_from(["Running", "Stopped", "Deleted", "bogus"]), previous=phases,
       primary=st.one_of(st.none(), objects, json_like), pods=st.one_of(st.lists(objects, max_size=3), json_like),
       events=st.one_of(st.lists(objects, max_size=3), json_like),
       now=st.one_of(st.none(), st.datetimes(), st.datetimes(timezones=st.just(UTC))))
def test_any_partial_observation_gives_a_contract_phase(kind, desired, previous, primary, pods, events, now):
    phase, message = derive_phase(kind, desired, previous, Observed(primary=primary, pods=pods, events=events), now=now)
    assert phase in PHASES | {DELETED}
    assert isinstance(message, str)


@settings(max_examples=200, deadline=None)
@given(objects)
def test_pod_summary_of_any_partial_pod(raw):
    summary = pod_summary(raw, now=NOW)
    assert set(summary) == {"id", "name", "phase", "nodeName", "createdAt", "message", "role"}
    assert isinstance(summary["message"], str)
