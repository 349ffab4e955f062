"""The Kubeflow Training Operator (kubeflow.org/v1 PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob), as far as a
client can see it: one pod per replica and index, named `<job>-<type>-<index>` and labelled as the operator
labels them (`training.kubeflow.org/replica-type: master`, …); the job succeeds when its master replica
(Master, Chief, Launcher) succeeds, or, without one, when every worker has; a failed pod under restartPolicy
Never/ExitCode, or restarts past `runPolicy.backoffLimit`, fail it. `runPolicy.suspend` deletes the pods and
resumes by creating them again; `cleanPodPolicy` (All, Running, default None) and `ttlSecondsAfterFinished`
apply once it finished. Status: conditions Created, Running, Suspended, Succeeded, Failed with the operator's
reasons and messages, `replicaStatuses` per type, startTime and completionTime.

The operator's decisions (created, finished, suspend, resume, start, a replica failed, backoff limit, succeeded)
are the stages in kubesim/stages/training.yaml; where none ends a sync, the job runs.

Not modelled: the per-replica headless Services, elastic scaling between minReplicas and maxReplicas (the job
runs its `replicas`), MPI's hostfile and SSH keys.
"""

import time

from ..errors import ApiError
from ..node import stages
from ..store import jcopy, now_rfc3339, parse_rfc3339
from .jobs import condition, is_true, next_status

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
        self.stages = stages.load("TrainingJob")

    def handlers(self) -> dict:
        return {key: (lambda obj, key=key: self.sync(key, obj)) for key in KINDS}

    def sync(self, key: str, job: dict) -> None:
        """Play the job's stages (kubesim/stages/training.yaml); where none ended the sync, run its replicas."""
        kind, replicas = KINDS[key][0], self._replicas(key, job)[0]
        status = jcopy(job.get("status") or {})
        pods = self.ctl.owned_pods(job)
        status["replicaStatuses"] = _replica_statuses(replicas, pods)
        conditions, now = [status.get("conditions") or []], time.time()
        words = {"kind": kind, "name": job["metadata"]["name"], "role": ""}

        def apply(stage):
            conditions[0] = self.apply(stage, key, job, status, conditions[0], pods, words, now)

        ended, _ = stages.play(self.stages, lambda: self.view(key, job, {**status, "conditions": conditions[0]},
                                                                 pods, words), lambda: now, now, apply)
        if not ended:
            self._run(key, job, replicas, status, conditions[0], pods)

    def view(self, key: str, job: dict, status: dict, pods: list, words: dict) -> dict:
        """The job as its stages see it: its status as this sync has it, and the operator's facts."""
        run, conditions = (job.get("spec") or {}).get("runPolicy") or {}, status.get("conditions") or []
        replicas, master = self._replicas(key, job)
        failed = [p for p in pods if _phase(p) == "Failed"]
        restarts = sum(cs.get("restartCount", 0) for p in pods
                       for cs in (p.get("status") or {}).get("containerStatuses") or [])
        by_role = _by_role(pods)
        decider = [master] if master else list(replicas)
        words["role"] = _labels(failed[0]).get(LABEL + "replica-type", "").capitalize() if failed else ""
        return {**job, "status": status, "training": {
            "finished": is_true(conditions, "Succeeded") or is_true(conditions, "Failed"),
            "failedRole": words["role"] if failed else None,
            "backoffExceeded": "backoffLimit" in run and restarts > run["backoffLimit"],
            "succeeded": all(by_role.get(t) and all(_phase(p) == "Succeeded" for p in by_role[t]) for t in decider)}}

    def apply(self, stage, key: str, job: dict, status: dict, conditions: list, pods: list, words: dict,
              now: float) -> list:
        """A stage's `next`; the job's conditions after it."""
        nxt, component = stage.next, f"{KINDS[key][0].lower()}-controller"
        if nxt.get("deletePods") == "running":
            self._delete(job, [p for p in pods if not _done(p)], component)
        conditions = next_status(nxt, status, conditions, now, words)
        if nxt.get("event"):
            event = {k: v.format_map(words) for k, v in nxt["event"].items()}
            self.ctl.recorder.emit(job, event["type"], event["reason"], event["message"], component)
        if nxt.get("finished"):
            self._finished(key, job, status, conditions, pods, (job.get("spec") or {}).get("runPolicy") or {})
        elif not nxt.get("continue"):
            self._write(key, job, status, conditions)
        return conditions

    def _replicas(self, key: str, job: dict) -> tuple[dict, str | None]:
        """The job's replica specs by type, and its master replica type (or None)."""
        _kind, field, master = KINDS[key]
        spec = job.get("spec") or {}
        replicas = spec.get(field) if isinstance(spec.get(field), dict) else {}
        return replicas, master if master in replicas else next((t for t in MASTERS if t in replicas), None)

    def _run(self, key: str, job: dict, replicas: dict, status: dict, conditions: list, pods: list) -> None:
        """A pod per replica and index that has none; Running once the leader (master, or a worker) runs."""
        kind, name = KINDS[key][0], job["metadata"]["name"]
        component, master = f"{kind.lower()}-controller", self._replicas(key, job)[1]
        existing = {p["metadata"]["name"] for p in pods}
        for rtype, replica in replicas.items():
            for index in range(int((replica or {}).get("replicas", 1))):
                if pod_name(kind, name, rtype, index) not in existing:
                    self._create_pod(job, kind, rtype, index, replica, master, replicas, component)
        leader = _by_role(pods).get(master or "Worker") or []
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
            env = _pytorch_env(name, rtype, index, master, replicas)
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


def _pytorch_env(name: str, rtype: str, index: int, master: str | None, replicas: dict) -> list[dict]:
    world = sum(int((r or {}).get("replicas", 1)) for r in replicas.values())
    rank = index + (1 if rtype == "Worker" and master else 0)
    return [{"name": "MASTER_PORT", "value": str(PYTORCH_PORT)},
            {"name": "MASTER_ADDR", "value": f"{name}-{(master or 'worker').lower()}-0"},
            {"name": "WORLD_SIZE", "value": str(world)}, {"name": "RANK", "value": str(rank)},
            {"name": "PYTHONUNBUFFERED", "value": "1"}]


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
