"""The scheduler adapter's pure part (docs/scheduling.md): how Run:ai's organisation maps onto KAI Scheduler.

- each node pool is its own KAI scheduling shard: the pool's nodes, queues and pod groups carry KAI's partition
  label `kai.scheduler/node-pool=<pool>` (the default pool: no label, KAI's default shard), and a shard's
  scheduler sees only its own, so each pool's quotas are enforced apart;
- in every pool where a project has quota, the project has a Queue (`<project>` in the default pool,
  `<project>.<pool>` in another), a child of its department's Queue in that pool (`<department>.department`,
  `<department>.department.<pool>`), with the GPU (and CPU/memory, where set) deserved, limit and over-quota
  weight of that pool's entry of Run:ai's per-node-pool `resources`;
- a workload's pods carry the queue of the pool it is placed in, that pool's partition label, KAI's scheduler
  name and Run:ai's priority class (as the `priorityClassName` label KAI's pod-grouper reads: a class the cluster
  lacks never refuses a pod);
- a Queue's status (what KAI's queue controller writes) in Run:ai's units (GPUs, CPU millicores, memory MB).
Plain values in, plain dicts out: no models, no client.
"""

from __future__ import annotations

from dataclasses import dataclass

from studio.clusters.quantities import parse_quantity

QUEUE = ("scheduling.run.ai/v2", "Queue")
POD_GROUP = ("scheduling.run.ai/v2alpha2", "PodGroup")
KAI_GROUP = "scheduling.run.ai"
SCHEDULER_NAME = "kai-scheduler"
QUEUE_LABEL = "kai.scheduler/queue"
PRIORITY_LABEL = "priorityClassName"
POOL_LABEL = "kai.scheduler/node-pool"  # KAI's partition label (its default `--nodepool-label-key`)
SHARD = ("kai.scheduler/v1", "SchedulingShard")
SHARD_GROUP = "kai.scheduler"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "paas-studio"
ORG_UNIT_LABEL = "paas-studio/org-unit"  # project | department
UNLIMITED = -1
DEPARTMENT_SUFFIX = ".department"  # project names are DNS labels (no dots): never a project's queue name
# Run:ai's memory units in MB (KAI's queue unit).
MB_PER_UNIT = {"MB": 1.0, "Mib": 1.048576, "GB": 1000.0}
# Run:ai's priority classes (workloads.runai_fields.PRIORITY) as KAI installs them: below 100 may be preempted.
# Run:ai's `interactive-preemptible` is KAI's `build-preemptible` (75).
KAI_CLASS = {"interactive-preemptible": "build-preemptible"}
PREEMPTIBLE = {"train": True, "build-preemptible": True, "build": False, "inference": False}


@dataclass(frozen=True)
class Placement:
    """What a workload's pods carry on a KAI cluster (workloads.manifests)."""

    queue: str
    priority_class: str  # Run:ai's name
    scheduler_name: str = SCHEDULER_NAME
    pool: str | None = None  # the node pool's shard; None: the default pool (KAI's default shard)

    @property
    def kai_class(self) -> str:
        return KAI_CLASS.get(self.priority_class, self.priority_class)

    @property
    def preemptible(self) -> bool | None:
        """None for a class of the cluster's own: KAI decides by its value."""
        return PREEMPTIBLE.get(self.kai_class)

    def labels(self) -> dict[str, str]:
        labels = {QUEUE_LABEL: self.queue, PRIORITY_LABEL: self.kai_class}
        if self.pool:
            labels[POOL_LABEL] = self.pool
        if self.preemptible is not None:
            labels[PREEMPTIBILITY_LABEL] = "preemptible" if self.preemptible else "non-preemptible"
        return labels


def project_queue(project_name: str, pool: str | None = None) -> str:
    """The project's queue in `pool` (None: the default pool). Project and pool names are DNS labels: no dots."""
    return f"{project_name}.{pool}" if pool else project_name


def department_queue(department_name: str, pool: str | None = None) -> str:
    return f"{department_name}{DEPARTMENT_SUFFIX}" + (f".{pool}" if pool else "")


