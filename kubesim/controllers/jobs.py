"""The Job controller: pods from the template up to `parallelism`, success after `completions`, failure past
`backoffLimit` or `activeDeadlineSeconds`, suspend/resume, `ttlSecondsAfterFinished`, and the status fields and
conditions (SuccessCriteriaMet/Complete, FailureTarget/Failed, Suspended) of a real 1.3x cluster. The decisions
on a Job (finished, suspend, resume, start, backoff limit, deadline, complete) are the stages in
kubesim/stages/job.yaml; where none ends a sync, the Job runs."""

import time

from ..node import stages
from ..store import jcopy, now_rfc3339, parse_rfc3339

COMPONENT = "job-controller"


def condition(conditions: list, type_: str, status: str, reason: str, message: str) -> list:
    """conditions with type_ set; lastTransitionTime moves only when the status does."""
    now = now_rfc3339()
    out, found = [], False
    for cond in conditions:
        if cond["type"] == type_:
            found = True
            changed = cond["status"] != status
            cond = {**cond, "status": status, "reason": reason, "message": message,
                    "lastProbeTime": now if changed else cond.get("lastProbeTime"),
                    "lastTransitionTime": now if changed else cond["lastTransitionTime"]}
        out.append(cond)
    if not found:
        out.append({"type": type_, "status": status, "lastProbeTime": now, "lastTransitionTime": now,
                    "reason": reason, "message": message})
    return out


def next_status(nxt: dict, status: dict, conditions: list, now: float, words: dict | None = None) -> list:
    """A stage's conditions (set in order), status fields ("now": the time) and removeStatus, on a status; its
    conditions after. Texts are format strings over `words`."""
    for cond in nxt.get("conditions") or []:
        cond = {k: v.format_map(words or {}) for k, v in cond.items()}
        conditions = condition(conditions, cond["type"], cond["status"], cond["reason"], cond["message"])
    for field, value in (nxt.get("status") or {}).items():
        status[field] = now_rfc3339(now) if value == "now" else value
    for field in nxt.get("removeStatus") or []:
        status.pop(field, None)
    return conditions


def is_true(conditions: list, type_: str) -> bool:
    return any(c["type"] == type_ and c["status"] == "True" for c in conditions or [])


