"""KAI Scheduler's semantics on kubesim's nodes (with `KubeSim(kai=True)`): pods for the `kai-scheduler` are
scheduled by pod group (node/podgrouper.py) through hierarchical `scheduling.run.ai/v2` Queues, each cycle
doing what KAI v0.12's actions do, in its order:

- fair share (GPUs): every queue gets min(quota, requested); what is left goes to queues wanting more, by
  over-quota weight, within their limit; a parent's share is divided among its children the same way;
- allocate: the least saturated queue (allocated / fair share) first, within it the highest priority, then the
  oldest PodGroup by its creationTimestamp (whole seconds), then by its UID (`creation_ranks`); a job over a
  queue's `limit` (itself or a parent) waits with `OverLimit`, a non-preemptible job (priority class value
  >= 100) that would take its queue's non-preemptible allocation over its quota with
  `NonPreemptibleOverQuota`, one that fits no node with `PodSchedulingErrors`; a gang (minMember > 1) starts
  whole or not at all; GPU fractions are packed onto the fullest GPU that has room (node/scheduler.py);
- reclaim: a job of a queue under its fair share takes GPUs back from preemptible jobs of queues over theirs
  (or over their quota, when the reclaimer stays within its own), never from non-preemptible ones;
- preempt: within one queue, a higher priority job evicts lower priority preemptible ones.
An eviction is KAI's: the pod gets `DisruptionTarget` (reason `PreemptionByScheduler`) with KAI's message and
is deleted, and its PodGroup an `Evict` event; its owner (Job, operator) makes a new pod, which queues again.
The event reaches the server EVENT_LAG_SECONDS after the pod's deletion, stamped when it was recorded: KAI records
it first, but client-go's recorder sends it from a queue, rate-limited, so a reader may see the pod gone first.
Waiting pods hear KAI's words (`Unschedulable` events and PodScheduled condition), their PodGroup gets the
`UnschedulableOnNodePool` scheduling condition with the structured reasons, and every Queue its status
(`allocated`, `allocatedNonPreemptible`, `requested`), as KAI's queue controller writes it.
GPUs are the resource shared fairly; CPU and memory count toward limits and non-preemptible quotas only.
"""

import math
import time
from collections import Counter

from ..store import jcopy, now_rfc3339, parse_rfc3339
from . import podgrouper as pg
from .queues import (
    EPS,
    UNLIMITED,
    Queue,
    chain,
    details_text,
    fair_share,
    leveled,
    over_capacity,
    resource_list,
)
from .scheduler import pod_request

CYCLE_SECONDS = 0.25
EVENT_LAG_SECONDS = 1.0
NODE_REASONS = {"Insufficient nvidia.com/gpu": "node(s) didn't have enough resources: GPUs",
                "Insufficient cpu": "node(s) didn't have enough resources: CPU cores",
                "Insufficient memory": "node(s) didn't have enough resources: memory"}


class Job:
    def __init__(self, key, info: dict, created: int):
        self.key, self.queue = key, info["queue"]
        self.priority, self.preemptible = info["priority"], info["preemptible"]
        self.min_member, self.cls, self.created = info["minMember"], info["priorityClassName"], created
        self.shard = (info.get("labels") or {}).get(pg.POOL_LABEL)  # the KAI shard (node pool) that schedules it
        self.pending, self.running = [], []


