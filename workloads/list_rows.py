"""The workload list's rows read with `values()`: the attributes WorkloadSerializer reads, without building a
model instance (and its project and department) per row, which was half the list's CPU."""

from functools import cache
from types import SimpleNamespace

from django.db import connections
from django.db.models import IntegerField, JSONField
from django.db.models.expressions import RawSQL

from profiles.models import ServiceProfile
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
        self.spec = row["shown_spec"]


@cache
def _annotation_sql() -> tuple[str, str]:
    """PostgreSQL: the two computed columns as SQL written once. As ORM expressions (a JSONObject of eleven key
    transforms, a Subquery) they were rebuilt and compiled on every request, 1.3 ms of a list's 9 ms CPU. Same
    SQL as those expressions compile to, same rows (tests/workloads/test_list_rows.py)."""
    table, profiles = Workload._meta.db_table, ServiceProfile._meta.db_table
    # the spec keys a list shows as one JSON object per row: one decode a row; every key present, null if unset
    shown_spec = "jsonb_build_object({})".format(", ".join(
        f"'{key}', \"{table}\".\"spec\" -> '{key}'" for key in derived.SPEC_KEYS))
    # the profile's current revision (its `outdated`): a correlated primary-key lookup per shown row
    current_revision = (f'(SELECT "{profiles}"."revision" FROM "{profiles}" '
                        f'WHERE "{profiles}"."id" = "{table}"."profile_id")')
    return shown_spec, current_revision


def values_of(queryset):
    """The list's queryset (filtered and ordered) as the dicts ListedWorkload reads: the shown columns and a few
    keys of the spec, not its big JSON columns."""
    if connections[queryset.db].vendor != "postgresql":  # SQLite (make run): the portable ORM expressions
        return queryset.values(*FIELDS, shown_spec=derived.shown_spec_annotation(),
                               profile_current_revision=profile_revision_subquery())
    shown_spec, current_revision = _annotation_sql()
    return queryset.values(*FIELDS, shown_spec=RawSQL(shown_spec, (), output_field=JSONField()),
                           profile_current_revision=RawSQL(current_revision, (), output_field=IntegerField()))
