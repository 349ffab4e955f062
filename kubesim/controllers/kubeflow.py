"""The Kubeflow Training Operator (kubeflow.org/v1 PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob), as far as a
client can see it: one pod per replica and index, named `<job>-<type>-<index>` and labelled as the operator
labels them (`training.kubeflow.org/replica-type: master`, …); the job succeeds when its master replica
(Master, Chief, Launcher) succeeds, or, without one, when every worker has; a failed pod under restartPolicy
Never/ExitCode, or restarts past `runPolicy.backoffLimit`, fail it. `runPolicy.suspend` deletes the pods and
resumes by creating them again; `cleanPodPolicy` (All, Running, default None) and `ttlSecondsAfterFinished`
apply once it finished. Status: conditions Created, Running, Suspended, Succeeded, Failed with the operator's
reasons and messages, `replicaStatuses` per type, startTime and completionTime.

Not modelled: the per-replica headless Services, elastic scaling between minReplicas and maxReplicas (the job
runs its `replicas`), MPI's hostfile and SSH keys.
"""

import time

from ..errors import ApiError
from ..store import jcopy, now_rfc3339, parse_rfc3339
from .jobs import condition, is_true

KINDS = {  # store key -> (kind, replica specs field, master replica type or None)
    "pytorchjobs.kubeflow.org": ("PyTorchJob", "pytorchReplicaSpecs", "Master"),
    "tfjobs.kubeflow.org": ("TFJob", "tfReplicaSpecs", "Chief"),
    "mpijobs.kubeflow.org": ("MPIJob", "mpiReplicaSpecs", "Launcher"),
    "xgboostjobs.kubeflow.org": ("XGBoostJob", "xgbReplicaSpecs", "Master"),
    "jaxjobs.kubeflow.org": ("JAXJob", "jaxReplicaSpecs", None),
}
MASTERS = ("Master", "Chief", "Launcher")
LABEL = "training.kubeflow.org/"
PYTORCH_PORT = 23456


def pod_name(kind: str, job: str, rtype: str, index: int) -> str:
    """`<job>-<role>-<index>`, as the operator names a replica's pods; an MPIJob's one launcher is `<job>-launcher`."""
    return f"{job}-launcher" if kind == "MPIJob" and rtype == "Launcher" else f"{job}-{rtype.lower()}-{index}"


