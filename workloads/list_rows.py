"""The workload list's rows read with `values()`: the attributes WorkloadSerializer reads, without building a
model instance (and its project and department) per row, which was half the list's CPU."""

from types import SimpleNamespace

from profiles.selectors import profile_revision_subquery
from workloads import runai_fields as derived
from workloads.models import Workload

FIELDS = (
    "id", "name", "requested_name", "kind", "project_id", "project__name", "project__namespace", "department_id",
    "department__name", "cluster_id", "endpoints",
    "actual_phase", "phase_message", "desired_phase", "created_at", "updated_at", "phase_updated_at", "started_at",
    "completed_at", "deleted_at", "created_by_name", "running_pods", "requested_pods", "gpu_request", "source",
    "profile_id", "profile_name", "profile_revision", "pending_reason", "queue_position",
)


class ListedWorkload:
    """One row of `rows_of`; `spec` holds only the keys of SPEC_KEYS (all the list shows of the spec)."""

    Phase = Workload.Phase
    waiting_reason = Workload.waiting_reason
    waiting_position = Workload.waiting_position

    def __init__(self, row: dict):
        self.__dict__.update(row)
        self.project = SimpleNamespace(name=row["project__name"], namespace=row["project__namespace"])
        self.department = SimpleNamespace(name=row["department__name"])
        self.spec = {key: row[f"spec_{key}"] for key in derived.SPEC_KEYS}


def values_of(queryset):
    """The list's queryset (filtered and ordered) as the dicts ListedWorkload reads: the shown columns and a few
    keys of the spec, not its big JSON columns."""
    # the profile's current revision (its `outdated`): a correlated primary-key lookup per shown row
    return queryset.values(*FIELDS, **derived.spec_key_annotations(),
                           profile_current_revision=profile_revision_subquery())
