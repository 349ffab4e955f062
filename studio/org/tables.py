"""The organisation lists as tables (studio.tables): clusters, departments and projects, with natural sort of
names, totals over the filtered list, CSV export, and bulk delete through the same service as one delete."""

from django.db.models import Count, Sum
from django.template.loader import get_template
from django.urls import reverse
from django.utils.html import format_html

from studio.audit_words import describe, noun
from studio.filtersets import (
    AuditEventFilterSet,
    ClusterFilterSet,
    DepartmentFilterSet,
    MemberFilterSet,
    ProjectFilterSet,
)
from studio.selectors import attach_gpu_use
from studio.tables import BulkAction, Column, Table

DELETE = (BulkAction("delete", "Delete", "trash", danger=True),)


def _number(value) -> str:
    if value is None:
        return ""
    return f"{value:f}".rstrip("0").rstrip(".") if hasattr(value, "as_tuple") else str(value)


def _numbers(unit, field: str):
    """The unit's GPU numbers (studio.org.numbers), attached to the page's rows at once (`NumbersOnPage`); a row
    read alone (the CSV export) reads its own."""
    if getattr(unit, "numbers", None) is None:
        attach_gpu_use([unit], field, pool_ids=False)
    return unit.numbers.total


class NumbersOnPage:
    """Attaches the organisation's GPU numbers to a page's rows: two queries, however many rows."""

    gpu_use_field = "project_id"

    def page(self):
        rows, page = super().page()
        attach_gpu_use(rows, self.gpu_use_field, pool_ids=False)
        return rows, page


def _when(value, fmt="%Y-%m-%d %H:%M") -> str:
    return value.strftime(fmt) if value else ""


class OrgTable(Table):
    kind = ""
    singular = ""
    bulk_actions = DELETE

    def __init__(self, request, queryset, **kwargs):
        super().__init__(request, queryset, **kwargs)
        self.bulk_url_name = f"org-{self.kind}-bulk"
        self.export_url_name = f"org-{self.kind}-export"

    def may_change(self, row) -> bool:
        """Whether the row offers Edit and Delete (the page sets it from the user's roles); else it opens read-only."""
        return True

    def selectable(self, row) -> bool:
        return self.may_change(row)  # bulk delete goes through the same check as the row's Delete

    def actions(self, row) -> str:
        return get_template("studio/_org_actions.html").render(
            {"row": row, "kind": self.kind, "singular": self.singular, "may_change": self.may_change(row)},
            request=self.request)

    def actions_column(self) -> Column:
        return Column("actions", "Actions", lambda row: "", html=self.actions, export=False)

    def row_label(self, row) -> str:
        return row.name


def _name_link(kind):
    return lambda row: format_html('<a href="{}"><strong>{}</strong></a>', reverse("org-edit", args=[kind, row.pk]),
                                   row.name)


class ClusterTable(OrgTable):
    name = kind = "clusters"
    singular, noun, noun_one = "cluster", "clusters", "cluster"
    filterset_class = ClusterFilterSet
    empty_template = "studio/_org_empty.html"

    @property
    def columns(self):
        return (
            Column("name", "Name", lambda c: c.name, sort="name", natural=True, html=lambda c: format_html(
                '<a href="{}"><strong>{}</strong></a>{}', reverse("org-edit", args=["clusters", c.pk]), c.name,
                format_html('<div class="text-secondary small">{}</div>', c.status_message[:120])
                if c.status_message else "")),
            Column("url", "API server URL", lambda c: c.api_server_url),
            Column("status", "Status", lambda c: c.status, sort="status", html=lambda c: get_template(
                "studio/_status_badge.html").render({"value": c.status})),
            Column("last_seen", "Last seen", lambda c: _when(c.last_seen_at, "%Y-%m-%d %H:%M:%S"),
                   sort="lastSeenAt", html=lambda c: format_html('<time datetime="{}">{}</time>',
                                                                 c.last_seen_at.isoformat(),
                                                                 _when(c.last_seen_at, "%Y-%m-%d %H:%M:%S"))
                   if c.last_seen_at else "—"),
            Column("scheduler", "Scheduler", lambda c: c.scheduler_shown),
            Column("pools", "Node pools", lambda c: c.pool_count, numeric=True),
            Column("projects", "Projects", lambda c: c.project_count, numeric=True),
            Column("created", "Created", lambda c: _when(c.created_at), sort="createdAt", default=False),
            self.actions_column(),
        )

    def totals(self, qs) -> dict:
        return {"projects": qs.aggregate(n=Count("projects", distinct=True))["n"] or 0}


