"""Run:ai's `overtimeData` of projects and departments: their average GPU allocation and utilisation over the last
24 hours, 7 days and 30 days. The usage history (a higher app) computes them and registers at start-up
(`register_overtime`, usage.apps), so studio never names it; without it the field is left out."""

from collections.abc import Callable

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
