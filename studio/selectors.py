"""Reads of the organisation that more than one view needs: members as access rules, users by subject id."""

from decimal import Decimal

from django.apps import apps
from django.contrib.auth import get_user_model
from django.db.models import (
    Case,
    DecimalField,
    Exists,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    Subquery,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from studio.models import LEVEL_RANK, AccessRule, Department, NodePool, Project


def user_by_subject_id(subject_id: str):
    """A user named as Run:ai names subjects: by username or email (or by our numeric id)."""
    users = get_user_model().objects
    match = Q(username=subject_id) | Q(email__iexact=subject_id) if "@" in subject_id else Q(username=subject_id)
    if subject_id.isdigit():
        match |= Q(pk=int(subject_id))
    return users.filter(match).order_by("pk").first()


def _rank(prefix: str = "") -> Case:
    return Case(*[When(**{f"{prefix}role__level": level}, then=Value(rank)) for level, rank in LEVEL_RANK.items()],
                output_field=IntegerField())


def project_members(project: Project):
    """Members of a project: one row per user — the user's highest project-scope rule there — in one query."""
    rules = AccessRule.objects.filter(scope_type=AccessRule.Scope.PROJECT, project=project,
                                      subject_type=AccessRule.Subject.USER)
    higher = rules.filter(user_id=OuterRef("user_id")).annotate(rank=_rank()).filter(
        Q(rank__gt=OuterRef("rank")) | Q(rank=OuterRef("rank"), pk__lt=OuterRef("pk"))
    )
    return rules.annotate(rank=_rank()).filter(~Exists(higher)).select_related("user", "role")


def node_pool_errors(project: Project, pools) -> dict:
    """{"spec.nodePools[i]": why} for each named pool the project cannot use: one its cluster lacks, or one
    outside the project's per-pool quotas (when it has any). One query. A workload naming such a pool would
    stay Pending for ever, so it is refused at submission."""
    names = [str(p) for p in pools or () if p]
    if not names:
        return {}
    known = set(NodePool.objects.filter(cluster_id=project.cluster_id).values_list("name", flat=True))
    allowed = {(r.get("nodePool") or {}).get("name") for r in project.node_pool_resources or ()} - {None} or known
    errors = {}
    for index, name in enumerate(names):
        if name not in known:
            errors[f"spec.nodePools[{index}]"] = (f"No node pool {name!r} on the project's cluster; "
                                                  f"its pools are: {', '.join(sorted(known)) or 'none'}.")
        elif name not in allowed:
            errors[f"spec.nodePools[{index}]"] = (f"Project {project.name} has no quota in node pool {name!r}; "
                                                  f"it may use: {', '.join(sorted(allowed))}.")
    return errors


# Phases in which a workload's pods hold their GPUs: workloads.runai_fields.ALLOCATED_PHASES (an app to the
# right, named here by value; tests/studio/test_runai_org_units.py checks that they agree).
ALLOCATED_PHASES = ("Initializing", "Running", "Degraded", "Updating", "Stopping", "Terminating")


def _workload_gpus(outer: str, condition: Q):
    """The sum of `gpu_request` over the live workloads matching `condition` of the outer project or department,
    as one correlated subquery (the model by name: studio does not import the workloads app)."""
    workload = apps.get_model("workloads", "Workload")
    rows = (workload.objects.filter(condition, deleted_at__isnull=True, **{outer: OuterRef("pk")})
            .order_by().values(outer).annotate(total=Sum("gpu_request")).values("total"))
    return Coalesce(Subquery(rows), Value(Decimal(0)), output_field=DecimalField(max_digits=12, decimal_places=3))


def gpu_allocated_expression(outer: str = "project_id"):
    return _workload_gpus(outer, Q(actual_phase__in=ALLOCATED_PHASES))


def gpu_requested_expression(outer: str = "project_id"):
    # What the quota counts (workloads.models.HOLDING_GPUS): meant to run and not finished.
    return _workload_gpus(outer, Q(desired_phase="Running", gpu_request__gt=0)
                          & ~Q(actual_phase__in=["Completed", "Failed"]))


def org_projects(user):
    """Projects as the org-unit API answers them: visible to `user`, with their GPU use, in one query."""
    return (Project.objects.visible_to(user).select_related("department", "cluster")
            .annotate(gpu_allocated=gpu_allocated_expression(), gpu_requested=gpu_requested_expression()))


def org_departments(user):
    """Departments as the org-unit API answers them, with their GPU use and their projects' quotas (2 queries)."""
    outer = "department_id"  # a workload keeps its department
    return (Department.objects.visible_to(user)
            .annotate(gpu_allocated=gpu_allocated_expression(outer), gpu_requested=gpu_requested_expression(outer))
            .prefetch_related(Prefetch("projects", queryset=Project.objects.only(
                "id", "department_id", "cluster_id", "node_pool_resources"))))
