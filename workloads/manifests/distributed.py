"""A distributed training -> a Kubeflow Training Operator job (`kubeflow.org/v1`), and a PodGroup for gang
scheduling where the cluster serves one. Pure, like workloads.manifests.objects, whose pod template it reuses per role.

| distributedFramework | kind | replica specs | master role |
|---|---|---|---|
| PyTorch | PyTorchJob | pytorchReplicaSpecs | Master (+ elasticPolicy from minReplicas/maxReplicas) |
| TF | TFJob | tfReplicaSpecs | Chief |
| MPI | MPIJob | mpiReplicaSpecs | Launcher (+ slotsPerWorker) |
| XGBoost | XGBoostJob | xgbReplicaSpecs | Master |
| JAX | JAXJob | jaxReplicaSpecs | none: worker 0 coordinates |

The job succeeds when its master succeeds (JAX: its workers), as the training operator decides. Run:ai's job
fields go to `runPolicy` (cleanPodPolicy, backoffLimit, ttlSecondsAfterFinished, suspend, schedulingPolicy).
The MPI fields that only MPIJob v2beta1 has (sshAuthMountPath, mpiLauncherCreationPolicy) are kept as
annotations on the job, for whoever runs the MPI operator's v2 API.
"""

from __future__ import annotations

from dataclasses import dataclass

from workloads.manifests import objects as m

KUBEFLOW_API = "kubeflow.org/v1"
KUBEFLOW_GROUP = "kubeflow.org"


@dataclass(frozen=True)
class Framework:
    kind: str
    replica_specs: str
    master: str | None  # the replica type that decides the job's end
    container: str      # the container the operator configures (env, ports): its default container name


FRAMEWORKS = {
    "PyTorch": Framework("PyTorchJob", "pytorchReplicaSpecs", "Master", "pytorch"),
    "TF": Framework("TFJob", "tfReplicaSpecs", "Chief", "tensorflow"),
    "MPI": Framework("MPIJob", "mpiReplicaSpecs", "Launcher", "mpi"),
    "XGBoost": Framework("XGBoostJob", "xgbReplicaSpecs", "Master", "xgboost"),
    "JAX": Framework("JAXJob", "jaxReplicaSpecs", None, "jax"),
}
JOB_KINDS = [(KUBEFLOW_API, f.kind) for f in FRAMEWORKS.values()]
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"  # set on each pod by the operator (lower case)
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
JOB_NAME_LABEL = "training.kubeflow.org/job-name"
SSH_MOUNT_ANNOTATION = "paas-studio/mpi-ssh-auth-mount-path"
LAUNCHER_POLICY_ANNOTATION = "paas-studio/mpi-launcher-creation-policy"

# Gang scheduling: the PodGroup API of each supported scheduler -> (kind, scheduler name, how pods join).
SCHEDULER_PLUGINS = "scheduling.x-k8s.io"
VOLCANO = "scheduling.volcano.sh"
GANG = {
    SCHEDULER_PLUGINS: ("scheduling.x-k8s.io/v1alpha1", "scheduler-plugins-scheduler",
                        ("label", "scheduling.x-k8s.io/pod-group")),
    VOLCANO: ("scheduling.volcano.sh/v1beta1", "volcano", ("annotation", "scheduling.k8s.io/group-name")),
}
POD_GROUP_KINDS = [(api, "PodGroup") for api, _, _ in GANG.values()]


def framework_of(spec: dict) -> Framework:
    return FRAMEWORKS.get(spec.get("distributedFramework") or "PyTorch", FRAMEWORKS["PyTorch"])


def job_kind(spec: dict) -> tuple[str, str]:
    return KUBEFLOW_API, framework_of(spec).kind


def gang_group(groups) -> str | None:
    """The PodGroup API to use among the cluster's API groups: scheduler-plugins first, then Volcano."""
    return next((g for g in (SCHEDULER_PLUGINS, VOLCANO) if g in groups), None)


def replica_counts(spec: dict, master: dict | None) -> dict[str, int]:
    """Replica type -> pods, as the job asks for them."""
    fw = framework_of(spec)
    counts = {fw.master: 1} if fw.master and master is not None else {}
    return {**counts, "Worker": int(spec.get("numWorkers") or 1)}


