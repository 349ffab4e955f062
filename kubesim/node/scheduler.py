"""Placement of pods on the simulated nodes, the way the default scheduler's filters decide it: nodeSelector and
required node affinity, taints (NoSchedule / NoExecute against tolerations), pod count, CPU, memory, whole GPUs (`nvidia.com/gpu`), MIG slices
(`nvidia.com/mig-<profile>`), and GPU sharing through the `gpu-fraction` / `gpu-memory` pod annotations (the
GPU-sharing scheduler's convention: a share of one device). Failures read like the scheduler's FitError:
`0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: ...`.
"""

import json
from collections import Counter

from .. import quantity

GPU_MODEL = "NVIDIA H100 80GB HBM3"
GPU_MEMORY_MIB = 81559  # framebuffer total DCGM reports for one H100 80GB
AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"
_EPS = 1e-9


class Request:
    __slots__ = ("cpu", "memory", "gpus", "fraction", "mig", "other")

    def __init__(self):
        self.cpu = self.memory = self.fraction = 0.0
        self.gpus, self.mig, self.other = 0, Counter(), Counter()

    def shape(self) -> tuple:
        return (self.cpu, self.memory, self.gpus, self.fraction, tuple(sorted(self.mig.items())),
                tuple(sorted(self.other.items())))


def pod_request(pod: dict) -> Request:
    req, spec = Request(), pod.get("spec") or {}
    for c in spec.get("containers") or []:
        resources = c.get("resources") or {}
        for name, value in {**(resources.get("limits") or {}), **(resources.get("requests") or {})}.items():
            _add(req, name, quantity.parse_or_zero(value))
    annotations = pod["metadata"].get("annotations") or {}
    if not req.gpus and annotations.get("gpu-fraction"):
        req.fraction = min(1.0, max(0.0, quantity.parse_or_zero(annotations["gpu-fraction"])))
    elif not req.gpus and annotations.get("gpu-memory"):
        raw = annotations["gpu-memory"]
        mib = float(raw) if str(raw).isdigit() else quantity.parse_or_zero(raw) / 2**20
        req.fraction = min(1.0, max(0.0, mib / GPU_MEMORY_MIB))
    return req


def _add(req: Request, name: str, amount: float) -> None:
    if name == "cpu":
        req.cpu += amount
    elif name == "memory":
        req.memory += amount
    elif name == "nvidia.com/gpu":
        req.gpus += int(amount)
    elif name.startswith("nvidia.com/mig-"):
        req.mig[name[len("nvidia.com/mig-"):]] += int(amount)
    elif name != "ephemeral-storage" and not name.startswith("hugepages-"):
        req.other[name] += amount


