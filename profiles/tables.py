"""Service profiles and environment templates as the table component (studio.tables): natural sort of names,
the column chooser, totals, CSV export of the filtered list, and bulk delete through the single delete's
service. Rows come from what the platform admin may see (selectors)."""

from django.db.models import Count
from django.template.loader import get_template
from django.utils.html import format_html

from profiles.filtersets import EnvironmentTemplateFilterSet, ServiceProfileFilterSet
from studio.tables import BulkAction, Column, Table

DELETE = (BulkAction("delete", "Delete", "trash", danger=True),)


def _when(value, fmt="%Y-%m-%d %H:%M") -> str:
    return value.strftime(fmt) if value else ""


def _sharing_text(obj) -> str:
    return {"none": "Not shared", "all": "All projects"}.get(obj.sharing_mode, obj.sharing_mode.capitalize())


class ProfileTable(Table):
    name = "profiles"
    noun, noun_one = "service profiles", "service profile"
    filterset_class = ServiceProfileFilterSet
    export_url_name = "profile-export"
    bulk_url_name = "profile-bulk"
    bulk_actions = DELETE
    empty_template = "profiles/_profiles_empty.html"

    @property
    def columns(self):
        return (
            Column("name", "Unique name", lambda p: p.name, sort="name", natural=True,
                   html=lambda p: self._render("profiles/_profile_name_cell.html", p)),
            Column("display", "Display name", lambda p: p.display_name, sort="displayName", default=False),
            Column("type", "Service type", lambda p: p.get_service_type_display(), sort="serviceType"),
            Column("kind", "Workload kind", lambda p: p.template_version.kind if p.template_version_id else "",
                   sort="kind"),
            Column("template", "Environment template", lambda p: p.template_version.template.name
                   if p.template_version_id else "", sort="environmentTemplate", default=False),
            Column("revision", "Revision", lambda p: p.revision, sort="revision", numeric=True, default=False),
            Column("created", "Creation date", lambda p: _when(p.created_at), sort="createdAt",
                   html=lambda p: format_html('<time datetime="{}">{}</time>', p.created_at.isoformat(),
                                              _when(p.created_at))),
            Column("sharing", "Sharing", _sharing_text, sort="sharing",
                   html=lambda p: self._render("profiles/_sharing_cell.html", p)),
            Column("owner", "Owner project", lambda p: p.owner_project.name if p.owner_project_id else "",
                   default=False),
            Column("actions", "Actions", lambda p: "", export=False,
                   html=lambda p: self._render("profiles/_profile_actions.html", p)),
        )

    def _render(self, template: str, row) -> str:
        return get_template(template).render({"p": row, "obj": row}, request=self.request)

    def totals(self, qs) -> dict:
        return {"sharing": f"{qs.exclude(sharing_mode='none').count()} shared"}

    def row_label(self, row) -> str:
        return row.name


class TemplateTable(Table):
    name = "templates"
    noun, noun_one = "environment templates", "environment template"
    filterset_class = EnvironmentTemplateFilterSet
    export_url_name = "template-export"
    bulk_url_name = "template-bulk"
    bulk_actions = DELETE
    empty_template = "profiles/_templates_empty.html"

    @property
    def columns(self):
        return (
            Column("name", "Name", lambda t: t.name, sort="name", natural=True,
                   html=lambda t: self._render("profiles/_template_name_cell.html", t)),
            Column("description", "Description", lambda t: t.description,
                   html=lambda t: format_html("{}", (t.description or "")[:160])),
            Column("versions", "Versions", lambda t: ", ".join(f"{v.version} {v.state}" for v in t.versions.all()),
                   html=lambda t: self._render("profiles/_template_versions_cell.html", t)),
            Column("profiles", "Profiles", lambda t: t.profile_count, numeric=True),
            Column("sharing", "Sharing", _sharing_text, sort="sharing",
                   html=lambda t: self._render("profiles/_sharing_cell.html", t)),
            Column("created", "Created", lambda t: _when(t.created_at, "%Y-%m-%d"), sort="createdAt"),
        )

    def _render(self, template: str, row) -> str:
        return get_template(template).render({"t": row, "obj": row}, request=self.request)

    def totals(self, qs) -> dict:
        from profiles.models import ServiceProfile

        return {"profiles": ServiceProfile.objects.filter(template_version__template__in=qs.values("pk")).count()}

    def row_label(self, row) -> str:
        return row.name


def profile_rows(queryset):
    return queryset.select_related("owner_project", "template_version__template")


def template_rows(queryset):
    return queryset.annotate(profile_count=Count("versions__profiles", distinct=True)).prefetch_related("versions")