class KaiScheduler:
    def __init__(self, controller):
        self.ctl, self.store, self.nodes = controller, controller.store, controller.scheduler
        self.pending = {}    # uid -> (namespace, name)
        self.members = {}    # uid -> (namespace, pod group) of every KAI pod known
        self.reqs = {}       # uid -> Request
        self.infos = {}      # (namespace, pod group) -> group metadata (podgrouper.group_metadata)
        self.created = {}    # (namespace, pod group) -> (creationTimestamp in seconds, UID) of its PodGroup
        self.ranks = None    # creation_ranks of `created` (None: to compute again)
        self.bound = set()   # uids KAI placed
        self.evicted = {}    # uid -> (namespace, name): evicted, not yet gone
        self.reported = {}   # uid -> the message its pod was last told
        self.told = {}       # (namespace, pod group) -> the Unschedulable message last recorded on it
        self.dirty, self.last, self._seq = True, 0.0, 0
        self.shard_nodes = None  # the nodes of the shard a cycle is scheduling
        self.unsent = []  # (due, pod group, message, recorded at): Evict events still in the recorder's queue

    # --- pods coming and going --------------------------------------------------------------------------------

    def enqueue(self, pod: dict) -> None:
        meta = pod["metadata"]
        if meta["uid"] in self.pending or meta["uid"] in self.bound:
            return
        info = pg.ensure_group(self.ctl, pod)
        key = (meta["namespace"], info["name"])
        group_meta = (info.pop("object", None) or {}).get("metadata") or {}
        info.pop("owner", None)
        self.infos[key] = info
        stamp = group_meta.get("creationTimestamp")
        created = (parse_rfc3339(stamp) if stamp else None, group_meta.get("uid") or "")
        if self.created.get(key) != created:
            self.created[key], self.ranks = created, None
        self.pending[meta["uid"]] = (meta["namespace"], meta["name"])
        self.members[meta["uid"]] = key
        self.reqs[meta["uid"]] = pod_request(pod)
        self.dirty = True

    def forget(self, uid: str) -> None:
        for table in (self.pending, self.members, self.reqs, self.evicted, self.reported):
            table.pop(uid, None)
        self.bound.discard(uid)
        live = set(self.members.values())
        for key in [k for k in self.infos if k not in live]:
            self.infos.pop(key), self.created.pop(key, None), self.told.pop(key, None)
            self.ranks = None
        self.dirty = True

    # --- the cycle --------------------------------------------------------------------------------------------

    def run(self) -> None:
        now = time.monotonic()
        self._send_events(now)
        if self.nodes.freed:
            self.dirty = True  # capacity came back (a pod finished or went): the default scheduler resets it
        if not self.dirty and (not self.pending or now - self.last < CYCLE_SECONDS * 4):
            return
        if now - self.last < CYCLE_SECONDS:
            return
        self.last, self.dirty = now, False
        self.cycle()

    def cycle(self) -> None:
        """One round of each scheduling shard, as KAI runs a scheduler per shard: a shard (a node pool's
        partition label value; None the default shard, for what carries no such label) sees only its own nodes,
        queues and pod groups, so each pool's quotas and capacity are its own."""
        stored = self.store.list(pg.QUEUES)
        jobs = self._jobs()
        shards = {None} | {_shard(q) for q in stored} | {j.shard for j in jobs.values()} | \
            {n.labels.get(pg.POOL_LABEL) for n in self.nodes.nodes}
        evict = not any(self.store.get("pods", *where) is not None for where in self.evicted.values())
        if evict:
            self.evicted.clear()  # evict again only once the last round's victims are gone
        every_queue, errors, task_errors = {}, {}, {}
        for shard in sorted(shards, key=lambda s: (s is not None, s or "")):
            queues = {q["metadata"]["name"]: Queue(q) for q in stored if _shard(q) == shard}
            for q in queues.values():
                if q.parent in queues:
                    queues[q.parent].children.append(q)
            mine = {key: job for key, job in jobs.items() if job.shard == shard}
            self.shard_nodes = [n for n in self.nodes.nodes if n.labels.get(pg.POOL_LABEL) == shard]
            self._account(queues, mine)
            fair_share(queues, float(sum(len(n.devices) for n in self.shard_nodes)))
            self._allocate(queues, mine, errors, task_errors)
            if evict:
                self._evict_for_waiting(queues, mine, errors)
            every_queue.update(queues)
        self.shard_nodes = None
        self._report(jobs, errors, task_errors)
        self._write_statuses(every_queue, jobs)

    def _jobs(self) -> dict:
        jobs = {}
        if self.ranks is None:
            self.ranks = creation_ranks(self.created)
        for uid, key in self.members.items():
            job = jobs.get(key)
            if job is None:
                job = jobs[key] = Job(key, self.infos[key], self.ranks.get(key, math.inf))
            if uid in self.pending:
                job.pending.append(uid)
            elif uid in self.nodes.alloc and uid not in self.evicted:
                job.running.append(uid)
        for job in jobs.values():
            job.pending.sort(key=lambda u: self.pending[u][1])
        return jobs

    def _amounts(self, uids) -> Counter:
        total = Counter()
        for uid in uids:
            req = self.reqs[uid]
            total["gpu"] += req.gpus + req.fraction
            total["cpu"] += req.cpu * 1000.0
            total["memory"] += req.memory / 1e6
        return total

    def _account(self, queues, jobs) -> None:
        for job in jobs.values():
            running, pending = self._amounts(job.running), self._amounts(job.pending)
            for q in chain(queues, job.queue):
                q.alloc.update(running)
                q.requested.update(running + pending)
                if not job.preemptible:
                    q.alloc_np.update(running)

    # --- allocate ---------------------------------------------------------------------------------------------

    def _allocate(self, queues, jobs, errors, task_errors) -> None:
        tried = set()
        while True:
            waiting = [j for j in jobs.values() if j.pending and j.key not in tried]
            if not waiting:
                return
            job = min(waiting, key=lambda j: (queues[j.queue].saturation() if j.queue in queues else math.inf,
                                              -j.priority, j.created))
            tried.add(job.key)
            queue = queues.get(job.queue)
            if queue is None or queue.children:
                errors[job.key] = ("QueueDoesNotExist", f"Queue {job.queue} does not exist or is not a leaf queue",
                                   None)
                continue
            wanted = self._amounts(job.pending)
            refusal = over_capacity(queues, job, wanted)
            if refusal is not None:
                errors[job.key] = refusal
                continue
            placed = self._place(job, task_errors, errors)
            if placed:
                amounts = self._amounts([uid for uid, _, _ in placed])
                for q in chain(queues, job.queue):
                    q.alloc.update(amounts)
                    if not job.preemptible:
                        q.alloc_np.update(amounts)
                for uid, pod, placement in placed:
                    self.pending.pop(uid, None)
                    self.bound.add(uid)
                    self.reported.pop(uid, None)
                    job.pending.remove(uid)
                    job.running.append(uid)
                    self.ctl.kubelet.bind(self._gpu_group(pod, placement), placement)

    @staticmethod
    def _gpu_group(pod: dict, placement) -> dict:
        """A GPU fraction's pod gets the `runai-gpu-group` label of the device it shares, as KAI's binder sets it
        (its reservation pod holds the device): pods sharing one GPU carry the same group."""
        node, devices = placement
        if not devices or devices[0][1] >= 1.0:
            return pod
        labels = {**(pod["metadata"].get("labels") or {}), pg.GPU_GROUP_LABEL: f"{node}-gpu{devices[0][0]}"}
        return {**pod, "metadata": {**pod["metadata"], "labels": labels}}

    def _place(self, job, task_errors, errors) -> list:
        """Bind what fits: all of a gang's pods or none; pods of other jobs one by one."""
        placed = []
        gang = job.min_member > 1
        for uid in job.pending:
            namespace, name = self.pending[uid]
            pod = self.store.get("pods", namespace, name)
            if pod is None:
                continue
            result = self.nodes._place(pod, self.reqs[uid], self.shard_nodes)
            if isinstance(result, str):
                fit = self._fit_error(result)
                task_errors[uid] = fit
                if gang and len(job.running) + len(placed) < job.min_member:
                    for done, _, _ in placed:
                        self.nodes.release(done)
                    self.nodes.freed = False
                    errors[job.key] = ("PodSchedulingErrors",
                                       f"Resources were found for {len(job.running) + len(placed)} pods while "
                                       f"{job.min_member} are required for gang scheduling. Additional pods cannot "
                                       f"be scheduled due to: {fit}", None)
                    return []
                errors[job.key] = ("PodSchedulingErrors",
                                   f"Resources were not found for pod {namespace}/{name} due to: {fit}", None)
                break
            placed.append((uid, pod, result))
        return placed

    def _fit_error(self, default_message: str) -> str:
        """The default scheduler's FitError in KAI's words: `no nodes with enough resources were found: 2
        node(s) didn't have enough resources: GPUs.`"""
        reasons = Counter()
        head = default_message.split(". preemption:", 1)[0]
        for part in head.split(": ", 1)[-1].split(", "):
            count, _, reason = part.partition(" ")
            if count.isdigit():
                reasons[NODE_REASONS.get(reason.strip(), reason.strip())] += int(count)
        listed = ". \n".join(sorted(f"{n} {r}" for r, n in reasons.items()))
        return "no nodes with enough resources were found" + (f": {listed}." if listed else "")

    # --- reclaim and preempt ----------------------------------------------------------------------------------

    def _evict_for_waiting(self, queues, jobs, errors) -> None:
        """Reclaim, then preempt, for each waiting job in turn. A job that gets victims is pipelined: it counts as
        allocated (on the victims' room) for the jobs after it, and binds once the victims are gone."""
        order = sorted((j for j in jobs.values() if j.pending),
                       key=lambda j: (queues[j.queue].saturation() if j.queue in queues else math.inf,
                                      -j.priority, j.created))
        rounds = {"victims": [], "pipelined": []}
        for job in order:
            queue = queues.get(job.queue)
            if queue is None or queue.children:
                continue
            error = errors.get(job.key)
            if error and error[0] == "NonPreemptibleOverQuota":
                continue
            # Over its own queue's limit, only its own queue's lower priority can yield; over a parent's, what runs
            # under that parent may be reclaimed (the parent's total does not grow), as KAI's reclaim does.
            within = _limiting_queue(queues, job, self._amounts(job.pending)) if error and error[0] == "OverLimit" \
                else None
            over_limit = within == job.queue
            chosen, action = self._victims(queues, jobs, job, rounds, over_limit, within)
            if chosen is None:
                continue
            self._evict(queues, chosen, job, action)
            self._pipeline(queues, job, chosen, rounds)

    def _victims(self, queues, jobs, job, rounds, over_limit: bool, within: str | None = None):
        """(the units to evict for the job, or None; how: pipeline, reclaim or preempt)."""
        if not over_limit and rounds["victims"] and self._fits_without(job, [], rounds):
            return [], "pipeline"  # the room this round's victims leave is enough
        if not over_limit:
            chosen = self._reclaim(queues, jobs, job, rounds, within)
            if chosen is not None:
                return chosen, "reclaim"
        return self._preempt(jobs, job, rounds), "preempt"

    def _send_events(self, now: float) -> None:
        while self.unsent and self.unsent[0][0] <= now:
            _, group, message, at = self.unsent.pop(0)
            self.ctl.recorder.emit(group, "Normal", "Evict", message, pg.SCHEDULER_NAME, at=at)

    def _pipeline(self, queues, job, chosen, rounds) -> None:
        """The victims' room moves to the job, in every queue up the tree."""
        wanted = self._amounts(job.pending)
        for victim, unit in chosen:
            amounts = self._amounts(unit)
            for q in chain(queues, victim.queue):
                q.alloc.subtract(amounts)
                if not victim.preemptible:
                    q.alloc_np.subtract(amounts)
            for uid in unit:
                victim.running.remove(uid)
            rounds["victims"] += unit
        for q in chain(queues, job.queue):
            q.alloc.update(wanted)
            if not job.preemptible:
                q.alloc_np.update(wanted)
        rounds["pipelined"].append(job)

    def _units(self, job) -> list[list[str]]:
        """What an eviction takes: a gang whole, other jobs pod by pod (newest first)."""
        if job.min_member > 1:
            return [list(job.running)]
        return [[uid] for uid in sorted(job.running, key=self._created_at, reverse=True)]

    def _created_at(self, uid: str) -> str:
        found = self.store.get_uid(uid)
        return found[1]["metadata"].get("creationTimestamp", "") if found else ""

    def _pod_name(self, uid: str) -> str:
        found = self.store.get_uid(uid)
        return found[1]["metadata"]["name"] if found else ""

    def _reclaim(self, queues, jobs, job, rounds, within: str | None = None):
        """`within`: the parent queue at its limit, whose own queues are the only ones that may yield."""
        queue = queues[job.queue]
        wanted = self._amounts(job.pending)
        if not _may_reclaim(queue, job, wanted):
            return None
        candidates = [(other, unit) for other in jobs.values()
                      if other.queue != job.queue and other.preemptible and other.running and other.queue in queues
                      and (within is None or any(q.name == within for q in chain(queues, other.queue)))
                      for unit in self._units(other)]
        candidates.sort(key=lambda c: (-queues[c[0].queue].saturation(), c[0].priority, -c[0].created))
        remaining = {name: q.alloc["gpu"] for name, q in queues.items()}
        chosen = []
        for other, unit in candidates:
            mine, theirs = leveled(queues, job.queue, other.queue)
            if not _reclaimable(mine, theirs, remaining[theirs.name], wanted):
                continue  # in-quota work of a queue within its share is never reclaimed
            amount = self._amounts(unit)["gpu"]
            for q in chain(queues, other.queue):
                remaining[q.name] -= amount
            chosen.append((other, unit))
            if self._fits_without(job, [u for _, us in chosen for u in us], rounds):
                if _more_saturated(mine, theirs, remaining[theirs.name], wanted):
                    return None  # the reclaimer would end more saturated than the queue it took from
                return chosen
        return None

    def _preempt(self, jobs, job, rounds):
        candidates = [(other, unit) for other in jobs.values()
                      if other.queue == job.queue and other.preemptible and other.running
                      and other.priority < job.priority for unit in self._units(other)]
        candidates.sort(key=lambda c: (c[0].priority, -c[0].created))
        chosen = []
        for other, unit in candidates:
            chosen.append((other, unit))
            if self._fits_without(job, [u for _, us in chosen for u in us], rounds):
                return chosen
        return None

    def _fits_without(self, job, victims: list[str], rounds) -> bool:
        """Whether the job's pending pods would fit on the nodes with the victims' pods (and this round's earlier
        victims) gone and this round's pipelined jobs placed (a trial: the nodes are left as they were)."""
        nodes = self.nodes.nodes
        saved = [(n.free_cpu, n.free_memory, n.free_pods, list(n.devices), Counter(n.mig), Counter(n.other))
                 for n in nodes]
        alloc, freed = dict(self.nodes.alloc), self.nodes.freed
        try:
            for uid in [*rounds["victims"], *victims]:
                self.nodes.release(uid)
            for pending_job in [*rounds["pipelined"], job]:
                for uid in pending_job.pending:
                    namespace, name = self.pending[uid]
                    pod = self.store.get("pods", namespace, name)
                    if pod is None or isinstance(self.nodes._place(pod, self.reqs[uid], self.shard_nodes), str):
                        return False
            return True
        finally:
            for node, state in zip(nodes, saved, strict=True):
                node.free_cpu, node.free_memory, node.free_pods, node.devices, node.mig, node.other = state
            self.nodes.alloc.clear()
            self.nodes.alloc.update(alloc)
            self.nodes.freed = freed

    def _evict(self, queues, chosen, preemptor, action: str) -> None:
        namespace, name = preemptor.key
        for victim, unit in chosen:
            if action == "reclaim":
                mine_at, theirs_at = leveled(queues, preemptor.queue, victim.queue)
                details = "\n".join(details_text(q) for q in (theirs_at, mine_at))
            for uid in unit:
                pod_name = self._pod_name(uid)
                pod = self.store.get("pods", victim.key[0], pod_name)
                if pod is None:
                    continue
                if action == "reclaim":
                    message = (f"Pod {victim.key[0]}/{pod_name} was preempted by workload {namespace}/{name}.\n"
                               f"{details}")
                else:
                    message = (f"Pod {victim.key[0]}/{pod_name} was preempted by higher priority workload "
                               f"{namespace}/{name}")
                status = jcopy(pod.get("status") or {})
                conditions = [c for c in status.get("conditions") or [] if c["type"] != "DisruptionTarget"]
                conditions.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                                   "lastTransitionTime": now_rfc3339(), "reason": "PreemptionByScheduler",
                                   "message": message})
                pod = self.store.update("pods", {**pod, "metadata": dict(pod["metadata"]),
                                                 "status": {**status, "conditions": conditions}})
                group = self.store.get(pg.POD_GROUPS, victim.key[0], victim.key[1])
                if group is not None:
                    self.unsent.append((time.monotonic() + EVENT_LAG_SECONDS, group, message, now_rfc3339()))
                self.ctl.delete_object("pods", pod)
                self.evicted[uid] = (victim.key[0], pod_name)

    # --- what the cluster is told -----------------------------------------------------------------------------

    def _report(self, jobs, errors, task_errors) -> None:
        for job in jobs.values():
            group = self.store.get(pg.POD_GROUPS, *job.key)
            error = errors.get(job.key) if job.pending else None
            if error is None:
                if group is not None and (group.get("status") or {}).get("schedulingConditions"):
                    status = {**group["status"], "schedulingConditions": []}
                    self.store.update(pg.POD_GROUPS, {**group, "status": status})
                self.told.pop(job.key, None)
                continue
            reason, message, details = error
            job_message = f"{reason}: {message}."
            if group is not None and self.told.get(job.key) != job_message:
                self.told[job.key] = job_message
                self.ctl.recorder.emit(group, "Normal", "Unschedulable", job_message, pg.SCHEDULER_NAME)
                if not job.running:
                    explanation = {"reason": reason, "message": message, **({"details": details} if details else {})}
                    self._seq += 1
                    condition = {"type": "UnschedulableOnNodePool", "nodePool": "default", "reason": "Unschedulable",
                                 "message": job_message, "status": "True", "reasons": [explanation],
                                 "lastTransitionTime": now_rfc3339(), "transitionID": str(self._seq)}
                    status = {**(group.get("status") or {}), "schedulingConditions": [condition]}
                    self.store.update(pg.POD_GROUPS, {**group, "status": status})
            for uid in job.pending:
                told = task_errors.get(uid) or job_message
                if self.reported.get(uid) == told:
                    continue
                namespace, name = self.pending[uid]
                pod = self.store.get("pods", namespace, name)
                if pod is None:
                    continue
                self.reported[uid] = told
                status = {**(pod.get("status") or {}), "phase": "Pending",
                          "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                          "lastTransitionTime": now_rfc3339(), "reason": "Unschedulable",
                                          "message": told}]}
                self.store.update("pods", {**pod, "metadata": dict(pod["metadata"]), "status": status})
                self.ctl.recorder.emit(pod, "Warning", "Unschedulable", told, pg.SCHEDULER_NAME)

    def _write_statuses(self, queues, jobs) -> None:
        for job in jobs.values():
            group = self.store.get(pg.POD_GROUPS, *job.key)
            if group is None:
                continue
            running, pending = self._amounts(job.running), self._amounts(job.pending)
            resources = {"allocated": resource_list(running) if job.preemptible else {},
                         "allocatedNonPreemptible": {} if job.preemptible else resource_list(running),
                         "requested": resource_list(running + pending)}
            status = group.get("status") or {}
            if status.get("resourcesStatus") != resources:
                self.store.update(pg.POD_GROUPS, {**group, "status": {**status, "resourcesStatus": resources}})
        for q in queues.values():
            status = {**(q.obj.get("status") or {}), "allocated": resource_list(q.alloc),
                      "allocatedNonPreemptible": resource_list(q.alloc_np), "requested": resource_list(q.requested),
                      "childQueues": sorted(c.name for c in q.children)}
            if not status["childQueues"]:
                del status["childQueues"]
            if status != q.obj.get("status"):
                self.store.update(pg.QUEUES, {**q.obj, "metadata": dict(q.obj["metadata"]), "status": status})


