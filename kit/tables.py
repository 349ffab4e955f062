"""Kit's applications and application profiles as the table component (studio.tables): natural sort of ids,
the column chooser, totals and CSV export of the filtered list, over what the user may see."""

from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from kit.filtersets import ApplicationFilterSet, ProfileFilterSet
from kit.matching import newest_first
from studio.tables import Column, Table


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