def pool_entries(resources, pool: str, *, is_default: bool) -> list[dict]:
    """The entries of Run:ai's per-node-pool `resources` for `pool` (an entry naming no pool is the default's)."""
    return [e for e in resources or () if isinstance(e, dict)
            and ((e.get("nodePool") or {}).get("name") or None) in ((pool, None) if is_default else (pool,))]


def quota_pools(resources) -> list[str]:
    """The pools named in `resources`, in their order."""
    return list(dict.fromkeys((e.get("nodePool") or {}).get("name") for e in resources or ()
                              if isinstance(e, dict) and (e.get("nodePool") or {}).get("name")))


# --- quotas -> a queue's resources ----------------------------------------------------------------------------

def _amount(value, factor: float = 1.0) -> float | None:
    if value is None:
        return None
    number = float(value)
    return UNLIMITED if number < 0 else number * factor


def _summed(entries: list[dict], kind: str, field: str, factor_of) -> float | None:
    """The sum of one field over the pools; UNLIMITED if any pool says -1 (or, for a limit, leaves it out while
    another sets one: no limit in that pool); None when no pool sets it."""
    values = []
    for entry in entries:
        quota = entry.get(kind) or {}
        value = quota.get(field)
        values.append(_amount(value, factor_of(quota)) if value is not None else None)
    given = [v for v in values if v is not None]
    if not given:
        return None
    if UNLIMITED in given or (field == "limit" and None in values):
        return UNLIMITED
    return sum(given)


def _weight(entries: list[dict], kind: str) -> float:
    weights = [float((e.get(kind) or {}).get("overQuotaWeight")) for e in entries
               if (e.get(kind) or {}).get("overQuotaWeight") is not None]
    return max(weights) if weights else 1.0


def queue_resources(entries: list[dict], *, gpu_deserved=None, gpu_limit=None) -> dict:
    """KAI's `spec.resources` from Run:ai's per-pool `resources` (or, with none, the GPU totals). GPU quota
    defaults to 0 and limit to none (-1); CPU (millicores: Run:ai's unit and KAI's) and memory (-> MB) unset mean no
    quota and no limit (-1: a workspace asks for CPU, and a quota of 0 would hold it for ever)."""
    entries = [e for e in entries or () if isinstance(e, dict)]

    def unit(kind):
        if kind == "memory":
            return lambda quota: MB_PER_UNIT.get(quota.get("units"), 1.0)
        return lambda quota: 1.0

    out = {}
    for kind in ("gpu", "cpu", "memory"):
        deserved = _summed(entries, kind, "deserved", unit(kind))
        limit = _summed(entries, kind, "limit", unit(kind))
        if kind == "gpu" and not entries:
            deserved = _amount(gpu_deserved) if gpu_deserved is not None else 0.0
            limit = _amount(gpu_limit)
        if deserved is None:
            deserved = 0.0 if kind == "gpu" else UNLIMITED
        if limit is None:
            limit = UNLIMITED
        out[kind] = {"quota": _clean(deserved), "limit": _clean(limit), "overQuotaWeight": _clean(_weight(entries, kind))}
    return out


def _clean(value: float):
    return int(value) if float(value).is_integer() else round(value, 3)


def _queue(name: str, *, unit: str, display: str, resources: dict, parent: str | None = None,
           pool: str | None = None) -> dict:
    spec = {"displayName": display, "resources": resources}
    if parent:
        spec["parentQueue"] = parent
    labels = {MANAGED_BY_LABEL: MANAGED_BY, ORG_UNIT_LABEL: unit}
    if pool:
        labels[POOL_LABEL] = pool
    return {"apiVersion": QUEUE[0], "kind": QUEUE[1], "metadata": {"name": name, "labels": labels}, "spec": spec}


def department_queue_manifest(*, name: str, resources: list[dict], projects: list[dict],
                              pool: str | None = None) -> dict:
    """A department's parent queue in `pool` (None: the default pool), from its `resources` entries for that
    pool where set; else, for GPUs, its projects' deserved GPUs there summed (so a department without quotas
    guarantees what its projects do), with no limit."""
    mine = [e for e in resources or () if isinstance(e, dict)]
    own = queue_resources(mine)
    if not [e for e in mine if e.get("gpu")]:
        total = sum(max(0.0, float(p["resources"]["gpu"]["quota"])) for p in projects)
        own["gpu"] = {"quota": _clean(total), "limit": UNLIMITED, "overQuotaWeight": 1}
    return _queue(department_queue(name, pool), unit="department", display=name, resources=own, pool=pool)


