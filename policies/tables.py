"""The stored policies as the table component (studio.tables): name, type, scope, how many rules and defaults,
who changed it when; natural sort of names, CSV export, and bulk delete through policies.services (the wider
policies apply again). The built-in default is no row: the page says it applies beneath every policy."""

from django.urls import reverse
from django.utils.html import format_html

from policies.merge import leaves
from policies.models import Policy
from policies.selectors import Unit, layer_of
from studio.listing import StudioFilterSet
from studio.tables import BulkAction, Column, Table


class PolicyFilterSet(StudioFilterSet):
    class Meta:
        model = Policy
        fields = []
        api_fields = {"name": "name", "type": "policy_type", "scope": "scope", "updatedAt": "updated_at",
                      "updatedBy": "updated_by_name"}
        search_fields = ["name", "project__name", "department__name"]
        default_sort = ["policy_type", "scope_key"]


def unit_of(row: Policy) -> Unit:
    department = row.department or getattr(row.project, "department", None)
    return Unit(scope=row.scope, department=department, project=row.project)


def edit_url(row: Policy) -> str:
    unit = unit_of(row)
    query = f"scope={unit.scope}"
    if unit.scope == "department" and unit.department is not None:
        query += f"&departmentId={unit.department.pk}"
    if unit.project is not None:
        query += f"&projectId={unit.project.pk}"
    return f"{reverse('policy-edit', args=[row.policy_type])}?{query}"


def _rules(row: Policy) -> int:
    return len(list(leaves(row.rules or {}, row.policy_type)))


def _defaults(tree) -> int:
    """Values set: a nested object counts its values, anything else (a list of instances too) counts one."""
    if isinstance(tree, dict):
        return sum(_defaults(value) for value in tree.values())
    return 0 if tree is None else 1


class PolicyTable(Table):
    name = "policies"
    noun, noun_one = "policies", "policy"
    filterset_class = PolicyFilterSet
    export_url_name = "policy-export"
    bulk_url_name = "policy-bulk"
    bulk_actions = (BulkAction("delete", "Delete", "trash", danger=True),)
    empty_template = "policies/_empty.html"
    columns = (
        Column("name", "Policy", lambda p: p.name, sort="name", natural=True,
               html=lambda p: format_html('<a href="{}">{}</a>', edit_url(p), p.name)),
        Column("type", "Type", lambda p: p.policy_type, sort="type"),
        Column("scope", "Scope", lambda p: layer_of(p).label, sort="scope"),
        Column("rules", "Rules", _rules, numeric=True),
        Column("defaults", "Defaults", lambda p: _defaults(p.defaults), numeric=True),
        Column("updated", "Updated", lambda p: p.updated_at.strftime("%Y-%m-%d %H:%M"), sort="updatedAt"),
        Column("by", "By", lambda p: p.updated_by_name, sort="updatedBy"),
    )

    def row_label(self, row) -> str:
        return f"{row.name}"
