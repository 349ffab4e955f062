"""Kit's applications and application profiles as the table component (studio.tables): natural sort of ids,
the column chooser, totals and CSV export of the filtered list, over what the user may see."""

from django.db.models import Count
from django.template.loader import get_template
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from kit import selectors
from kit.filtersets import ApplicationFilterSet, ProfileFilterSet
from kit.matching import newest_first
from kit.models import StreamSession
from kit.serializers import session_data
from studio.iam.models import Level
from studio.iam.permissions import acting_project_ids
from studio.listing import StudioFilterSet
from studio.tables import BulkAction, Column, Table


def _newest(app) -> str:
    versions = newest_first(v.version for v in app.versions.all())
    return versions[0] if versions else ""


class ApplicationTable(Table):
    name = "kit-apps"
    noun, noun_one = "applications", "application"
    filterset_class = ApplicationFilterSet
    export_url_name = "kit-apps-export"
    empty_template = "kit/_apps_empty.html"
    columns = (
        Column("id", "Id", lambda a: a.id, sort="id", natural=True,
               html=lambda a: format_html('<a href="{}">{}</a>', reverse("kit-app", args=[a.id]), a.id)),
        Column("name", "Name", lambda a: a.name, sort="name"),
        Column("description", "Description", lambda a: a.description),
        Column("tags", "Tags", lambda a: ", ".join(a.tags or ()), html=lambda a: format_html_join(
            " ", '<span class="badge bg-secondary-lt">{}</span>', ((tag,) for tag in a.tags or ())) or "—"),
        Column("newest", "Newest version", _newest, html=lambda a: _newest(a) or "—"),
        Column("versions", "Versions", lambda a: a.version_count, numeric=True),
    )

    def totals(self, qs) -> dict:
        from kit.models import ApplicationVersion

        return {"versions": ApplicationVersion.objects.filter(application__in=qs.values("pk")).count()}

    def row_label(self, row) -> str:
        return row.id


def _applications(profile) -> str:
    return "; ".join(" ".join([entry["name"], *entry["versions"]]) for entry in profile.supported_applications)


class ProfileTable(Table):
    name = "kit-profiles"
    noun, noun_one = "application profiles", "application profile"
    filterset_class = ProfileFilterSet
    export_url_name = "kit-profiles-export"
    empty_template = "kit/_profiles_empty.html"
    columns = (
        Column("id", "Id", lambda p: p.slug, sort="id", natural=True,
               html=lambda p: format_html('<a href="{}">{}</a>', reverse("kit-profile", args=[p.slug]), p.slug)),
        Column("name", "Name", lambda p: p.name, sort="name", html=lambda p: format_html(
            '{}<div class="text-secondary small">{}</div>', p.name, (p.description or "")[:160])),
        Column("applications", "Applications", _applications, html=lambda p: format_html_join(
            "", "<div><code>{}</code> {}</div>", ((e["name"], ", ".join(e["versions"]))
                                                  for e in p.supported_applications))),
        Column("service", "Load balancing", lambda p: p.service_type, sort="serviceType"),
        Column("encryption", "Encryption", lambda p: p.get_encryption_display(), sort="encryption"),
        Column("owner", "Owner project", lambda p: p.owner_project.name if p.owner_project_id else "",
               html=lambda p: p.owner_project.name if p.owner_project_id else "—"),
        Column("idle", "Idle end (s)", lambda p: p.idle_timeout_seconds or "", numeric=True, default=False),
        Column("over", "Over the cap", lambda p: p.get_over_capacity_display(), default=False),
        Column("revision", "Revision", lambda p: p.revision, numeric=True, default=False),
    )

    def row_label(self, row) -> str:
        return row.slug


def application_rows(queryset):
    return queryset.annotate(version_count=Count("versions", distinct=True)).prefetch_related("versions")


class SessionFilterSet(StudioFilterSet):
    class Meta:
        model = StreamSession
        fields = []
        api_fields = {"application": "application", "profile": "profile", "state": "state",
                      "requestedAt": "requested_at", "projectName": "project__name"}
        search_fields = ["application", "profile", "project__name", "workload__name"]
        default_sort = ["-requested_at", "-id"]


def _view(table, session) -> dict:
    views = table.views
    if session.pk not in views:  # the export reads each row's state as the page does
        views[session.pk] = session_data(session, position=table.positions().get(session.pk))
    return views[session.pk]


def _status(session, view) -> str:
    return session.workload.actual_phase if session.workload_id else view["status"]["condition"].capitalize()


def _routes(view) -> list[str]:
    return [f"{address}:{route['source_port']} {route['description']} ({route['protocol']})"
            for address, entry in view["routes"].items() for route in entry["routes"]]


class SessionTable(Table):
    """The streaming sessions of the user's projects, re-read every 2 s; several can be stopped at once (each
    through the same service as its Stop)."""

    name = "kit-sessions"
    noun, noun_one = "sessions", "session"
    filterset_class = SessionFilterSet
    export_url_name = "kit-sessions-export"
    bulk_url_name = "kit-sessions-bulk"
    bulk_actions = (BulkAction("stop", "Stop", "player-stop", danger=True),)
    empty_template = "kit/_sessions_empty.html"

    def __init__(self, request, queryset, **kwargs):
        super().__init__(request, queryset, **kwargs)
        self.views: dict = {}
        self._positions = None
        # Stopping takes a member's role in the session's project (sessions.session_stop): a viewer is not offered it.
        self.acting = acting_project_ids(request.user, Level.MEMBER)
        if self.acting is not None and not self.acting:
            self.bulk_actions = ()

    def selectable(self, row) -> bool:
        return self.acting is None or row.project_id in self.acting

    def positions(self) -> dict:
        if self._positions is None:
            qs = self.queryset()
            self._positions = selectors.queue_positions(list(qs)) if qs is not None else {}
        return self._positions

    @property
    def columns(self):
        return (
            Column("session", "Session", lambda s: str(s.pk), html=lambda s: format_html(
                '<a href="{}"><code>{}</code></a>{}', reverse("kit-session", args=[s.pk]), s.pk, format_html(
                    '<div class="text-secondary small">{}</div>', s.workload.name) if s.workload_id else "")),
            Column("application", "Application", lambda s: f"{s.application} {s.version or ''}".strip(),
                   sort="application"),
            Column("profile", "Profile", lambda s: s.profile, sort="profile"),
            Column("project", "Project", lambda s: s.project.name, sort="projectName"),
            Column("status", "Status", lambda s: _status(s, _view(self, s)),
                   html=lambda s: get_template("kit/_session_status.html").render(
                       {"s": s, "view": _view(self, s)})),
            Column("routes", "Routes", lambda s: "; ".join(_routes(_view(self, s))),
                   html=lambda s: format_html_join("", "<div><code>{}:{}</code> {} ({})</div>", (
                       (address, route["source_port"], route["description"], route["protocol"])
                       for address, entry in _view(self, s)["routes"].items() for route in entry["routes"])) or "—"),
            Column("requested", "Requested", lambda s: s.requested_at.strftime("%Y-%m-%d %H:%M"),
                   sort="requestedAt"),
            Column("actions", "Actions", lambda s: "", export=False, html=lambda s: get_template(
                "kit/_session_actions.html").render({"s": s, "may_stop": self.selectable(s)}, request=self.request)),
        )

    def row_label(self, row) -> str:
        return f"{row.application} {row.pk}"