class DepartmentTable(NumbersOnPage, OrgTable):
    name = kind = "departments"
    gpu_use_field = "department_id"
    singular, noun, noun_one = "department", "departments", "department"
    filterset_class = DepartmentFilterSet
    empty_template = "studio/_org_empty.html"

    @property
    def columns(self):
        return (
            Column("name", "Name", lambda d: d.name, sort="name", natural=True, html=_name_link("departments")),
            Column("description", "Description", lambda d: d.description),
            Column("projects", "Projects", lambda d: d.project_count, numeric=True),
            Column("deserved", "GPUs deserved (projects)", lambda d: _number(d.projects_deserved) or "0",
                   numeric=True),
            Column("allocated", "GPUs allocated", lambda d: _number(_numbers(d, "department_id").allocated),
                   numeric=True),
            Column("requested", "GPUs requested", lambda d: _number(_numbers(d, "department_id").requested),
                   numeric=True),
            Column("created", "Created", lambda d: _when(d.created_at), sort="createdAt"),
            self.actions_column(),
        )

    def totals(self, qs) -> dict:
        from studio.org.models import Project

        found = Project.objects.filter(department__in=qs.values("pk")).aggregate(n=Count("pk"), gpus=Sum("gpu_deserved"))
        return {"projects": found["n"] or 0, "deserved": _number(found["gpus"]) or "0"}


class ProjectTable(NumbersOnPage, OrgTable):
    name = kind = "projects"
    singular, noun, noun_one = "project", "projects", "project"
    filterset_class = ProjectFilterSet
    empty_template = "studio/_org_empty.html"

    @property
    def columns(self):
        return (
            Column("name", "Name", lambda p: p.name, sort="name", natural=True, html=_name_link("projects")),
            Column("department", "Department", lambda p: p.department.name, sort="parentName"),
            Column("cluster", "Cluster", lambda p: p.cluster.name),
            Column("namespace", "Namespace", lambda p: p.namespace, sort="namespace"),
            # the organisation's numbers (studio.org.numbers): the sums of its per-pool quotas, as /quota shows them
            Column("deserved", "GPUs deserved", lambda p: _number(_numbers(p, "project_id").deserved) or "0",
                   sort="totalGpuQuota", numeric=True),
            Column("limit", "GPU limit", lambda p: _number(_numbers(p, "project_id").limit), numeric=True,
                   html=lambda p: _number(_numbers(p, "project_id").limit) or "—"),
            Column("allocated", "GPUs allocated", lambda p: _number(_numbers(p, "project_id").allocated),
                   numeric=True),
            Column("requested", "GPUs requested", lambda p: _number(_numbers(p, "project_id").requested),
                   numeric=True),
            Column("created", "Created", lambda p: _when(p.created_at), sort="createdAt", default=False),
            self.actions_column(),
        )

    def totals(self, qs) -> dict:
        found = qs.aggregate(deserved=Sum("gpu_deserved"), limit=Sum("gpu_limit"))
        return {"deserved": _number(found["deserved"]) or "0", "limit": _number(found["limit"]) or "—"}


TABLES = {"clusters": ClusterTable, "departments": DepartmentTable, "projects": ProjectTable}


