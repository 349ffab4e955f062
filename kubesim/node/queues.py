"""KAI Scheduler's queues as kubesim models them (node/kai.py schedules with them): each Queue's quota, limit and
over-quota weight per resource, what its jobs hold and ask for, its fair share of the GPUs (KAI's proportion
plugin, in two phases), the capacity policy that makes a job wait (OverLimit, NonPreemptibleOverQuota) and KAI's
messages for both. Units as KAI's: GPUs, CPU in millicores, memory in MB (messages: cores and GB)."""

import math
from collections import Counter

EPS = 1e-9
UNLIMITED = -1.0
RESOURCES = ("gpu", "cpu", "memory")
UNITS = {"gpu": ("GPUs", "GPUs"), "cpu": ("CPU cores", "cores"), "memory": ("memory", "GB")}


def human(value: float) -> str:
    return f"{round(value, 2):g}"


def _display(res: str, value: float) -> float:
    """KAI's units in messages: GPUs, cores (from millicores), GB (from MB)."""
    return value / 1000.0 if res in ("cpu", "memory") else value


def resource_list(amounts: dict) -> dict:
    """{"gpu", "cpu" (millicores), "memory" (MB)} -> a Kubernetes ResourceList, as KAI's controllers write."""
    out = {}
    if amounts.get("gpu"):
        out["nvidia.com/gpu"] = human(amounts["gpu"])
    if amounts.get("cpu"):
        out["cpu"] = f"{round(amounts['cpu'])}m"
    if amounts.get("memory"):
        out["memory"] = f"{round(amounts['memory'])}M"
    return out


class Queue:
    def __init__(self, obj: dict):
        spec = obj.get("spec") or {}
        resources = spec.get("resources") or {}
        self.name, self.parent = obj["metadata"]["name"], spec.get("parentQueue") or None
        self.priority = int(spec.get("priority") if spec.get("priority") is not None else 100)
        self.quota, self.limit, self.weight = {}, {}, {}
        for res in RESOURCES:
            entry = resources.get(res) or {}
            self.quota[res] = float(entry.get("quota") or 0)
            self.limit[res] = float(entry.get("limit") or 0)
            self.weight[res] = float(entry.get("overQuotaWeight") if entry.get("overQuotaWeight") is not None else 1)
        self.children = []
        self.alloc, self.alloc_np, self.requested = (Counter() for _ in range(3))
        self.fair = 0.0
        self.obj = obj

    def saturation(self) -> float:
        if self.fair <= EPS:
            return math.inf if self.alloc["gpu"] > EPS else 0.0
        return self.alloc["gpu"] / self.fair


def chain(queues: dict, name: str):
    q = queues.get(name)
    while q is not None:
        yield q
        q = queues.get(q.parent) if q.parent else None


def fair_share(queues: dict, total: float) -> None:
    """Every queue's fair share of `total` GPUs, from the roots down."""
    _divide(total, [q for q in queues.values() if not q.parent or q.parent not in queues])

def _divide(amount: float, siblings: list) -> None:
    """KAI's two phases among siblings: min(quota, requested) to each, then the rest by priority bucket and
    over-quota weight, each capped at what it asks for (within its limit)."""
    wants = {}
    for q in siblings:
        want = q.requested["gpu"]
        if q.limit["gpu"] != UNLIMITED:
            want = min(want, q.limit["gpu"])
        quota = want if q.quota["gpu"] == UNLIMITED else q.quota["gpu"]
        q.fair = min(quota, want)
        wants[q.name] = want
    left = amount - sum(q.fair for q in siblings)
    for priority in sorted({q.priority for q in siblings}, reverse=True):
        bucket = [q for q in siblings if q.priority == priority]
        while left > EPS:
            hungry = [q for q in bucket if wants[q.name] - q.fair > EPS and q.weight["gpu"] > 0]
            if not hungry:
                break
            weights = sum(q.weight["gpu"] for q in hungry)
            given = 0.0
            for q in hungry:
                share = min(left * q.weight["gpu"] / weights, wants[q.name] - q.fair)
                q.fair += share
                given += share
            left -= given
            if given <= EPS:
                break
    for q in siblings:
        if q.children:
            _divide(q.fair, q.children)


def over_capacity(queues: dict, job, wanted: Counter):
    """KAI's capacity policy: OverLimit (the queue or a parent), then NonPreemptibleOverQuota."""
    queues_on = list(chain(queues, job.queue))
    for q in queues_on:
        for res in RESOURCES:
            if wanted[res] > EPS and q.limit[res] != UNLIMITED and q.limit[res] < q.alloc[res] + wanted[res] - EPS:
                kind, unit = UNITS[res]
                message = (f"{q.name} quota has reached the allowable limit of {kind}. Limit is "
                           f"{human(_display(res, q.limit[res]))} {unit}, currently "
                           f"{human(_display(res, q.alloc[res]))} {unit} allocated and workload requested "
                           f"{human(_display(res, wanted[res]))} {unit}")
                return "OverLimit", message, _details(q, wanted)
    if job.preemptible:
        return None
    for q in queues_on:
        for res in RESOURCES:
            if wanted[res] > EPS and q.quota[res] != UNLIMITED and q.quota[res] < q.alloc_np[res] + wanted[res] - EPS:
                kind, unit = UNITS[res]
                noun = "GPUs" if res == "gpu" else ("CPU cores" if res == "cpu" else "GB memory")
                message = (f"Non-preemptible workload is over quota. Workload requested "
                           f"{human(_display(res, wanted[res]))} {noun}, but {q.name} quota is "
                           f"{human(_display(res, q.quota[res]))} {unit}, while "
                           f"{human(_display(res, q.alloc_np[res]))} {unit} are already allocated for "
                           f"non-preemptible pods. Use a preemptible workload to go over quota.")
                return "NonPreemptibleOverQuota", message, _details(q, wanted)
    return None


def _details(q: Queue, wanted: Counter) -> dict:
    def listed(values):
        return {"nvidia.com/gpu": human(values["gpu"])}
    return {"queueDetails": {"name": q.name, "queueDeservedResources": listed(q.quota),
                             "queueAllocatedResources": listed(q.alloc),
                             "queueAllocatedNonPreemptibleResources": listed(q.alloc_np),
                             "queueResourceLimits": listed(q.limit), "queueRequestedResources": listed(q.requested),
                             "podGroupRequestedResources": listed(wanted)}}


def leveled(queues: dict, a: str, b: str):
    """The two queues, one on each path from the root, just below where the paths part."""
    path_a = list(chain(queues, a))[::-1]
    path_b = list(chain(queues, b))[::-1]
    for qa, qb in zip(path_a, path_b, strict=False):
        if qa.name != qb.name:
            return qa, qb
    return path_a[-1], path_b[-1]


def details_text(q: Queue) -> str:
    """A queue in a reclaim's message, as KAI writes it."""
    def amount(res, value):
        return "-1" if value == UNLIMITED else human(_display(res, value))

    def text(values, fair=None):
        gpu = values["gpu"] if fair is None else fair
        return (f"GPU: {amount('gpu', gpu)}, CPU: {amount('cpu', values['cpu'])} (cores), "
                f"memory: {amount('memory', values['memory'])} (GB)")
    return (f"{q.name} uses <{text(q.alloc)}> with a quota of <{text(q.quota)}>, fair-share of "
            f"<{text(q.alloc, q.fair)}> and queue priority of <{q.priority}>.")

