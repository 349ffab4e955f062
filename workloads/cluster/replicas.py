"""A distributed training's replicas by role, as its page shows them: each role the job asks for (master first),
how many pods it wants, and its pods as the sync last saw them (by the operator's `replica-type` label)."""

from workloads.manifests.distributed import framework_of, replica_counts
from workloads.specs.distributed import master_spec_of


def replicas_by_role(workload, pods) -> list[dict]:
    """[{"role": "master", "wanted": 1, "running": 1, "pods": [Pod, …]}, …] for the job's replica types."""
    counts = replica_counts(workload.spec or {}, master_spec_of(workload.request or {"spec": workload.spec}))
    fw = framework_of(workload.spec or {})
    order = sorted(counts, key=lambda t: t != fw.master)
    rows = []
    for rtype in order:
        mine = [p for p in pods if p.role == rtype.lower()]
        rows.append({"role": rtype.lower(), "wanted": counts[rtype], "pods": mine,
                     "running": sum(1 for p in mine if p.phase == "Running"),
                     "succeeded": sum(1 for p in mine if p.phase == "Succeeded")})
    return rows
