"""The watcher reads its LIST pages and watch events keeping only the fields `trim` reads
(workloads.cluster.informer.KEPT, perf.kept_json): what it keeps of every object must be what it kept when it
decoded the whole text. On the cluster's own objects (kubesim here, the real API server with KWOK's nodes in
`make e2e-real`), and on objects carrying every field `trim` reads, mutated by hypothesis: keys dropped, values of
any JSON type put anywhere (a value the shape does not expect sends the text to the whole decoding)."""

import copy
import json

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kubernetes import client

from perf import kept_json
from perf.json_values import api_answer
from studio.clusters import kube
from tests.workloads.cluster_support import wait_for
from workloads.cluster import informer

JOB = ("batch/v1", "Job")
DEPLOYMENT = ("apps/v1", "Deployment")
STAMP = "2026-11-30T08:00:00Z"
NOISE = {"managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {}}}], "annotations": {"a": "b"}}

CONDITIONS = [{"type": kind, "status": "True", "reason": "R", "message": "m", "lastTransitionTime": STAMP,
               "lastProbeTime": None} for kind in ("PodScheduled", "Ready", "Initialized", "ContainersReady")]
META = {"name": "train-1-x7k2q", "namespace": "studio-p1", "uid": "u-1", "resourceVersion": "41",
        "creationTimestamp": STAMP, "deletionTimestamp": STAMP, "deletionGracePeriodSeconds": 30, "generation": 2,
        "generateName": "train-1-", "labels": {"paas-studio/workload-id": "w-1", "training.kubeflow.org/replica-type":
                                               "worker", "job-name": "train-1"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "train-1", "uid": "u-0",
                             "controller": True, "blockOwnerDeletion": True}], **NOISE}
STATUS = {"name": "main", "image": "python:3.12", "imageID": "sha256:1", "containerID": "containerd://1",
          "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
          "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}, "restartCount": 3, "ready": False,
          "started": False}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": META,
       "spec": {"nodeName": "node-1", "restartPolicy": "Never", "volumes": [{"name": "v", "emptyDir": {}}],
                "containers": [{"name": "main", "image": "python:3.12", "command": ["python"], "env": [
                    {"name": "A", "value": "1"}], "resources": {"limits": {"nvidia.com/gpu": "1"}}}],
                "initContainers": [{"name": "init", "image": "busybox", "args": ["true"]}]},
       "status": {"phase": "Pending", "reason": "Evicted", "message": "low memory", "hostIP": "10.0.0.1",
                  "hostIPs": [{"ip": "10.0.0.1"}], "podIP": "10.1.0.1", "startTime": STAMP, "qosClass": "Burstable",
                  "conditions": CONDITIONS, "containerStatuses": [STATUS, {**STATUS, "name": "side", "lastState": {}}],
                  "initContainerStatuses": [{**STATUS, "name": "init"}]}}
CONTROLLER = {"apiVersion": "batch/v1", "kind": "Job", "metadata": META,
              "spec": {"suspend": True, "replicas": 2, "parallelism": 1, "template": {"spec": POD["spec"]}},
              "status": {"active": 1, "ready": 0, "startTime": STAMP, "readyReplicas": 1,
                         "conditions": [{**c, "extra": "x"} for c in CONDITIONS]}}
EVENT = {"apiVersion": "v1", "kind": "Event", "metadata": {**META, "name": "train-1.17a"}, "type": "Warning",
         "reason": "BackOff", "message": "Back-off restarting", "lastTimestamp": STAMP, "eventTime": None,
         "firstTimestamp": STAMP, "count": 4, "source": {"component": "kubelet"},
         "involvedObject": {"kind": "Pod", "name": "train-1-x7k2q", "namespace": "studio-p1", "uid": "u-1",
                            "apiVersion": "v1", "fieldPath": "spec.containers{main}"}}
FULL = {informer.POD: POD, JOB: CONTROLLER, DEPLOYMENT: {**CONTROLLER, "apiVersion": "apps/v1", "kind": "Deployment"},
        informer.EVENT: EVENT, informer.EVICTION: {**EVENT, "reason": "Evict"}}


def _page(*objects) -> bytes:
    return orjson.dumps({"kind": "List", "metadata": {"resourceVersion": "7", "continue": "c"}, "items": objects})


def _trimmed(kind, obj, trim=informer.trim):
    """What the store keeps of `obj` (or the error trim raises on it)."""
    try:
        return trim(kind, obj)
    except Exception as exc:  # noqa: BLE001 - a value of a type trim cannot read: the same error either way
        return type(exc)


def _watched(kind, obj: dict):
    """What the store keeps of a watch event's object, as the reflector trims it (`_listed`'s counterpart)."""
    event = kept_json.watch_event(orjson.dumps({"type": "ADDED", "object": obj}), informer.kept_decoders(kind)[1])
    trim = informer.trim_kept if isinstance(event, kept_json.Kept) else informer.trim
    return _trimmed(kind, event["object"], trim)


