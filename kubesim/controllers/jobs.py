"""The Job controller: pods from the template up to `parallelism`, success after `completions`, failure past
`backoffLimit` or `activeDeadlineSeconds`, suspend/resume, `ttlSecondsAfterFinished`, and the status fields and
conditions (SuccessCriteriaMet/Complete, FailureTarget/Failed, Suspended) of a real 1.3x cluster."""

import time

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


def is_true(conditions: list, type_: str) -> bool:
    return any(c["type"] == type_ and c["status"] == "True" for c in conditions or [])


class JobController:
    def __init__(self, controller):
        self.ctl, self.store = controller, controller.store
        self.counted = set()  # pod uids already added to a Job's succeeded/failed counts

    def forget_pod(self, uid: str) -> None:
        self.counted.discard(uid)

    def sync(self, job: dict) -> None:
        spec, meta = job["spec"], job["metadata"]
        status = jcopy(job.get("status") or {})
        conditions = status.get("conditions") or []
        pods = self.ctl.owned_pods(job)
        for pod in pods:
            phase = (pod.get("status") or {}).get("phase")
            if phase in ("Succeeded", "Failed") and pod["metadata"]["uid"] not in self.counted:
                self.counted.add(pod["metadata"]["uid"])
                field = "succeeded" if phase == "Succeeded" else "failed"
                status[field] = status.get(field, 0) + 1
        active = [p for p in pods if not p["metadata"].get("deletionTimestamp")
                  and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        status["terminating"] = sum(1 for p in pods if p["metadata"].get("deletionTimestamp")
                                    and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        now = time.time()
        if is_true(conditions, "Complete") or is_true(conditions, "Failed"):
            return self._finished(job, status, active)
        if spec.get("suspend"):
            self._delete_pods(job, active)
            if not is_true(conditions, "Suspended"):
                conditions = condition(conditions, "Suspended", "True", "JobSuspended", "Job suspended")
                self.ctl.recorder.emit(job, "Normal", "Suspended", "Job suspended", COMPONENT)
            status.pop("startTime", None)
            return self._write(job, status, conditions, [])
        if any(c["type"] == "Suspended" and c["status"] == "True" for c in conditions):
            conditions = condition(conditions, "Suspended", "False", "JobResumed", "Job resumed")
            self.ctl.recorder.emit(job, "Normal", "Resumed", "Job resumed", COMPONENT)
        status.setdefault("startTime", now_rfc3339(now))
        restarts = sum(cs.get("restartCount", 0) for p in active
                       for cs in (p.get("status") or {}).get("containerStatuses") or [])
        if status.get("failed", 0) + restarts > spec.get("backoffLimit", 6):
            return self._fail(job, status, conditions, active, "BackoffLimitExceeded",
                              "Job has reached the specified backoff limit")
        deadline = spec.get("activeDeadlineSeconds")
        if deadline is not None:
            left = parse_rfc3339(status["startTime"]) + deadline - now
            if left <= 0:
                return self._fail(job, status, conditions, active, "DeadlineExceeded",
                                  "Job was active longer than specified deadline")
            self.ctl.after(left, "jobs.batch", meta["namespace"], meta["name"])
        succeeded, completions = status.get("succeeded", 0), spec.get("completions")
        if (completions is not None and succeeded >= completions) or (completions is None and succeeded
                                                                     and not active):
            self._delete_pods(job, active)
            conditions = condition(conditions, "SuccessCriteriaMet", "True", "CompletionsReached",
                                   "Reached expected number of succeeded pods")
            conditions = condition(conditions, "Complete", "True", "CompletionsReached",
                                   "Reached expected number of succeeded pods")
            status["completionTime"] = now_rfc3339(now)
            self.ctl.recorder.emit(job, "Normal", "Completed", "Job completed", COMPONENT)
            self._write(job, status, conditions, [])
            return self._schedule_ttl(job, status)
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

    def _fail(self, job, status, conditions, active, reason, message) -> None:
        self._delete_pods(job, active)
        conditions = condition(conditions, "FailureTarget", "True", reason, message)
        conditions = condition(conditions, "Failed", "True", reason, message)
        self.ctl.recorder.emit(job, "Warning", reason, message, COMPONENT)
        self._write(job, status, conditions, [])
        self._schedule_ttl(job, status)

    def _finished(self, job, status, active) -> None:
        self._delete_pods(job, active)
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
