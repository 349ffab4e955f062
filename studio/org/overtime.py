"""Run:ai's `overtimeData` of projects and departments: their average GPU allocation and utilisation over the last
24 hours, 7 days and 30 days. The usage history (a higher app) computes them and registers at start-up
(`register_overtime`, usage.apps), so studio never names it; without it the field is left out."""

from collections.abc import Callable

from django.db.models import Case, FloatField, Value, When

# (field that names the unit in the history: "project_id" or "department_id", {unit id: created_at}) -> {id: data}
OvertimeSource = Callable[[str, dict], dict]
_source: list[OvertimeSource] = []


def register_overtime(source: OvertimeSource) -> None:
    _source[:] = [source]


def attach_overtime(units, field: str) -> None:
    """Set `overtime_data` on each unit, in one read of the history for them all."""
    units = list(units)
    if not _source or not units:
        return
    data = _source[0](field, {unit.pk: unit.created_at for unit in units})
    for unit in units:
        unit.overtime_data = data.get(unit.pk)


RANGE_KEYS = {"24h": "range24hData", "7d": "range7dData", "30d": "range30dData"}
AVERAGES = {"avgGpuAllocation": "averageGpuAllocation", "avgGpuUtilization": "averageGpuUtilization",
            "avgGpuMemoryUtilization": "averageGpuMemoryUtilization"}
# Run:ai's filterBy/sortBy names of the averages: avgGpuAllocation24h … avgGpuMemoryUtilization30d
AVERAGE_FIELDS = {f"{name}{span}": (key, value) for name, value in AVERAGES.items() for span, key in RANGE_KEYS.items()}


def overtime_expression(model, field: str, name: str):
    """One average of every unit of `model` as a database expression, so that lists filter and sort by it like by
    a column: the history is read once for all units (two queries) and its values written into a CASE over their
    ids — as many branches as units, which an organisation keeps in the hundreds or thousands."""
    range_key, value = AVERAGE_FIELDS[name]
    data = _source[0](field, dict(model.objects.values_list("pk", "created_at"))) if _source else {}
    whens = [When(pk=pk, then=Value(float(d[range_key][value]))) for pk, d in data.items()
             if d[range_key][value] is not None]
    return Case(*whens, default=Value(None), output_field=FloatField())
