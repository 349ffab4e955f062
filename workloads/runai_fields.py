"""Fields of Run:ai's workload view that we derive rather than store: category, priority class and priority,
node pool, allocated GPUs, time spent pending and running.

Each is written twice from one table: as a pure function of a workload's values (for answers) and as a
database expression (for `filterBy`/`sortBy`, in workloads.api.filtersets), so that a filter and the answer agree.
The API, the cluster loop and telemetry all read them: this module sits below them and the models (.importlinter)."""

from django.db.models import (
    Case,
    CharField,
    DateTimeField,
    DecimalField,
    DurationField,
    ExpressionWrapper,
    F,
    IntegerField,
    Value,
    When,
)
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Coalesce, JSONObject, NullIf
from django.db.models.lookups import Exact
from django.utils import timezone

from workloads.manifests import parts

# Run:ai's categories and default priority classes by workload kind; a spec may name its own.
CATEGORY = {"training": "Train", "workspace": "Build", "inference": "Deploy", "stream": "Deploy",
            "distributed": "Train"}
DEFAULT_PRIORITY_CLASS = parts.DEFAULT_PRIORITY_CLASS
# Run:ai's built-in priority classes and their values (a class of the cluster's own has no known value: null).
PRIORITY = {"inference": 125, "build": 100, "interactive-preemptible": 75, "train": 50}
# `preemptibility` (latest) chooses the class when the spec names none (as the manifests do).
PREEMPTIBILITY_CLASS = parts.PREEMPTIBILITY_CLASS
DEFAULT_NODE_POOL = "default"
TENANT_ID = 1  # one installation is one tenant
# Keys of the spec that the workload view needs; lists read only these (workloads.api), not the whole spec.
SPEC_KEYS = ("nodePools", "priorityClass", "preemptibility", "category", "image", "completions", "parallelism",
             "autoscaling", "distributedFramework", "minReplicas", "maxReplicas")
# Phases in which the workload's GPUs are held on a node.
ALLOCATED_PHASES = ("Initializing", "Running", "Degraded", "Updating", "Stopping", "Terminating")
# Phases in which a workload waits to run: the only ones in which its pending reason is shown.
WAITING_PHASES = frozenset({"Creating", "Pending", "Initializing", "Resuming"})


def category_of(kind: str, spec: dict | None) -> str:
    return (spec or {}).get("category") or CATEGORY.get(kind, "Train")


priority_class_of = parts.priority_class_of


def priority_of(priority_class: str) -> int | None:
    return PRIORITY.get(priority_class)


def node_pools_of(spec: dict | None) -> list[str]:
    return list((spec or {}).get("nodePools") or [DEFAULT_NODE_POOL])


def listed_pool_of(node_pool: str, spec: dict | None) -> str:
    """The pool the workload list shows, filters and sorts a workload by (`nodepool`): the one it was placed in,
    where its pods run; for a row not placed (kept from before placement was stored) the first it asked for."""
    return node_pool or node_pools_of(spec)[0] or DEFAULT_NODE_POOL


def placed_pool_of(node_pool: str) -> str:
    """The pool a workload was placed in at submission (`Workload.node_pool`), where its pods run; "" is the
    cluster's default pool (named `default`: studio.clusters.models.DEFAULT_NODE_POOL)."""
    return node_pool or DEFAULT_NODE_POOL


def spec_of(workload) -> dict:
    """The spec (a list row's holds only the keys of SPEC_KEYS: workloads.api.list_rows)."""
    return workload.spec or {}


def shown_spec_annotation() -> JSONObject:
    """The spec keys a list shows as one JSON object per row (`jsonb_build_object`): one decode a row, where a
    column per key was eleven; every key is present, null where the spec has none."""
    return JSONObject(**{key: KeyTransform(key, "spec") for key in SPEC_KEYS})


def preemptible_of(priority_class: str) -> bool | None:
    """Run:ai's train and interactive-preemptible classes may be preempted; build and inference not."""
    return {"train": True, "interactive-preemptible": True, "build": False, "inference": False}.get(priority_class)