def _listed(kind, page: bytes):
    """What the store keeps of a LIST page's one object, as the watcher's reflector trims it: in place when the page
    was decoded keeping only what `trim` reads (`informer.trim_kept`), with `trim` when it was read whole."""
    answer = api_answer(page, informer.kept_decoders(kind)[0])
    trim = informer.trim_kept if isinstance(answer, kept_json.Kept) else informer.trim
    return _trimmed(kind, answer["items"][0], trim)


def test_every_field_trim_reads_is_kept_and_the_rest_is_skipped():
    for kind, obj in FULL.items():
        lister, watcher = informer.kept_decoders(kind)
        page = kept_json.answer(_page(obj), lister)
        assert page is not None, kind
        assert page["metadata"] == {"resourceVersion": "7", "continue": "c"}
        (kept,) = page["items"]
        assert isinstance(page, kept_json.Kept), kind
        assert informer.trim(kind, kept) == informer.trim(kind, obj), kind
        assert informer.trim_kept(kind, copy.deepcopy(kept)) == informer.trim(kind, obj), kind
        assert "managedFields" not in kept["metadata"] and "annotations" not in kept["metadata"], kind
        event = kept_json.watch_event(orjson.dumps({"type": "MODIFIED", "object": obj}), watcher)
        assert event == {"type": "MODIFIED", "object": kept} and isinstance(event, kept_json.Kept), kind
    assert "volumes" not in kept_json.answer(_page(POD), informer.kept_decoders(informer.POD)[0])["items"][0]["spec"]


def test_an_error_event_is_read_whole():
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410,
              "message": "too old resource version: 1 (41)", "metadata": {}}
    line = orjson.dumps({"type": "ERROR", "object": status})
    assert kept_json.watch_event(line, informer.kept_decoders(informer.POD)[1]) == {"type": "ERROR", "object": status}


JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text(max_size=5)
                    | st.floats(allow_nan=False, allow_infinity=False),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=6)


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


@st.composite
def mutated(draw):
    """A full object of a kept kind with some of its keys dropped and some values replaced by any JSON value."""
    kind = draw(st.sampled_from(sorted(FULL)))
    obj = copy.deepcopy(FULL[kind])
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(obj) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = obj
        for part in path[:-1]:
            parent = parent[part]
        if isinstance(parent, dict) and draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON)
    return kind, obj


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_what_is_kept_of_any_object_is_what_the_whole_decoding_kept(case):
    kind, obj = case
    lister, watcher = informer.kept_decoders(kind)
    page = _page(obj)
    whole = api_answer(page)["items"][0]
    assert _trimmed(kind, api_answer(page, lister)["items"][0]) == _trimmed(kind, whole)
    assert _listed(kind, page) == _trimmed(kind, whole)
    event = kept_json.watch_event(orjson.dumps({"type": "ADDED", "object": obj}), watcher)
    assert event["type"] == "ADDED"
    assert _trimmed(kind, event["object"]) == _trimmed(kind, json.loads(json.dumps(obj)))
    assert _watched(kind, obj) == _trimmed(kind, whole)


def _with(obj: dict, path: tuple, value) -> dict:
    obj = copy.deepcopy(obj)
    parent = obj
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return obj


# Values that `trim` leaves out or turns into something else, at the places it reads: each one's LIST page,
# trimmed in place as the reflector trims it, must give what `trim` gives of the whole object.
EDGES = [(kind, path, value) for kind in (informer.POD, JOB, DEPLOYMENT) for path, value in (
    (("metadata",), None), (("metadata",), {}), (("metadata", "labels"), None), (("metadata", "labels"), {}),
    (("metadata", "labels"), {"job-name": "x"}), (("metadata", "ownerReferences"), None),
    (("metadata", "ownerReferences"), []), (("metadata", "ownerReferences"), [None, {}, {"controller": False}]),
    (("metadata", "ownerReferences"), [{"kind": "Job"}, {"controller": True}]), (("spec",), None), (("spec",), {}),
    (("status",), None), (("status",), {}), (("status", "conditions"), None), (("status", "conditions"), []),
    (("status", "conditions"), [None, {}, {"type": "Initialized"}, {"type": "Ready", "extra": 1}]))] + [
    (informer.POD, path, value) for path, value in (
        (("spec", "containers"), [{}, None, {"name": "a"}, {"image": "b", "command": ["c"]}]),
        (("spec", "containers"), []), (("spec", "nodeName"), ""), (("spec", "initContainers"), None),
        (("status", "containerStatuses"), [None, {}, {"state": {}, "lastState": {}, "ready": True, "imageID": "x"}]),
        (("status", "containerStatuses"), []), (("status", "initContainerStatuses"), None),
        (("status", "conditions"), [{"type": "PodScheduled"}, {"type": "ContainersReady"}, {"type": "Ready"}]))]