def creation_ranks(created: dict) -> dict:
    """(namespace, pod group) -> its rank among equals in KAI's job order, from (creationTimestamp in seconds, UID)
    of each PodGroup (a time of None: not known, last). When no plugin tells two jobs apart (priority: the same
    priority; elastic: both below their minMember), KAI orders them by the PodGroup's creationTimestamp, then by
    its UID (NVIDIA/KAI-Scheduler pkg/scheduler/framework/session_plugins.go, Session.JobOrderFn): not by when
    their pods came, and groups made within one second (the API server stamps whole seconds) in the order of their
    random UIDs, not of their making. Victims are taken in the reverse order
    (pkg/scheduler/actions/utils/job_order_by_queue.go, VictimQueue: the newest first)."""
    def key(item):
        stamp, uid = item[1] or (None, "")
        return (stamp is None, stamp or 0.0, uid)
    return {k: rank for rank, (k, _) in enumerate(sorted(created.items(), key=key))}


def _limiting_queue(queues, job, wanted) -> str | None:
    """The first queue up the job's chain whose limit the job would pass (over_capacity's OverLimit)."""
    for q in chain(queues, job.queue):
        for res in ("gpu", "cpu", "memory"):
            if wanted[res] > EPS and q.limit[res] != UNLIMITED and q.limit[res] < q.alloc[res] + wanted[res] - EPS:
                return q.name
    return None