def build(ref: m.WorkloadRef, spec: dict, *, master: dict | None, gang: str | None = None,
          gpu_scheduler: str = "runai-scheduler", min_available: bool = False, node_pools=None) -> list[dict]:
    """Claims, the PodGroup (when `gang` names a PodGroup API the cluster serves), the job, Services and
    Ingress of the workers' ports. `min_available`: the gang's size in the job's `schedulingPolicy` even with
    no PodGroup of ours (KAI's pod-grouper reads it)."""
    fw = framework_of(spec)
    name = m.object_name(ref)
    roles = [("Worker", spec)] + ([(fw.master, master)] if fw.master and master is not None else [])
    counts = replica_counts(spec, master)
    elastic = spec.get("minReplicas") is not None or spec.get("maxReplicas") is not None
    min_member = sum(counts.values()) - counts["Worker"] + int(spec.get("minReplicas") or counts["Worker"])
    objects, claim_names, replica_specs = [], set(), {}
    for role, role_spec in sorted(roles, key=lambda r: r[0] != fw.master):  # the master first, as kubectl shows
        template, claims = m.pod_template(ref, role_spec, knative=False, gpu_scheduler=gpu_scheduler,
                                          node_pools=node_pools)
        for claim in claims:
            if claim["name"] not in claim_names:
                claim_names.add(claim["name"])
                objects.append(m.claim(ref, role_spec, claim))
        template["spec"]["containers"][0]["name"] = fw.container
        if gang:
            _join_gang(template, gang, name)
        replica_specs[role] = {"replicas": counts[role], "restartPolicy": role_spec.get("restartPolicy") or "OnFailure",
                               "template": template}
    run_policy: dict = {"suspend": ref.suspended}
    for key in ("cleanPodPolicy", "backoffLimit"):
        if spec.get(key) is not None:
            run_policy[key] = spec[key]
    if spec.get("autoDeletionTimeAfterCompletionSeconds") is not None:
        run_policy["ttlSecondsAfterFinished"] = spec["autoDeletionTimeAfterCompletionSeconds"]
    if gang or min_available:
        run_policy["schedulingPolicy"] = {"minAvailable": min_member}
    body: dict = {"runPolicy": run_policy, fw.replica_specs: replica_specs}
    if fw.kind == "PyTorchJob" and elastic:
        body["elasticPolicy"] = {"rdzvBackend": "c10d", "minReplicas": int(spec.get("minReplicas") or 1),
                                 "maxReplicas": int(spec.get("maxReplicas") or counts["Worker"])}
    annotations = m.workload_annotations(spec)
    if fw.kind == "MPIJob":
        if spec.get("slotsPerWorker") is not None:
            body["slotsPerWorker"] = spec["slotsPerWorker"]
        if spec.get("sshAuthMountPath"):
            annotations[SSH_MOUNT_ANNOTATION] = str(spec["sshAuthMountPath"])
        if spec.get("mpiLauncherCreationPolicy"):
            annotations[LAUNCHER_POLICY_ANNOTATION] = str(spec["mpiLauncherCreationPolicy"])
    if gang:
        objects.append(m.k8s_object((GANG[gang][0], "PodGroup"), m.metadata(ref, spec, name),
                                 {"minMember": min_member}))
    objects.append(m.k8s_object(job_kind(spec), m.metadata(ref, spec, name, annotations), body))
    services = m.services(ref, spec)
    ingress = m.ingress(ref, spec, services)
    return objects + services + ([ingress] if ingress else [])


def _join_gang(template: dict, gang: str, group: str) -> None:
    _, scheduler, (where, key) = GANG[gang]
    template["spec"].setdefault("schedulerName", scheduler)
    meta = template["metadata"]
    if where == "label":
        meta["labels"][key] = group
    else:
        meta.setdefault("annotations", {})[key] = group


def suspend_patch(spec: dict, *, suspended: bool) -> tuple[str, str, dict]:
    return (*job_kind(spec), {"spec": {"runPolicy": {"suspend": suspended}}})
