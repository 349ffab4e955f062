"""`python -m bench.store_memory [N]`: the cluster watcher's store (workloads.cluster.informer.Store) alone, filled
with N workloads' objects as the simulated cluster serves them (a Job and its running pod each, in 20 namespaces
on 200 nodes), as the reflectors fill it, a LIST page at a time; the process's RSS before and after, then after a
view of every workload (a full pass's decoding, all at once) and after the freed memory is given back."""

import copy
import gc
import sys
import uuid

from bench import env

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
    "name": "", "namespace": "", "uid": "", "resourceVersion": "", "creationTimestamp": "", "generation": 1,
    "labels": {"paas-studio/workload-id": "", "app.kubernetes.io/managed-by": "paas-studio"}},
    "spec": {"suspend": False, "template": {"spec": {"containers": [{"name": "main", "image": "python:3.12"}]}}},
    "status": {"terminating": 0, "startTime": "", "active": 1, "ready": 1, "uncountedTerminatedPods": {}}}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "", "namespace": "", "uid": "", "resourceVersion": "", "creationTimestamp": "", "generation": 1,
    "labels": {"paas-studio/workload-id": ""}, "ownerReferences": [{"controller": True, "kind": "Job"}]},
    "spec": {"nodeName": "", "containers": [{"name": "main", "image": "python:3.12"}]},
    "status": {"phase": "Running", "hostIP": "172.18.0.2", "startTime": "", "conditions": [
        {"type": "Ready", "status": "True", "lastTransitionTime": ""},
        {"type": "PodScheduled", "status": "True", "lastTransitionTime": ""}],
        "containerStatuses": [{"name": "main", "image": "python:3.12", "state": {"running": {"startedAt": ""}},
                               "restartCount": 0, "ready": True}]}}
PAGE = 500


def _rss() -> str:
    found = dict(line.split(":", 1) for line in open("/proc/self/status") if line.startswith(("VmRSS", "VmHWM")))
    return f"RSS {int(found['VmRSS'].split()[0]) / 1024:.0f} MiB (peak {int(found['VmHWM'].split()[0]) / 1024:.0f})"


def _object(template: dict, i: int, *, pod: bool) -> dict:
    obj = copy.deepcopy(template)
    wid, stamp = str(uuid.UUID(int=i + 1)), f"2026-11-29T08:{i // 60 % 60:02d}:{i % 60:02d}Z"
    meta = obj["metadata"]
    meta.update(name=f"train-{i}-{wid[-8:]}" + ("-x7k2q" if pod else ""), namespace=f"studio-p{i % 20}",
                uid=str(uuid.uuid4()), resourceVersion=str(1000 + i), creationTimestamp=stamp)
    meta["labels"]["paas-studio/workload-id"] = wid
    obj["status"]["startTime"] = stamp
    if pod:
        obj["spec"]["nodeName"] = f"sim-node-{i % 200}"
        for condition in obj["status"]["conditions"]:
            condition["lastTransitionTime"] = stamp
        obj["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = stamp
    return obj


def main(size: int) -> None:
    env.setup_django()
    from perf.malloc_trim import release_free_memory
    from workloads.cluster import informer

    print(f"before: {_rss()}", flush=True)
    store = informer.Store()
    for kind, template in ((("batch/v1", "Job"), JOB), (informer.POD, POD)):
        listed = []
        for start in range(0, size, PAGE):
            page = [_object(template, i, pod=kind == informer.POD) for i in range(start, min(size, start + PAGE))]
            listed.extend(store.pack(kind, informer.trim(kind, obj)) for obj in page)
        store.replace(kind, None, listed)
        del listed
    store.take_dirty()
    gc.collect()
    print(f"{size:,} workloads in the store ({store.size()['bytes'] / 2**20:.0f} MiB packed): {_rss()}", flush=True)
    store.view(None)
    gc.collect()
    print(f"after a view of every workload: {_rss()}", flush=True)
    release_free_memory()
    print(f"after giving the freed memory back: {_rss()}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