def project_queue_manifest(*, name: str, department: str, resources: list[dict], gpu_deserved, gpu_limit,
                           pool: str | None = None) -> dict:
    spec = queue_resources(resources, gpu_deserved=gpu_deserved, gpu_limit=gpu_limit)
    return _queue(project_queue(name, pool), unit="project", display=name, resources=spec,
                  parent=department_queue(department, pool), pool=pool)


def desired_queues(departments: list[dict], projects: list[dict], pools: list[dict] | None = None) -> list[dict]:
    """Every queue of a cluster, parents first: `departments` as {name, resources}, `projects` as {name,
    department, resources, gpu_deserved, gpu_limit}, `pools` as {name, default} (None: the default pool only).
    A project has a queue in each pool of its `resources` (with none, its GPU totals in the default pool and
    none elsewhere); a department has one in each pool where it has projects' queues."""
    pools = pools or [{"name": "default", "default": True}]
    default = next((p["name"] for p in pools if p.get("default")), "default")
    children, parents = [], []
    for pool in pools:
        name, is_default = pool["name"], bool(pool.get("default"))
        shard = None if is_default else name
        by_department: dict[str, list[dict]] = {}
        for project in projects:
            resources = project.get("resources") or []
            if resources:
                mine = pool_entries(resources, name, is_default=is_default)
                if not mine:
                    continue
                queue = project_queue_manifest(name=project["name"], department=project["department"],
                                               resources=mine, gpu_deserved=None, gpu_limit=None, pool=shard)
            elif name == default:
                queue = project_queue_manifest(name=project["name"], department=project["department"],
                                               resources=[], gpu_deserved=project.get("gpu_deserved"),
                                               gpu_limit=project.get("gpu_limit"))
            else:
                continue
            children.append(queue)
            by_department.setdefault(project["department"], []).append(queue["spec"])
        parents += [department_queue_manifest(name=d["name"], projects=by_department[d["name"]], pool=shard,
                                              resources=pool_entries(d.get("resources"), name, is_default=is_default))
                    for d in departments if d["name"] in by_department]
    return parents + children


def shard_manifest(pool: str) -> dict:
    """KAI's SchedulingShard of a node pool (not the default pool: KAI's default shard): KAI's operator runs a
    scheduler for it that sees only the pool's nodes, queues and pod groups."""
    return {"apiVersion": SHARD[0], "kind": SHARD[1],
            "metadata": {"name": pool, "labels": {MANAGED_BY_LABEL: MANAGED_BY}},
            "spec": {"partitionLabelValue": pool}}


def partition_labels(nodes: list[dict], pools: dict[str, tuple[str, str]]) -> dict[str, str | None]:
    """{node name: the partition label value it should carry (None: none)} for the nodes whose label differs.
    `pools` maps each pool to its node label (key, value); ("", "") for the default pool. A node carrying a
    value that names none of the pools is someone else's: left alone."""
    changes = {}
    named = {name for name, (key, _) in pools.items() if key}
    for node in nodes:
        meta = node.get("metadata") or {}
        labels = meta.get("labels") or {}
        want = pool_of(labels, pools)
        want = want if want and pools[want][0] else None  # the default pool: no partition label
        have = labels.get(POOL_LABEL)
        if have == want or (want is None and have is not None and have not in named):
            continue
        changes[meta.get("name")] = want
    return changes


def spec_differs(current: dict, desired: dict) -> bool:
    """Whether a queue on the cluster lacks what the product wants (fields of its own are left alone)."""
    spec = current.get("spec") or {}
    want = desired["spec"]
    labels = (current.get("metadata") or {}).get("labels") or {}
    return any(spec.get(key) != value for key, value in want.items()) or \
        spec.get("parentQueue") != want.get("parentQueue") or \
        labels.get(POOL_LABEL) != desired["metadata"]["labels"].get(POOL_LABEL)