class KubeflowJobs:
    def __init__(self, controller):
        self.ctl, self.store = controller, controller.store

    def handlers(self) -> dict:
        return {key: (lambda obj, key=key: self.sync(key, obj)) for key in KINDS}

    def sync(self, key: str, job: dict) -> None:
        kind, field, master = KINDS[key]
        meta, spec = job["metadata"], job.get("spec") or {}
        name, component = meta["name"], f"{kind.lower()}-controller"
        replicas = spec.get(field) if isinstance(spec.get(field), dict) else {}
        master = master if master in replicas else next((t for t in MASTERS if t in replicas), None)
        run = spec.get("runPolicy") or {}
        status = jcopy(job.get("status") or {})
        conditions = status.get("conditions") or []
        pods = self.ctl.owned_pods(job)
        if not conditions:
            conditions = condition(conditions, "Created", "True", f"{kind}Created", f"{kind} {name} is created.")
            self.ctl.recorder.emit(job, "Normal", f"{kind}Created", f"{kind} {name} is created.", component)
        status["replicaStatuses"] = _replica_statuses(replicas, pods)
        if is_true(conditions, "Succeeded") or is_true(conditions, "Failed"):
            return self._finished(key, job, status, conditions, pods, run)
        if run.get("suspend"):
            self._delete(job, [p for p in pods if not _done(p)], component)
            if not is_true(conditions, "Suspended"):
                conditions = condition(conditions, "Suspended", "True", f"{kind}Suspended", f"{kind} {name} is suspended.")
                conditions = condition(conditions, "Running", "False", f"{kind}Suspended", f"{kind} {name} is suspended.")
            status.pop("startTime", None)
            return self._write(key, job, status, conditions)
        if is_true(conditions, "Suspended"):
            conditions = condition(conditions, "Suspended", "False", f"{kind}Resumed", f"{kind} {name} is resumed.")
        status.setdefault("startTime", now_rfc3339())
        failed = [p for p in pods if (p.get("status") or {}).get("phase") == "Failed"]
        restarts = sum(cs.get("restartCount", 0) for p in pods for cs in (p.get("status") or {}).get("containerStatuses") or [])
        if failed or ("backoffLimit" in run and restarts > run["backoffLimit"]):
            role = _labels(failed[0]).get(LABEL + "replica-type", "") if failed else ""
            message = (f"{kind} {name} is failed because 1 {role.capitalize()} replica(s) failed." if failed
                       else f"{kind} {name} has failed because it has reached the specified backoff limit")
            reason = f"{kind}Failed" if failed else "BackoffLimitExceeded"
            conditions = condition(conditions, "Running", "False", reason, message)
            conditions = condition(conditions, "Failed", "True", reason, message)
            status["completionTime"] = now_rfc3339()
            self.ctl.recorder.emit(job, "Warning", reason, message, component)
            return self._finished(key, job, status, conditions, pods, run)
        by_role = _by_role(pods)
        decider = [master] if master else list(replicas)
        if all(by_role.get(t) and all(_phase(p) == "Succeeded" for p in by_role[t]) for t in decider):
            message = f"{kind} {name} is successfully completed."
            conditions = condition(conditions, "Running", "False", f"{kind}Succeeded", message)
            conditions = condition(conditions, "Succeeded", "True", f"{kind}Succeeded", message)
            status["completionTime"] = now_rfc3339()
            self.ctl.recorder.emit(job, "Normal", f"{kind}Succeeded", message, component)
            return self._finished(key, job, status, conditions, pods, run)
        existing = {p["metadata"]["name"] for p in pods}
        for rtype, replica in replicas.items():
            for index in range(int((replica or {}).get("replicas", 1))):
                if pod_name(kind, name, rtype, index) not in existing:
                    self._create_pod(job, kind, rtype, index, replica, master, replicas, component)
        leader = by_role.get(master or "Worker") or []
        if any(_phase(p) == "Running" for p in leader) and not is_true(conditions, "Running"):
            conditions = condition(conditions, "Running", "True", f"{kind}Running", f"{kind} {name} is running.")
        status["replicaStatuses"] = _replica_statuses(replicas, self.ctl.owned_pods(job))
        self._write(key, job, status, conditions)

    def _create_pod(self, job, kind, rtype, index, replica, master, replicas, component) -> None:
        name = job["metadata"]["name"]
        template = jcopy((replica or {}).get("template") or {})
        meta, pod_spec = template.get("metadata") or {}, template.get("spec") or {}
        labels = {**(meta.get("labels") or {}), LABEL + "job-name": name, LABEL + "operator-name": "kubeflow.org",
                  LABEL + "replica-type": rtype.lower(), LABEL + "replica-index": str(index)}
        if rtype == master:
            labels[LABEL + "job-role"] = "master"
        restart = (replica or {}).get("restartPolicy") or "OnFailure"
        pod_spec["restartPolicy"] = "Never" if restart == "ExitCode" else restart
        if kind == "PyTorchJob":  # what the operator tells torch.distributed
            world = sum(int((r or {}).get("replicas", 1)) for r in replicas.values())
            rank = index + (1 if rtype == "Worker" and master else 0)
            env = [{"name": "MASTER_PORT", "value": str(PYTORCH_PORT)},
                   {"name": "MASTER_ADDR", "value": f"{name}-{(master or 'worker').lower()}-0"},
                   {"name": "WORLD_SIZE", "value": str(world)}, {"name": "RANK", "value": str(rank)},
                   {"name": "PYTHONUNBUFFERED", "value": "1"}]
            for container in pod_spec.get("containers") or []:
                container["env"] = [*(container.get("env") or []), *env]
        body = {"metadata": {**meta, "name": pod_name(kind, name, rtype, index), "labels": labels,
                             "ownerReferences": [self.ctl.owner_ref(job)]}, "spec": pod_spec}
        try:
            pod = self.ctl.create("pods", job["metadata"]["namespace"], body)
        except ApiError as exc:  # a pod of that name that is not ours: the operator reports it and waits
            if exc.code != 409:
                raise
            self.ctl.recorder.emit(job, "Warning", "FailedCreatePod", exc.message, component)
            return
        self.ctl.recorder.emit(job, "Normal", "SuccessfulCreatePod", f"Created pod: {pod['metadata']['name']}",
                               component)

    def _delete(self, job, pods, component) -> None:
        for pod in pods:
            self.ctl.delete_object("pods", pod)
            self.ctl.recorder.emit(job, "Normal", "SuccessfulDeletePod", f"Deleted pod: {pod['metadata']['name']}",
                                   component)

    def _finished(self, key, job, status, conditions, pods, run) -> None:
        policy = run.get("cleanPodPolicy") or "None"
        component = f"{KINDS[key][0].lower()}-controller"
        if policy == "All":
            self._delete(job, pods, component)
        elif policy == "Running":
            self._delete(job, [p for p in pods if not _done(p)], component)
        self._write(key, job, status, conditions)
        ttl = run.get("ttlSecondsAfterFinished")
        if ttl is None:
            return
        meta = job["metadata"]
        done_at = parse_rfc3339(status.get("completionTime") or now_rfc3339())
        if time.time() >= done_at + ttl:
            self.ctl.delete_object(key, job)
        else:
            self.ctl.after(done_at + ttl - time.time(), key, meta["namespace"], meta["name"])

    def _write(self, key, job, status, conditions) -> None:
        status["conditions"] = conditions
        if status != job.get("status"):
            self.store.update(key, {**job, "metadata": dict(job["metadata"]), "status": status})


def _labels(pod: dict) -> dict:
    return pod["metadata"].get("labels") or {}


def _phase(pod: dict) -> str:
    return (pod.get("status") or {}).get("phase") or "Pending"


def _done(pod: dict) -> bool:
    return _phase(pod) in ("Succeeded", "Failed")


def _by_role(pods: list) -> dict[str, list]:
    """Replica type (as the spec names it: Master, Worker) -> its pods."""
    roles: dict[str, list] = {}
    for pod in pods:
        rtype = _labels(pod).get(LABEL + "replica-type", "")
        roles.setdefault({"master": "Master", "chief": "Chief", "launcher": "Launcher", "worker": "Worker"}.get(
            rtype, rtype.capitalize()), []).append(pod)
    return roles


def _replica_statuses(replicas: dict, pods: list) -> dict:
    """The operator's ReplicaStatus per type: active, succeeded, failed (int32 omitempty: zeros are left out)."""
    by_role, out = _by_role(pods), {}
    for rtype in replicas:
        members = by_role.get(rtype, [])
        counts = {"active": sum(1 for p in members if _phase(p) in ("Pending", "Running")
                                and not p["metadata"].get("deletionTimestamp")),
                  "succeeded": sum(1 for p in members if _phase(p) == "Succeeded"),
                  "failed": sum(1 for p in members if _phase(p) == "Failed")}
        out[rtype] = {k: v for k, v in counts.items() if v}
    return out
