"""The watcher's store keeps what it holds packed (workloads.cluster.informer.Store): at 100,000 workloads the
difference between a few hundred MiB and gigabytes (docs/performance.md). Measured with tracemalloc, on the objects
the reflectors give it, one watch event at a time."""

import json
import tracemalloc
import uuid

from workloads.cluster import informer

COUNT = 5_000


def _warning(i: int) -> dict:
    job = f"train-{i}-{uuid.UUID(int=i + 1).hex[-8:]}"
    return {"apiVersion": "v1", "kind": "Event", "type": "Warning", "reason": "DeadlineExceeded",
            "message": "Job was active longer than specified deadline", "lastTimestamp": "2026-11-29T08:00:00Z",
            "metadata": {"name": f"{job}.{i:016x}", "namespace": f"studio-p{i % 20}", "uid": str(uuid.uuid4()),
                         "resourceVersion": str(10_000 + i), "creationTimestamp": "2026-11-29T08:00:00Z",
                         "managedFields": [{"manager": "job-controller", "operation": "Update"}]},
            "involvedObject": {"kind": "Job", "name": job, "namespace": f"studio-p{i % 20}",
                               "uid": str(uuid.uuid4()), "apiVersion": "batch/v1"},
            "source": {"component": "job-controller"}, "count": 1, "reportingComponent": "job-controller"}


def _bytes_each(store: informer.Store, kind: tuple, objects: list[dict]) -> float:
    """What the store holds more per object, each decoded from its JSON text as a watch event's is."""
    texts = [json.dumps(obj) for obj in objects]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for text in texts:
            store.apply(kind, "ADDED", store.pack(kind, informer.trim(kind, json.loads(text))))
        return (tracemalloc.get_traced_memory()[0] - before) / len(texts)
    finally:
        tracemalloc.stop()


def test_a_burst_of_warning_events_is_kept_in_a_few_hundred_bytes_each_and_read_back_whole():
    store = informer.Store()
    events = [_warning(i) for i in range(COUNT)]
    each = _bytes_each(store, informer.EVENT, events)
    # Kept as dicts: 1,891 bytes each with their buckets (a burst of 10,000 failed Jobs: 18 MiB); packed: ~510.
    assert each < 600, f"{each:.0f} bytes per Warning event"
    _, _, warnings, _ = store.view()  # no workload holds their Jobs: read them by the Jobs' names instead
    assert warnings == {}
    store.apply(("batch/v1", "Job"), "ADDED", store.pack(("batch/v1", "Job"), {
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": events[7]["involvedObject"]["name"], "namespace": events[7]["involvedObject"]["namespace"],
            "resourceVersion": "1", "labels": {"paas-studio/workload-id": "w7"}}}))
    _, _, warnings, _ = store.view({"w7"})
    key = (events[7]["involvedObject"]["namespace"], events[7]["involvedObject"]["name"])
    assert warnings == {key: [informer.trim(informer.EVENT, events[7])]}


def test_a_workloads_job_and_pod_are_kept_in_under_a_kilobyte():
    """bench.store_memory's objects (a Job and its running pod, as the simulated cluster serves them) through the
    reflectors' path: trimmed, packed, kept under one string key each."""
    from bench.store_memory import JOB, POD, _object

    store = informer.Store()
    jobs = [_object(JOB, i, pod=False) for i in range(COUNT)]
    pods = [_object(POD, i, pod=True) for i in range(COUNT)]
    each = (_bytes_each(store, ("batch/v1", "Job"), jobs) + _bytes_each(store, informer.POD, pods))
    # 1,002 bytes with (namespace, name) tuples as keys, ~890 with one string (docs/performance.md).
    assert each < 950, f"{each:.0f} bytes per workload"
    objects, pods_seen, _, _ = store.view({jobs[3]["metadata"]["labels"]["paas-studio/workload-id"]})
    assert [p["metadata"]["name"] for found in pods_seen.values() for p in found] == [pods[3]["metadata"]["name"]]
    assert [j["metadata"]["name"] for found in objects.values() for j in found[("batch/v1", "Job")]] == \
        [jobs[3]["metadata"]["name"]]


def test_a_lists_page_is_packed_in_one_call_into_the_entries_its_objects_get_one_by_one():
    """The reflectors pack a LIST's page at once (`Store.pack_page`: one compression call, one release of the GIL);
    each object must get the entry it gets alone, events their kept flag, and read back whole."""
    from bench.store_memory import JOB, POD, _object

    for kind, objects in ((informer.POD, [_object(POD, i, pod=True) for i in range(50)]),
                          (("batch/v1", "Job"), [_object(JOB, i, pod=False) for i in range(50)]),
                          (informer.EVENT, [_warning(i) for i in range(50)] + [{**_warning(50), "type": "Normal"}])):
        trimmed = [informer.trim(kind, obj) for obj in objects]
        alone, paged = informer.Store(), informer.Store()
        one_by_one = [alone.pack(kind, obj) for obj in trimmed]
        page = paged.pack_page(kind, trimmed)
        assert page == one_by_one, kind
        paged.replace(kind, None, page)
        if kind != informer.EVENT:
            wid = trimmed[7]["metadata"]["labels"]["paas-studio/workload-id"]
            objects_seen, pods_seen, _, _ = paged.view({wid})
            read = [o for kinds in objects_seen.values() for found in kinds.values() for o in found]
            assert trimmed[7] in read + [p for found in pods_seen.values() for p in found], kind
    assert informer.Store().pack_page(informer.POD, []) == []