@pytest.mark.parametrize("kind, path, value", EDGES)
def test_a_page_trimmed_in_place_keeps_what_trim_keeps_of_the_whole_object(kind, path, value):
    obj = _with(FULL[kind], path, value)
    page = _page(obj)
    assert isinstance(api_answer(page, informer.kept_decoders(kind)[0]), kept_json.Kept)
    assert _listed(kind, page) == _watched(kind, obj) == _trimmed(kind, api_answer(page)["items"][0])


def _job(name: str) -> dict:
    template = {"metadata": {"labels": {"paas-studio/workload-id": name}}, "spec": {
        "restartPolicy": "Never", "initContainers": [{"name": "init", "image": "busybox", "command": ["true"]}],
        "containers": [{"name": "main", "image": "python:3.12", "command": ["sleep", "600"]}]}}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "labels": {
        "paas-studio/workload-id": name, "app.kubernetes.io/managed-by": "paas-studio"}, "annotations": {"note": "x"}},
        "spec": {"backoffLimit": 0, "template": template}}


@pytest.mark.django_db(transaction=True)
def test_the_clusters_own_objects_are_kept_as_the_whole_decoding_kept_them(cluster_org):
    conn = kube.connect(cluster_org.cluster)
    kube.namespace_ensure(conn, cluster_org.namespace)
    batch = client.BatchV1Api(cluster_org.k8s)
    for name in ("kept-a", "kept-b"):
        batch.create_namespaced_job(cluster_org.namespace, _job(name))
    wait_for(lambda: len([p for p in kube.list_objects(conn, "v1", "Pod", namespace=cluster_org.namespace)
                          if (p.get("status") or {}).get("phase") == "Running"]) == 2, timeout=60,
             what="the two pods running")
    for kind in (informer.POD, JOB, informer.EVENT):
        whole, _ = kube.list_snapshot(conn, *kind, namespace=cluster_org.namespace)
        kept, _ = kube.list_snapshot(conn, *kind, namespace=cluster_org.namespace,
                                     kept=informer.kept_decoders(kind)[0])
        assert len(kept) == len(whole) >= 2, kind
        assert [informer.trim(kind, o) for o in kept] == [informer.trim(kind, o) for o in whole], kind
        assert [informer.trim_kept(kind, copy.deepcopy(o)) for o in kept] == [informer.trim(kind, o) for o in whole]
        if kind == informer.POD:
            assert all("restartPolicy" not in o["spec"] and "command" not in o["spec"]["containers"][0]
                       for o in kept)
            assert all(o["status"]["containerStatuses"] and o["spec"]["initContainers"] for o in kept)
    # An object listed and the same object from a watch event are kept as the same text: a kind's objects are packed
    # against its first one, and one whose keys came in another order packed a third larger.
    for kind, name in ((JOB, "kept-a"), (informer.POD, None)):
        (listed,), version = kube.list_snapshot(
            conn, *kind, namespace=cluster_org.namespace, kept=informer.kept_decoders(kind)[0],
            label_selector="paas-studio/workload-id=kept-a",
            each_page=lambda page, kept, kind=kind: [informer.trim_kept(kind, o) if kept else None for o in page])
        name = name or listed["metadata"]["name"]
        touch = batch.patch_namespaced_job if kind == JOB else client.CoreV1Api(cluster_org.k8s).patch_namespaced_pod
        touch(name, cluster_org.namespace, {"metadata": {"labels": {"touched": "yes"}}})  # as the cluster's admin
        (again,), _ = kube.list_snapshot(
            conn, *kind, namespace=cluster_org.namespace, kept=informer.kept_decoders(kind)[0],
            label_selector="paas-studio/workload-id=kept-a",
            each_page=lambda page, kept, kind=kind: [informer.trim_kept(kind, o) if kept else None for o in page])
        # the watch's event of the version listed (the cluster may have changed the object meanwhile too)
        event = next(e for e in kube.watch_stream(
            conn, *kind, resource_version=version, namespace=cluster_org.namespace, timeout_seconds=10,
            label_selector="paas-studio/workload-id=kept-a", kept=informer.kept_decoders(kind)[1])
            if e["object"]["metadata"]["resourceVersion"] == again["metadata"]["resourceVersion"])
        assert event["type"] == "MODIFIED" and event["kept"], kind
        assert orjson.dumps(informer.trim_kept(kind, event["object"])) == orjson.dumps(again), kind


@pytest.mark.parametrize("text", [b'{"items": [{"metadata": "not an object"}]}', b'{"items": [1, null]}'])
def test_a_page_the_shape_does_not_fit_is_read_whole(text):
    answer = api_answer(text, informer.kept_decoders(informer.POD)[0])
    assert answer == json.loads(text) and not isinstance(answer, kept_json.Kept)