def _tolerated(taint: dict, tolerations: list) -> bool:
    """The scheduler's rule: a toleration matches a taint by key (empty key with Exists: every key), by value
    unless its operator is Exists, and by effect unless it names none."""
    for tol in tolerations:
        if tol.get("effect") and tol["effect"] != taint.get("effect"):
            continue
        if tol.get("operator") == "Exists":
            if not tol.get("key") or tol["key"] == taint.get("key"):
                return True
        elif tol.get("key") == taint.get("key") and (tol.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _affinity_ok(spec: dict, labels: dict) -> bool:
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms") or []
    return not terms or any(all(_expression_ok(e, labels) for e in t.get("matchExpressions") or []) for t in terms)


def _expression_ok(expr: dict, labels: dict) -> bool:
    key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
    value = labels.get(key)
    if op == "In":
        return value in values
    if op == "NotIn":
        return value not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and value is not None and values:
        try:
            return int(value) > int(values[0]) if op == "Gt" else int(value) < int(values[0])
        except ValueError:
            return False
    return False


class NodeState:
    def __init__(self, obj: dict, gpus: int, mig: dict):
        status = obj["status"]["allocatable"]
        self.name, self.labels = obj["metadata"]["name"], obj["metadata"]["labels"]
        self.taints = [t for t in (obj.get("spec") or {}).get("taints") or []
                       if t.get("effect") in ("NoSchedule", "NoExecute")]
        self.free_cpu = quantity.parse(status["cpu"])
        self.free_memory = quantity.parse(status["memory"])
        self.free_pods = int(status["pods"])
        self.devices = [1.0] * gpus        # unallocated share of each GPU
        self.mig = Counter(mig)            # free MIG slices per profile
        # Extended resources the node offers (e.g. `hardware-vendor.example/foo`), free amount of each.
        self.other = Counter({name: quantity.parse(value) for name, value in status.items()
                              if name not in ("cpu", "memory", "pods", "ephemeral-storage")
                              and not name.startswith(("nvidia.com/", "hugepages-"))})

    def reasons(self, spec: dict, req: Request) -> list[str]:
        if spec.get("nodeName") and spec["nodeName"] != self.name:
            return ["node(s) didn't match the requested node name"]
        if not _affinity_ok(spec, self.labels):
            return [AFFINITY_REASON]
        untolerated = next((t for t in self.taints if not _tolerated(t, spec.get("tolerations") or [])), None)
        if untolerated is not None:
            return [f"node(s) had untolerated taint {{{untolerated['key']}: {untolerated.get('value', '')}}}"]
        return self.insufficient(req)

    def insufficient(self, req: Request) -> list[str]:
        """What the node lacks for the request, in the scheduler's words."""
        out = []
        if self.free_pods < 1:
            out.append("Too many pods")
        if req.cpu > self.free_cpu + _EPS:
            out.append("Insufficient cpu")
        if req.memory > self.free_memory + _EPS:
            out.append("Insufficient memory")
        whole = sum(1 for d in self.devices if d >= 1.0 - _EPS)
        if req.gpus > whole or (req.fraction and not any(d >= req.fraction - _EPS for d in self.devices)):
            out.append("Insufficient nvidia.com/gpu")
        out += [f"Insufficient nvidia.com/mig-{p}" for p, n in sorted(req.mig.items()) if self.mig[p] < n]
        out += [f"Insufficient {name}" for name, amount in sorted(req.other.items())
                if self.other[name] < amount - _EPS]
        return out


GANG_LABEL = "scheduling.x-k8s.io/pod-group"       # scheduler-plugins' coscheduling
GANG_ANNOTATION = "scheduling.k8s.io/group-name"    # Volcano
POD_GROUP_KEYS = ("podgroups.scheduling.x-k8s.io", "podgroups.scheduling.volcano.sh")


def gang_group(pod: dict) -> str | None:
    meta = pod["metadata"]
    return (meta.get("labels") or {}).get(GANG_LABEL) or (meta.get("annotations") or {}).get(GANG_ANNOTATION)


class Scheduler:
    """Pending pods wait in one FIFO queue per request shape (resources + node constraints). Pods of a shape that
    did not fit cannot fit until capacity comes back, so a pass costs O(shapes + pods placed), not O(pending):
    ten thousand waiting pods of one shape are one failed placement per pass."""

    def __init__(self, nodes: list[tuple[dict, int, dict]]):
        self.nodes = [NodeState(obj, gpus, mig) for obj, gpus, mig in nodes]
        self.pending = {}    # uid -> (arrival number, namespace, name, request, shape)
        self.queues = {}     # shape -> {uid: None}, in arrival order
        self.arrived = []    # uids enqueued since the last pass
        self.failed = {}     # shape -> FitError message, valid until capacity comes back
        self.alloc = {}      # uid -> (node, request, [(device index, share)])
        self.reported = {}   # uid -> the FitError message last reported for it
        self.told = {}       # shape -> the message its waiting pods were last given
        self.freed = False
        self._arrivals = 0
        self.gangs = {}      # uid -> (namespace, pod group) of a pending pod that belongs to a gang
        self.gang_bound = {}  # (namespace, pod group) -> uids of its members bound so far

    def enqueue(self, pod: dict) -> None:
        meta = pod["metadata"]
        if meta["uid"] in self.pending:
            return
        group = gang_group(pod)
        if group:
            self.gangs[meta["uid"]] = (meta["namespace"], group)
        req = pod_request(pod)
        shape = (req.shape(), json.dumps([pod["spec"].get("nodeSelector"), pod["spec"].get("affinity"),
                                          pod["spec"].get("nodeName"), pod["spec"].get("tolerations")]))
        self._arrivals += 1
        self.pending[meta["uid"]] = (self._arrivals, meta["namespace"], meta["name"], req, shape)
        self.queues.setdefault(shape, {})[meta["uid"]] = None
        self.arrived.append(meta["uid"])

    def forget(self, uid: str) -> None:
        key = self.gangs.pop(uid, None)
        for bound in ([self.gang_bound.get(key)] if key else self.gang_bound.values()):
            if bound:
                bound.discard(uid)
        entry = self.pending.pop(uid, None)
        if entry is not None:
            queue = self.queues[entry[4]]
            del queue[uid]
            if not queue:
                del self.queues[entry[4]]
                self.told.pop(entry[4], None)
        self.reported.pop(uid, None)
        self.release(uid)

    def release(self, uid: str) -> None:
        placed = self.alloc.pop(uid, None)
        if placed is None:
            return
        node, req, devices = placed
        node.free_cpu += req.cpu
        node.free_memory += req.memory
        node.free_pods += 1
        node.mig.update(req.mig)
        node.other.update(req.other)
        for index, share in devices:
            node.devices[index] += share
        self.freed = True

    def devices_of(self, uid: str) -> tuple[str, list[tuple[int, float]]] | None:
        placed = self.alloc.get(uid)
        return (placed[0].name, placed[2]) if placed else None

    def _follow_nodes(self, store) -> None:
        """Node labels and taints as they are now (`kubectl label`, `kubectl taint`), as kube-scheduler's node
        informer sees them: a change may let waiting pods fit, or keep new ones off the node."""
        for node in self.nodes:
            obj = store.get("nodes", None, node.name)
            if obj is None:
                continue
            labels = obj["metadata"].get("labels") or {}
            taints = [t for t in (obj.get("spec") or {}).get("taints") or []
                      if t.get("effect") in ("NoSchedule", "NoExecute")]
            if labels != node.labels or taints != node.taints:
                node.labels, node.taints, self.freed = labels, taints, True

    def run(self, store, bind, unschedulable) -> None:
        """Place what can be placed: every queue when capacity came back, else only the new arrivals. Waiting
        pods hear the FitError once, and again only when it changes."""
        self._follow_nodes(store)
        arrivals = {}
        for uid in self.arrived:
            if uid in self.pending:
                arrivals.setdefault(self.pending[uid][4], []).append(uid)
        self.arrived = []
        if self.freed:
            self.freed, self.failed = False, {}
            shapes = sorted(self.queues, key=lambda s: self.pending[next(iter(self.queues[s]))][0])
        else:
            shapes = list(arrivals)
        for shape in shapes:
            if shape not in self.failed and shape in self.queues:
                self._drain(shape, store, bind, unschedulable)
            message = self.failed.get(shape)
            if message is None:
                continue
            if self.told.get(shape) != message:
                self.told[shape] = message
                waiting = list(self.queues.get(shape, ()))
            else:
                waiting = arrivals.get(shape, [])
            for uid in waiting:
                if uid in self.pending and self.reported.get(uid) != message:
                    self.reported[uid] = message
                    _, namespace, name, _, _ = self.pending[uid]
                    unschedulable(store.get("pods", namespace, name), message)

    def _drain(self, shape, store, bind, unschedulable) -> None:
        queue = self.queues[shape]
        for uid in list(queue):
            if uid not in queue:
                continue  # placed with its gang, from another shape's queue
            _, namespace, name, req, _ = self.pending[uid]
            pod = store.get("pods", namespace, name)
            min_member = self._min_member(store, self.gangs.get(uid))
            if min_member is not None:
                self._place_gang(self.gangs[uid], min_member, store, bind, unschedulable)
                continue
            placed = self._place(pod, req)
            if isinstance(placed, str):
                self.failed[shape] = placed
                return
            self._take(uid)
            bind(pod, placed)
        if not queue:
            self.queues.pop(shape, None)
            self.told.pop(shape, None)

    def _take(self, uid: str) -> None:
        """A placed pod leaves the pending set and its queue."""
        entry = self.pending.pop(uid)
        queue = self.queues.get(entry[4])
        if queue is not None:
            queue.pop(uid, None)
            if not queue:
                del self.queues[entry[4]]
                self.told.pop(entry[4], None)
        self.reported.pop(uid, None)
        self.gangs.pop(uid, None)

    # --- gang scheduling (scheduler-plugins' coscheduling, Volcano): all of a PodGroup's minMember or none ---

    @staticmethod
    def _min_member(store, key) -> int | None:
        """The PodGroup's minMember; None (an ordinary pod) when the pod names no group or the cluster has none."""
        if key is None:
            return None
        for group_key in POD_GROUP_KEYS:
            try:
                group = store.get(group_key, key[0], key[1])
            except Exception:  # a store that does not hold PodGroups (the node side on another API server)
                group = None
            if group is not None:
                return int((group.get("spec") or {}).get("minMember") or 1)
        return None

    def _place_gang(self, key, min_member: int, store, bind, unschedulable) -> None:
        """Place every waiting member of the pod group, or none: a gang that cannot all start holds nothing."""
        waiting = sorted((u for u, k in self.gangs.items() if k == key and u in self.pending),
                         key=lambda u: self.pending[u][0])
        bound = self.gang_bound.setdefault(key, set())
        pods = {u: store.get("pods", self.pending[u][1], self.pending[u][2]) for u in waiting}
        message = None
        if len(bound) + len(waiting) < min_member:
            message = (f"pod group {key[1]}: {len(bound) + len(waiting)}/{min_member} members exist; "
                       "waiting for the rest before scheduling any")
        else:
            placed, freed = [], self.freed
            for uid in waiting:
                result = self._place(pods[uid], self.pending[uid][3])
                if isinstance(result, str):
                    for done, _ in placed:
                        self.release(done)
                    self.freed = freed  # a trial placement undone frees nothing new
                    message = f"pod group {key[1]}: {len(placed) + len(bound)}/{min_member} members fit; {result}"
                    break
                placed.append((uid, result))
            else:
                for uid, result in placed:
                    self._take(uid)
                    bound.add(uid)
                    bind(pods[uid], result)
                return
        for uid in waiting:
            if self.reported.get(uid) != message:
                self.reported[uid] = message
                unschedulable(pods[uid], message)

    def _place(self, pod: dict, req: Request, nodes: list | None = None):
        """`nodes` the ones the pod may use (a KAI shard's); all by default."""
        reasons, preemption, fits = Counter(), Counter(), []
        for node in self.nodes if nodes is None else nodes:
            why = node.reasons(pod["spec"], req)
            if why:
                reasons.update(why)
                preemption["Preemption is not helpful for scheduling" if why == [AFFINITY_REASON] or "taint" in why[0]
                           else "No preemption victims found for incoming pod"] += 1
            else:
                fits.append(node)
        if not fits:
            return self._fit_error(reasons, preemption)
        if req.gpus or req.fraction:  # bin-pack GPU work, keeping whole nodes free for large jobs
            node = min(fits, key=lambda n: (sum(n.devices), -n.free_cpu))
        else:
            node = max(fits, key=lambda n: (n.free_cpu, n.free_memory))
        devices = []
        if req.gpus:
            devices = [(i, 1.0) for i, d in enumerate(node.devices) if d >= 1.0 - _EPS][:req.gpus]
        elif req.fraction:
            index = min((i for i, d in enumerate(node.devices) if d >= req.fraction - _EPS),
                        key=lambda i: node.devices[i])  # best fit: the fullest device that still has room
            devices = [(index, req.fraction)]
        for index, share in devices:
            node.devices[index] -= share
        node.free_cpu -= req.cpu
        node.free_memory -= req.memory
        node.free_pods -= 1
        node.mig.subtract(req.mig)
        node.other.subtract(req.other)
        self.alloc[pod["metadata"]["uid"]] = (node, req, devices)
        return node.name, devices

    def _fit_error(self, reasons: Counter, preemption: Counter) -> str:
        total = len(self.nodes)
        if not total:
            return "no nodes available to schedule pods"
        parts = ", ".join(sorted(f"{n} {r}" for r, n in reasons.items()))
        victims = ", ".join(sorted(f"{n} {r}" for r, n in preemption.items()))
        return f"0/{total} nodes are available: {parts}. preemption: 0/{total} nodes are available: {victims}."
