"""Request validation of the Run:ai workload spec (its fields as in the example bodies of workloads/api/seed_examples.py). Pure: no models, no DB.

`validate_workload_request` raises DRF's ValidationError with a nested `.detail` (dicts for objects, lists per
index for arrays) that studio.errors flattens to `spec.compute.gpuPortionRequest`, `spec.storage.pvc[0].claimInfo.size`.
Every problem is reported at once: unknown keys, each field, and the cross-field rules, which name the field they
fault. The normalised spec holds the caller's own values (2 stays 2, "10M" stays "10M"), in the caller's key
order, plus the few defaults Run:ai fills for absent fields. `null` for an optional field means absent, as Run:ai's
schema marks them nullable.
"""

import threading
from collections.abc import Mapping
from decimal import ROUND_CEILING, Decimal

from rest_framework.exceptions import ValidationError
from rest_framework.settings import api_settings

from studio.clusters.quantities import parse_quantity_strict
from workloads.specs.distributed import DistributedCreation, DistributedSpec, master_spec_of, worker_count
from workloads.specs.kinds import SPECS, WorkloadRequest
from workloads.specs.parts import PORTION_GRANULARITY
from workloads.specs.rules import KINDS, MIG_SLICES_RE, NAME_RULE_MESSAGE, is_valid_name

__all__ = [
    "NAME_RULE_MESSAGE",
    "gpu_request_of",
    "is_valid_name",
    "parse_quantity_strict",
    "pod_groups",
    "pods_at_most",
    "validate_spec",
    "validate_workload_request",
    "workload_cpu",
    "workload_cpu_use",
    "workload_gpus",
]
DISTRIBUTED = "distributed"
ALL_SPECS = {**SPECS, DISTRIBUTED: DistributedSpec}


def validate_workload_request(kind: str, data) -> dict:
    """The create body of a training, workspace, inference or distributed training, normalised;
    ValidationError lists every problem."""
    if kind == DISTRIBUTED:
        return _run(_serializer("request", DISTRIBUTED, DistributedCreation), data)
    return _run(_serializer("request", _checked(kind), lambda: WorkloadRequest(kind=kind)), data)


def validate_spec(kind: str, spec) -> dict:
    """A spec alone (profile launches, pages); error paths are relative to the spec (`compute.migProfile`)."""
    return _run(_serializer("spec", _checked(kind), ALL_SPECS[kind]), spec)


def _checked(kind):
    if kind not in ALL_SPECS:
        raise ValueError(f"Unknown workload kind {kind!r}; expected one of {', '.join(KINDS)}, {DISTRIBUTED}.")
    return kind


def workload_gpus(kind: str, request: dict) -> Decimal:
    """GPUs a validated create body (or `{"spec": spec}`) holds against the quota: each pod's GPUs times the pods it
    may run at once — a training's `parallelism`, an inference's `maxReplicas` (it may scale to them), a
    distributed training's master and workers (up to an elastic job's `maxReplicas`)."""
    return sum((gpu_request_of(spec) * pods for spec, pods in pod_groups(kind, request)), Decimal(0))


def pod_groups(kind: str, request: dict) -> list[tuple[Mapping, int]]:
    """(spec, the most pods of it that run at once) of each spec a validated create body holds: a distributed
    training's workers and master, any other kind's one spec."""
    spec = request["spec"]
    if kind != DISTRIBUTED:
        return [(spec, pods_at_most(kind, spec))]
    master = master_spec_of(request)
    return [(spec, worker_count(spec))] + ([(master, 1)] if master else [])


def workload_cpu(kind: str, request: dict) -> tuple[Decimal, Decimal]:
    """(CPU cores, memory bytes) a validated create body asks for over every pod it may run at once. A pod asks for
    its requests, or its limits where it gives only those (Kubernetes then makes the limit the request)."""
    cores = memory = Decimal(0)
    for spec, pods in pod_groups(kind, request):
        compute = spec.get("compute") or {}
        core = compute.get("cpuCoreRequest", compute.get("cpuCoreLimit"))
        size = compute.get("cpuMemoryRequest", compute.get("cpuMemoryLimit"))
        cores += pods * (Decimal(str(core)) if core is not None else 0)
        memory += pods * (parse_quantity_strict(size) if size is not None else 0)
    return cores, memory


# The most a stored CPU or memory sum holds: Kubernetes' own bound on one quantity.
MAX_AMOUNT = 2**63 - 1


def workload_cpu_use(kind: str, request: dict) -> tuple[int, int]:
    """(CPU millicores, memory bytes) of workload_cpu as the workload row keeps them for the quota numbers: whole
    millicores (Kubernetes' precision for CPU) and bytes, rounded up, at most 2^63-1."""
    cores, memory = workload_cpu(kind, request)
    return (min(MAX_AMOUNT, int((cores * 1000).to_integral_value(ROUND_CEILING))),
            min(MAX_AMOUNT, int(memory.to_integral_value(ROUND_CEILING))))


def pods_at_most(kind: str, spec: Mapping) -> int:
    """The most pods of one spec a training, workspace, inference or Kit stream runs at once."""
    if kind == "training":
        return max(1, int(spec.get("parallelism") or 1))
    if kind == "inference":
        auto = spec.get("autoscaling") if isinstance(spec.get("autoscaling"), Mapping) else {}
        return max(1, int(auto.get("maxReplicas") or 0), int(auto.get("minReplicas") or 0))
    return 1


_built = threading.local()


def _serializer(role: str, kind: str, make):
    """One validating serializer per kind and thread, built once: building one deep-copies its ~80 declared
    fields (2 ms of a submission's CPU). Validation keeps no state on it (`run_validation` returns or raises),
    and a thread validates one body at a time."""
    cache = getattr(_built, "serializers", None)
    if cache is None:
        cache = _built.serializers = {}
    serializer = cache.get((role, kind))
    if serializer is None:
        serializer = cache[(role, kind)] = make()
    return serializer


def _run(serializer, data) -> dict:
    if not isinstance(data, Mapping):  # DRF would answer a bare list for null
        raise ValidationError({api_settings.NON_FIELD_ERRORS_KEY: ["Must be a JSON object."]})
    return dict(serializer.run_validation(data))


def gpu_request_of(spec: Mapping) -> Decimal:
    """GPUs a validated spec asks for, for quotas.

    Whole devices without a request type; portion: devices x portion; memory: whole devices, since the size of
    the GPU it lands on is unknown when the quota is checked (charging a full device never overcommits);
    migProfile: devices x (compute slices of the profile / 7).
    """
    compute = spec.get("compute") or {}
    devices = Decimal(compute.get("gpuDevicesRequest", 0))
    kind = compute.get("gpuRequestType")
    if kind is not None and "gpuDevicesRequest" not in compute:
        devices = Decimal(1)
    if kind == "portion":  # at least the granularity: a spec stored before it was checked is charged that too
        return devices * max(PORTION_GRANULARITY, Decimal(str(compute.get("gpuPortionRequest", 1))))
    if kind == "migProfile":
        slices = MIG_SLICES_RE.match(compute.get("migProfile", "7g."))
        return devices * Decimal(slices.group(1)) / 7
    return devices
