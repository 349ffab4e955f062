"""The watcher's store keeps what it holds packed (workloads.cluster.informer.Store): at 100,000 workloads the
difference between a few hundred MiB and gigabytes (docs/performance.md). Measured with tracemalloc, on the objects
the reflectors give it, one watch event at a time."""

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
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for obj in objects:
            store.apply(kind, "ADDED", store.pack(kind, informer.trim(kind, obj)))
        return (tracemalloc.get_traced_memory()[0] - before) / len(objects)
    finally:
        tracemalloc.stop()


def test_a_burst_of_warning_events_is_kept_in_a_few_hundred_bytes_each_and_read_back_whole():
    store = informer.Store()
    events = [_warning(i) for i in range(COUNT)]
    each = _bytes_each(store, informer.EVENT, events)
    # Kept as dicts they took 1.7 KiB each, plus their buckets (a burst of 10,000 failed Jobs: ~19 MiB).
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