def table_queryset(kind: str, model):
    queryset = model.objects.all()
    if kind == "projects":
        return queryset.select_related("department", "cluster")
    if kind == "departments":
        return queryset.annotate(project_count=Count("projects", distinct=True),
                                 projects_deserved=Sum("projects__gpu_deserved"))
    return queryset.annotate(pool_count=Count("node_pools", distinct=True),
                             project_count=Count("projects", distinct=True))


def _changes_text(event) -> str:
    if not isinstance(event.changes, dict):
        return ""
    return "; ".join(f"{key}: {_shown(pair[0])} → {_shown(pair[1])}" if isinstance(pair, (list, tuple))
                     and len(pair) == 2 else f"{key}: {_shown(pair)}" for key, pair in event.changes.items())


def _shown(value) -> str:
    return "—" if value is None else str(value)


ACTION_BADGE = {"delete": "bg-red-lt", "create": "bg-green-lt"}


class AuditTable(Table):
    """The audit trail: every recorded change, newest first; exported as the page filters it."""

    name = "audit"
    noun, noun_one = "events", "event"
    filterset_class = AuditEventFilterSet
    export_url_name = "audit-export"
    empty_template = "studio/_audit_empty.html"
    columns = (
        Column("at", "When", lambda e: e.at.isoformat(timespec="seconds"), sort="at",
               html=lambda e: format_html('<time datetime="{}">{}</time>', e.at.isoformat(),
                                          e.at.strftime("%Y-%m-%d %H:%M:%S"))),
        Column("actor", "Who", lambda e: e.actor_name, sort="actor", html=lambda e: e.actor_name or "—"),
        Column("action", "Action", lambda e: e.action, sort="action", html=lambda e: format_html(
            '<span class="badge {}" data-action="{}" title="{}">{}</span>', ACTION_BADGE.get(e.action, "bg-azure-lt"),
            e.action, describe(e).sentence, describe(e).verb)),
        Column("type", "Object type", lambda e: e.object_type, sort="objectType",
               html=lambda e: format_html('{} <code class="small">{}</code>', noun(e.object_type),
                                          e.object_type)),
        Column("object", "Object", lambda e: e.object_repr, html=lambda e: format_html(
            '<span class="text-secondary">{}</span>', e.object_repr)),
        Column("changes", "Changes", _changes_text, html=lambda e: get_template("studio/_audit_changes.html")
               .render({"e": e, "words": describe(e)})),
    )

    def row_label(self, row) -> str:
        return f"{row.action} {row.object_type} {row.object_repr}"


class MemberTable(Table):
    """A project's members: username, email, role; its admins select and remove several at once."""

    name = "members"
    noun, noun_one = "members", "member"
    filterset_class = MemberFilterSet
    empty_template = "studio/_members_empty.html"

    def __init__(self, request, queryset, *, project, can_manage: bool, **kwargs):
        super().__init__(request, queryset, **kwargs)
        self.project, self.can_manage = project, can_manage
        self.bulk_actions = (BulkAction("remove", "Remove", "trash", danger=True),) if can_manage else ()

    @property
    def bulk_url(self) -> str:
        return reverse("member-bulk", args=[self.project.pk])

    @property
    def export_url(self) -> str:
        return reverse("member-export", args=[self.project.pk])

    @property
    def columns(self):
        columns = (
            Column("user", "User", lambda m: m.user.username, sort="username", natural=True),
            Column("email", "Email", lambda m: m.user.email, default=False),
            Column("role", "Role", lambda m: m.role.level, sort="role", html=lambda m: format_html(
                '<span class="badge bg-azure-lt">{}</span> <span class="text-secondary small">{}</span>',
                m.role.level, m.role.name)),
            Column("since", "Since", lambda m: _when(m.created_at), sort="createdAt"),
        )
        if not self.can_manage:
            return columns
        return (*columns, Column("actions", "Actions", lambda m: "", export=False, html=lambda m: get_template(
            "studio/_member_actions.html").render({"m": m, "project": self.project}, request=self.request)))

    def row_label(self, row) -> str:
        return row.user.username