def _shard(queue: dict) -> str | None:
    return (queue["metadata"].get("labels") or {}).get(pg.POOL_LABEL)


def _may_reclaim(queue, job, wanted) -> bool:
    """CanReclaimResources: the reclaimer stays within its fair share (and, not preemptible, its quota)."""
    if queue.alloc["gpu"] + wanted["gpu"] > queue.fair + EPS:
        return False
    return job.preemptible or queue.quota["gpu"] == UNLIMITED or \
        queue.alloc_np["gpu"] + wanted["gpu"] <= queue.quota["gpu"] + EPS


def _reclaimable(mine, theirs, left: float, wanted) -> bool:
    """Their queue is over its fair share, or over its quota while mine is within its own."""
    under_quota = mine.quota["gpu"] == UNLIMITED or mine.alloc["gpu"] + wanted["gpu"] <= mine.quota["gpu"] + EPS
    over_quota = theirs.quota["gpu"] != UNLIMITED and left > theirs.quota["gpu"] + EPS
    return left > theirs.fair + EPS or (under_quota and over_quota)


def _more_saturated(mine, theirs, left: float, wanted) -> bool:
    mine_after = (mine.alloc["gpu"] + wanted["gpu"]) / mine.fair if mine.fair > EPS else math.inf
    theirs_after = left / theirs.fair if theirs.fair > EPS else math.inf
    return mine_after > 1 and theirs.fair > 0 and mine_after >= theirs_after