class JobController:
    def __init__(self, controller):
        self.ctl, self.store = controller, controller.store
        self.counted = set()  # pod uids already added to a Job's succeeded/failed counts
        self.stages = stages.load("Job")

    def forget_pod(self, uid: str) -> None:
        self.counted.discard(uid)

    def sync(self, job: dict) -> None:
        """Count the finished pods, play the Job's stages (kubesim/stages/job.yaml), and, where none ended the
        sync, run: pods up to the parallelism."""
        status = jcopy(job.get("status") or {})
        pods = self.ctl.owned_pods(job)
        self._count(pods, status)
        active = [p for p in pods if not p["metadata"].get("deletionTimestamp") and not _done(p)]
        status["terminating"] = sum(1 for p in pods if p["metadata"].get("deletionTimestamp") and not _done(p))
        conditions, ended = self._play(job, status, active, time.time())
        if not ended:
            self._run(job, status, conditions, active)

    def _count(self, pods: list, status: dict) -> None:
        for pod in pods:
            phase = (pod.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed") and pod["metadata"]["uid"] not in self.counted:
                self.counted.add(pod["metadata"]["uid"])
                field = "succeeded" if phase == "Succeeded" else "failed"
                status[field] = status.get(field, 0) + 1

    def view(self, job: dict, status: dict, active: list) -> dict:
        """The Job as its stages see it: its status as this sync has it, and the controller's facts."""
        spec, conditions = job["spec"], status.get("conditions") or []
        restarts = sum(cs.get("restartCount", 0) for p in active
                       for cs in (p.get("status") or {}).get("containerStatuses") or [])
        succeeded, completions = status.get("succeeded", 0), spec.get("completions")
        reached = (completions is not None and succeeded >= completions) or (completions is None and succeeded
                                                                            and not active)
        return {**job, "status": status,
                "job": {"finished": is_true(conditions, "Complete") or is_true(conditions, "Failed"),
                        "backoffExceeded": status.get("failed", 0) + restarts > spec.get("backoffLimit", 6),
                        "completionsReached": bool(reached)}}

    def _play(self, job: dict, status: dict, active: list, now: float) -> tuple[list, bool]:
        """Apply the Job's stages that are due, in order; (its conditions, whether a stage ended the sync)."""
        conditions = [status.get("conditions") or []]

        def apply(stage):
            conditions[0] = self.apply(stage, job, status, conditions[0], active, now)

        ended, pending = stages.play(self.stages, lambda: self.view(job, status, active),
                                     lambda: parse_rfc3339(status["startTime"]) if status.get("startTime") else now,
                                     now, apply)
        if pending is not None:  # looked at again then (a deadline)
            self.ctl.after(pending - now, "jobs.batch", job["metadata"]["namespace"], job["metadata"]["name"])
        return conditions[0], ended

    def apply(self, stage, job: dict, status: dict, conditions: list, active: list, now: float) -> list:
        """A stage's `next`; the Job's conditions after it."""
        nxt = stage.next
        if nxt.get("deletePods") == "active":
            self._delete_pods(job, active)
        if nxt.get("finished"):
            self._finished(job, status)
            return conditions
        conditions = next_status(nxt, status, conditions, now)
        if nxt.get("event"):
            event = nxt["event"]
            self.ctl.recorder.emit(job, event["type"], event["reason"], event["message"], COMPONENT)
        if not nxt.get("continue"):
            self._write(job, status, conditions, [])
        if nxt.get("ttl"):
            self._schedule_ttl(job, status)
        return conditions

    def _run(self, job: dict, status: dict, conditions: list, active: list) -> None:
        spec, succeeded, completions = job["spec"], status.get("succeeded", 0), job["spec"].get("completions")
        want = spec.get("parallelism", 1)
        if completions is not None:
            want = min(want, completions - succeeded)
        elif succeeded:
            want = len(active)  # work-queue jobs start no new pods once one succeeded
        for _ in range(max(0, want - len(active))):
            active.append(self._create_pod(job))
        if len(active) > want:
            self._delete_pods(job, active[want:])
            active = active[:want]
        self._write(job, status, conditions, active)

    def _create_pod(self, job: dict) -> dict:
        template = jcopy(job["spec"]["template"])
        annotations = template["metadata"].get("annotations") or {}
        run = (job["metadata"].get("annotations") or {}).get("kubesim.paas-studio/run-seconds")
        if run is not None and "kubesim.paas-studio/run-seconds" not in annotations:
            template["metadata"]["annotations"] = {**annotations, "kubesim.paas-studio/run-seconds": run}
        pod = self.ctl.create_pod(job, template, job["metadata"]["name"] + "-")
        self.ctl.recorder.emit(job, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", COMPONENT)
        return pod

    def _delete_pods(self, job: dict, pods: list) -> None:
        for pod in pods:
            self.ctl.delete_object("pods", pod)
            self.ctl.recorder.emit(job, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}",
                                   COMPONENT)

    def _finished(self, job, status) -> None:
        self._write(job, status, status.get("conditions") or [], [])
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        finished = max((parse_rfc3339(c["lastTransitionTime"]) for c in status.get("conditions") or []
                        if c["type"] in ("Complete", "Failed") and c["status"] == "True"), default=time.time())
        if time.time() >= finished + ttl:
            # The TTL-after-finished controller deletes with foreground propagation.
            self.ctl.delete_object("jobs.batch", job, "Foreground")
        else:
            self._schedule_ttl(job, status)

    def _schedule_ttl(self, job, status) -> None:
        ttl = job["spec"].get("ttlSecondsAfterFinished")
        if ttl is not None:
            self.ctl.after(ttl, "jobs.batch", job["metadata"]["namespace"], job["metadata"]["name"])

    def _write(self, job, status, conditions, active) -> None:
        ready = sum(1 for p in active if any(c["type"] == "Ready" and c["status"] == "True"
                                             for c in (p.get("status") or {}).get("conditions") or []))
        status["active"] = len(active)
        status["ready"] = ready
        status.setdefault("uncountedTerminatedPods", {})
        if conditions:
            status["conditions"] = conditions
        for field in ("active", "succeeded", "failed"):  # int32 omitempty in the Go type: zeros are not sent
            if not status.get(field):
                status.pop(field, None)
        if status != job.get("status"):
            self.store.update("jobs.batch", {**job, "metadata": dict(job["metadata"]), "status": status})


def _done(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