# --- a queue's status -------------------------------------------------------------------------------------

def _resource_list(values) -> dict:
    """A Kubernetes ResourceList -> Run:ai's QuotaStatusResource: gpu (GPUs), cpu (millicores), memory (MB)."""
    values = values if isinstance(values, dict) else {}

    def number(name, factor):
        try:
            return round(float(parse_quantity(str(values[name]))) * factor, 3) if name in values else 0.0
        except (ValueError, TypeError, ArithmeticError):
            return 0.0
    return {"gpu": number("nvidia.com/gpu", 1.0), "cpu": number("cpu", 1000.0), "memory": number("memory", 1e-6)}


def queue_status(queue: dict) -> dict:
    """{"allocated", "allocatedNonPreemptible", "requested"} of a Queue object, each Run:ai's
    QuotaStatusResource, plus its `quota` (spec.resources) as KAI holds it."""
    status = queue.get("status") or {}
    resources = (queue.get("spec") or {}).get("resources") or {}
    return {"allocated": _resource_list(status.get("allocated")),
            "allocatedNonPreemptible": _resource_list(status.get("allocatedNonPreemptible")),
            "requested": _resource_list(status.get("requested")),
            "quota": {kind: dict(resources.get(kind) or {}) for kind in ("gpu", "cpu", "memory")}}


def pool_of(labels: dict, pools: dict[str, tuple[str, str]]) -> str | None:
    """The pool whose node label the node carries; the default pool (the "" key) when none does."""
    named = next((name for name, (key, value) in sorted(pools.items()) if key and labels.get(key) == value), None)
    return named or next((name for name, (key, _) in pools.items() if not key), None)


def gpu_capacity(nodes: list[dict], pools: dict[str, tuple[str, str]] | None = None) -> dict:
    """{"total", "largestNode"}: the GPUs the nodes offer (allocatable `nvidia.com/gpu`); with the cluster's
    `pools` (name -> node label), "pools" too: each pool's {"total", "largestNode"}."""
    counts, by_pool = [], {}
    for node in nodes:
        raw = ((node.get("status") or {}).get("allocatable") or {}).get("nvidia.com/gpu")
        try:
            count = int(parse_quantity(str(raw))) if raw is not None else 0
        except (ValueError, TypeError, ArithmeticError):
            count = 0
        counts.append(count)
        if pools:
            pool = pool_of((node.get("metadata") or {}).get("labels") or {}, pools)
            if pool is not None:
                by_pool.setdefault(pool, []).append(count)
    out = {"total": sum(counts), "largestNode": max(counts, default=0)}
    if pools:
        out["pools"] = {name: {"total": sum(by_pool.get(name, ())), "largestNode": max(by_pool.get(name, ()), default=0)}
                        for name in sorted(pools)}
    return out


def summary(status: dict) -> dict | None:
    """What a project's or department's queue holds, in GPUs: deserved, limit (None: none), allocated, of it
    non-preemptible, overQuota (allocated beyond deserved, lent by idle GPUs), waiting (asked for, not allocated),
    as the queue controller last reported (`at`). None before the sync has read the queue."""
    if not status or "allocated" not in status:
        return None
    gpu = (status.get("quota") or {}).get("gpu") or {}
    deserved = float(gpu.get("quota") or 0)
    limit = gpu.get("limit")
    allocated = float(status["allocated"].get("gpu") or 0)
    requested = float((status.get("requested") or {}).get("gpu") or 0)
    return {"queue": status.get("queue"), "deserved": None if deserved < 0 else deserved,
            "limit": None if limit is None or float(limit) < 0 else float(limit),
            "overQuotaWeight": gpu.get("overQuotaWeight"), "allocated": allocated,
            "allocatedNonPreemptible": float((status.get("allocatedNonPreemptible") or {}).get("gpu") or 0),
            "requested": requested, "overQuota": round(max(0.0, allocated - deserved), 3) if deserved >= 0 else 0.0,
            "waiting": round(max(0.0, requested - allocated), 3), "at": status.get("at")}
