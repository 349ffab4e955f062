"""The create body of a distributed training (Run:ai tag Distributed: 2.18's fields, and latest's JAX,
cleanPodPolicy, mpiLauncherCreationPolicy and sshAuthMountPath): the workers' `spec`, and the master's
`masterSpec` unless `masterSpecSameAsWorker`. Pure, like the other kinds' specs."""

from workloads.specs.fields import Boolean, Choice, Integer, Text
from workloads.specs.kinds import TrainingSpec, WorkloadRequest
from workloads.specs.rules import ABSOLUTE

FRAMEWORKS = ("PyTorch", "TF", "MPI", "XGBoost", "JAX")
# Fields that only one framework's job has (Run:ai: "applicable only for PyTorch / MPI").
ONLY_FOR = {"minReplicas": "PyTorch", "maxReplicas": "PyTorch", "slotsPerWorker": "MPI",
            "sshAuthMountPath": "MPI", "mpiLauncherCreationPolicy": "MPI"}


class MasterSpec(TrainingSpec):
    """The master's pod (PyTorch/XGBoost Master, TF Chief, MPI Launcher): a training's fields, one pod."""

    completions = None
    parallelism = None
    backoffLimit = Integer(required=False, min_value=0)
    # The training operator's replica restart policies (ExitCode: restart on retryable exit codes only).
    restartPolicy = Choice(["Always", "OnFailure", "Never", "ExitCode"], required=False)


class DistributedSpec(MasterSpec):
    """The workers' pods, and the job's own fields."""

    distributedFramework = Choice(list(FRAMEWORKS))
    numWorkers = Integer(required=False, min_value=1, default=1)
    minReplicas = Integer(required=False, min_value=1)
    maxReplicas = Integer(required=False, min_value=1)
    slotsPerWorker = Integer(required=False, min_value=1)
    sshAuthMountPath = Text(required=False, validators=[ABSOLUTE])
    mpiLauncherCreationPolicy = Choice(["AtStartup", "WaitForWorkersReady"], required=False)
    cleanPodPolicy = Choice(["None", "All", "Running"], required=False)

    def cross_field_errors(self, values) -> dict:
        errors = dict(super().cross_field_errors(values))
        framework = values.get("distributedFramework")
        if framework:
            for name, only in ONLY_FOR.items():
                if values.get(name) is not None and framework != only:
                    errors[name] = f"Applies to {only} only; distributedFramework is {framework}."
        low, high = values.get("minReplicas"), values.get("maxReplicas")
        if low is not None and high is not None and high < low:
            errors["maxReplicas"] = f"Must be at least minReplicas ({low})."
        workers = values.get("numWorkers")
        if workers is not None and "numWorkers" not in errors:
            if low is not None and workers < low and "minReplicas" not in errors:
                errors["numWorkers"] = f"Must be at least minReplicas ({low})."
            elif high is not None and workers > high and "maxReplicas" not in errors:
                errors["numWorkers"] = f"Must be at most maxReplicas ({high})."
        return errors


class DistributedCreation(WorkloadRequest):
    """Create a distributed training (Run:ai DistributedCreationRequest): a Kubeflow Training Operator job."""

    masterSpecSameAsWorker = Boolean(required=False)
    masterSpec = MasterSpec(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, kind="training", **kwargs)
        self.fields["spec"] = DistributedSpec()

    def cross_field_errors(self, values):
        errors = dict(super().cross_field_errors(values))
        framework = (values.get("spec") or {}).get("distributedFramework")
        same = values.get("masterSpecSameAsWorker")
        if values.get("masterSpec") is not None:
            if same:
                errors["masterSpec"] = "Must be absent when masterSpecSameAsWorker is true."
            elif framework == "JAX":
                errors["masterSpec"] = "JAX jobs have workers only (worker 0 coordinates): no master."
        elif same is False and framework != "JAX":
            errors["masterSpec"] = "Required when masterSpecSameAsWorker is false."
        return errors


def master_spec_of(request: dict) -> dict | None:
    """The master's spec of a validated create body: its own, or the workers' (none for JAX)."""
    spec = request.get("spec") or {}
    if spec.get("distributedFramework") == "JAX":
        return None
    return request.get("masterSpec") or spec


def worker_count(spec: dict) -> int:
    """Worker pods the quota holds room for: numWorkers, or maxReplicas when an elastic job may grow to it."""
    return max(int(spec.get("numWorkers") or 1), int(spec.get("maxReplicas") or 0))


def replica_total(request: dict) -> int:
    """Pods the job asks for at start: the master (none for JAX) and numWorkers workers."""
    spec = request.get("spec") or {}
    return int(spec.get("numWorkers") or 1) + (1 if master_spec_of(request) is not None else 0)