def requested_pods_of(kind: str, requested: int, spec: dict) -> dict:
    """Run:ai's RequestedPods: a training's completions and parallelism, an inference's replica bounds."""
    if kind == "training":
        return {"number": requested, "completions": spec.get("completions") or 1,
                "parallelism": spec.get("parallelism") or 1}
    if kind == "inference":
        scaling = spec.get("autoscaling") or {}
        return {"number": requested, "min": scaling.get("minReplicas", 1),
                "max": scaling.get("maxReplicas", max(1, scaling.get("minReplicas", 1)))}
    if kind == "distributed" and (spec.get("minReplicas") or spec.get("maxReplicas")):
        return {"number": requested, "min": spec.get("minReplicas"), "max": spec.get("maxReplicas")}
    return {"number": requested}


def allocated_gpu_of(phase: str, gpu_request) -> float:
    return float(gpu_request) if phase in ALLOCATED_PHASES else 0.0


def running_end(completed_at, actual_phase: str, phase_updated_at):
    """When a workload's running time stops counting: when it finished, or while it is suspended (Stopped), when it
    stopped; None while it runs or waits (it counts to now)."""
    if completed_at is not None:
        return completed_at
    return phase_updated_at if actual_phase == "Stopped" else None


def seconds_between(start, end, now=None) -> int | None:
    """Whole seconds from `start` to `end`, or to `now` (the current time unless given) while `end` is None."""
    if start is None:
        return None
    return max(0, int(((end or now or timezone.now()) - start).total_seconds()))


# --- the same, as database expressions ----------------------------------------------------------------------


def _spec_text(key: str):
    return NullIf(KeyTextTransform(key, "spec"), Value(""))


def _by_kind(table: dict, output_field):
    return Case(*[When(kind=kind, then=Value(value)) for kind, value in table.items()],
                default=Value(next(iter(table.values()))), output_field=output_field)


def category_expression():
    return Coalesce(_spec_text("category"), _by_kind(CATEGORY, CharField()), output_field=CharField())


def priority_class_expression():
    by_preemptibility = Case(
        *[When(spec__preemptibility=value, then=Value(cls)) for value, cls in PREEMPTIBILITY_CLASS.items()],
        default=Value(None), output_field=CharField(),
    )
    return Coalesce(_spec_text("priorityClass"), by_preemptibility, _by_kind(DEFAULT_PRIORITY_CLASS, CharField()),
                    output_field=CharField())


def priority_expression():
    cls = priority_class_expression()
    return Case(*[When(Exact(cls, Value(name)), then=Value(value)) for name, value in PRIORITY.items()],
                default=Value(None), output_field=IntegerField())


def node_pool_expression():
    """listed_pool_of in the database: Run:ai's `nodepool` filter and sort field of the workload list."""
    first = KeyTextTransform("0", KeyTransform("nodePools", "spec"))
    return Coalesce(NullIf(F("node_pool"), Value("")), NullIf(first, Value("")), Value(DEFAULT_NODE_POOL),
                    output_field=CharField())


def placed_pool_expression():
    """placed_pool_of in the database: `node_pool`, "" as the default pool."""
    return Coalesce(NullIf(F("node_pool"), Value("")), Value(DEFAULT_NODE_POOL), output_field=CharField())


def allocated_gpu_expression():
    return Case(When(actual_phase__in=ALLOCATED_PHASES, then=F("gpu_request")), default=Value(0),
                output_field=DecimalField(max_digits=10, decimal_places=3))


def running_time_expression():
    """`running_end` as an expression: to completion, to the stop while Stopped, else to now."""
    now = Value(timezone.now(), output_field=DateTimeField())
    stopped = Case(When(actual_phase="Stopped", then=F("phase_updated_at")), default=None,
                   output_field=DateTimeField())
    return ExpressionWrapper(Coalesce(F("completed_at"), stopped, now) - F("started_at"), output_field=DurationField())


def pending_time_expression():
    now = Value(timezone.now(), output_field=DateTimeField())
    return ExpressionWrapper(Coalesce(F("started_at"), now) - F("created_at"), output_field=DurationField())


def distributed_framework_expression():
    """A distributed training's framework (PyTorch, TF, MPI, XGBoost, JAX); null for the other kinds."""
    return NullIf(KeyTextTransform("distributedFramework", "spec"), Value(""), output_field=CharField())


def null_expression(output_field):
    return lambda: Value(None, output_field=output_field)
