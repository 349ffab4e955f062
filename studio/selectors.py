"""Reads of the organisation that more than one view needs: members as access rules, users by subject id."""

from decimal import Decimal

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

from studio.clusters.models import node_pool_labels  # noqa: F401  (the pools' labels, read here too)
from studio.ids import is_id, parse_id
from studio.models import (
    LEVEL_RANK,
    AccessRule,
    Department,
    NodePool,
    Project,
)
from studio.org.numbers import GpuUse, gpu_use, quota_numbers, register_gpu_use  # noqa: F401  (read here too)
from studio.org.quotas import department_gpu_bounds, summed_by_pool


def user_by_subject_id(subject_id: str):
    """A user named as Run:ai names subjects: by username or email (or by our numeric id)."""
    users = get_user_model().objects
    match = Q(username=subject_id) | Q(email__iexact=subject_id) if "@" in subject_id else Q(username=subject_id)
    if is_id(subject_id):
        match |= Q(pk=parse_id(subject_id))
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


def quota_pools(project: Project) -> list[str]:
    """The node pools a project has per-pool quotas in, in the order of its quotas; empty when it has none (then
    it may use every pool of its cluster)."""
    return list(dict.fromkeys((r.get("nodePool") or {}).get("name") for r in project.node_pool_resources or ()
                              if (r.get("nodePool") or {}).get("name")))


def node_pool_errors(project: Project, pools) -> dict:
    """{"spec.nodePools[i]": why} for each named pool the project cannot use: one its cluster lacks, or one
    outside the project's per-pool quotas (when it has any). One query. A workload naming such a pool would
    stay Pending for ever, so it is refused at submission."""
    names = [str(p) for p in pools or () if p]
    if not names:
        return {}
    known = set(NodePool.objects.filter(cluster_id=project.cluster_id).values_list("name", flat=True))
    allowed = set(quota_pools(project)) or known
    errors = {}
    for index, name in enumerate(names):
        if name not in known:
            errors[f"spec.nodePools[{index}]"] = (f"No node pool {name!r} on the project's cluster; "
                                                  f"its pools are: {', '.join(sorted(known)) or 'none'}.")
        elif name not in allowed:
            errors[f"spec.nodePools[{index}]"] = (f"Project {project.name} has no quota in node pool {name!r}; "
                                                  f"it may use: {', '.join(sorted(allowed))}.")
    return errors


def gpu_allocated_expression(outer: str = "project_id"):
    """The GPUs held by the outer project's (department's) workloads, as a correlated subquery: for filterBy and
    sortBy only (a page reads its units' use in one grouped query instead, attach_gpu_use)."""
    use = gpu_use()
    rows = (use.rows().filter(use.allocated, **{outer: OuterRef("pk")})
            .order_by().values(outer).annotate(total=Sum("gpu_request")).values("total"))
    return Coalesce(Subquery(rows), Value(Decimal(0)), output_field=DecimalField(max_digits=12, decimal_places=3))


def attach_gpu_use(units, field: str = "project_id", *, pool_ids: bool = True) -> None:
    """Set `numbers` (studio.org.numbers.Unit: allocated, requested, deserved and limit, in total and per pool),
    `pool_ids` (its cluster's pools by name) and, as before, `gpu_allocated` and `gpu_requested` on each project
    (field "project_id") or department ("department_id") of a page: two queries, however many the page holds.
    Without `pool_ids` (a page), a department without a cluster of its own does not read its projects' cluster."""
    units = list(units)
    if not units:
        return
    is_project = field == "project_id"
    clusters = {unit.pk: unit.cluster_id if is_project or not pool_ids else unit.cluster_id or department_cluster(unit)
                for unit in units}
    found = quota_numbers(**{"projects" if is_project else "departments": units}, pools_of=clusters.values())
    for unit in units:
        unit.numbers = found.project(unit.pk) if is_project else found.department(unit.pk)
        unit.pool_ids = found.pool_ids_of(clusters[unit.pk])
        unit.gpu_allocated, unit.gpu_requested = unit.numbers.total.allocated, unit.numbers.total.requested


def department_cluster(department):
    """A department's cluster, else the cluster of its first project (prefetched by org_departments)."""
    projects = sorted(department.projects.all(), key=lambda p: p.pk)
    return projects[0].cluster_id if projects else None


def org_projects(user):
    """Projects as the org-unit API answers them (their GPU use: attach_gpu_use)."""
    return Project.objects.visible_to(user).select_related("department", "cluster")


def org_departments(user):
    """Departments as the org-unit API answers them, with their projects' quotas (their GPU use: attach_gpu_use)."""
    return (Department.objects.visible_to(user)
            .prefetch_related(Prefetch("projects", queryset=Project.objects.only(
                "id", "department_id", "cluster_id", "node_pool_resources"))))


def department_share_left(department: Department, *, project_pk=None) -> dict[str, dict]:
    """Per node pool where the department sets a deserved GPU share: {"share", "given" (to its projects other
    than `project_pk`), "left"} — what the project quota form shows beside each pool (the services refuse more)."""
    bounds = department_gpu_bounds(department.node_pool_resources)
    given = summed_by_pool(Project.objects.filter(department=department).exclude(pk=project_pk)
                           .values_list("node_pool_resources", flat=True))
    return {name: {"share": share, "given": given.get(name, 0.0), "left": share - given.get(name, 0.0)}
            for name, share in bounds.items()}


def department_projects_deserved(department: Department) -> dict[str, float]:
    """GPUs the department's projects deserve per node pool (its own share may not go below)."""
    return summed_by_pool(Project.objects.filter(department=department).values_list("node_pool_resources", flat=True))


def quota_pool_rows(cluster_id) -> list[NodePool]:
    """The node pools a quota form has a row for: those of the unit's cluster (default first)."""
    return list(NodePool.objects.filter(cluster_id=cluster_id)) if cluster_id else []
