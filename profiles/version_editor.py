"""The form of a new environment template version: its variables and outputs as typed tables (a row per
variable: name, type, default, constraints), with the JSON of the API as an advanced view. Switching views and
adding a row happens in the page (static/studio/rows.js; without script, a round trip to the server); switching
views is a round trip, which converts what was typed from one view to the other.

As everywhere in the portal, the API's serializer and service validate the body; their errors (`variables[1].min`)
are filed on the row and cell they name."""

import json
import re

from django import forms
from django.http import QueryDict

from profiles.forms import VersionForm
from profiles.rendering import text
from profiles.spec_editor import MARK, SpecEditor
from profiles.variables import TYPES, InputError, coerce

VARIABLE_CELLS = ("name", "type", "required", "default", "description", "min", "max", "pattern", "options")
OUTPUT_CELLS = ("name", "label", "expression", "sensitive")
TABLE, JSON = "table", "json"


class VariableRow(forms.Form):
    name = forms.CharField(label="Name", required=False, max_length=63)
    type = forms.ChoiceField(label="Type", required=False, choices=[(t, t) for t in TYPES])
    required = forms.BooleanField(label="Required", required=False)
    default = forms.CharField(label="Default", required=False)
    description = forms.CharField(label="Description", required=False)
    min = forms.CharField(label="Min", required=False)
    max = forms.CharField(label="Max", required=False)
    pattern = forms.CharField(label="Pattern", required=False)
    options = forms.CharField(label="Options", required=False)


class OutputRow(forms.Form):
    name = forms.CharField(label="Name", required=False, max_length=63)
    label = forms.CharField(label="Label", required=False)
    expression = forms.CharField(label="Expression", required=False)
    sensitive = forms.BooleanField(label="Sensitive", required=False)


def _typed(kind: str, raw: str):
    """A cell's text as the JSON value of a variable of `kind`; text that does not fit goes as typed, so the
    API's answer names the problem."""
    try:
        return coerce(kind, raw)
    except InputError:
        return raw


def variable_of(cells: dict) -> dict | None:
    """One row → the API's variable (None for an empty row)."""
    cells = {key: cells.get(key) for key in VARIABLE_CELLS}
    if not any((cells[key] or "").strip() for key in VARIABLE_CELLS if key not in ("type", "required")):
        return None
    kind = cells["type"] or "string"
    item = {"name": (cells["name"] or "").strip(), "type": kind, "required": bool(cells["required"])}
    if (cells["description"] or "").strip():
        item["description"] = cells["description"].strip()
    if (cells["default"] or "") != "":
        item["default"] = _typed(kind if kind in ("integer", "number", "boolean") else "string", cells["default"])
    for bound in ("min", "max"):
        raw = (cells[bound] or "").strip()
        if raw:
            item[bound] = _typed("number", raw) if kind in ("integer", "number") else raw
    if cells["pattern"]:
        item["pattern"] = cells["pattern"]
    if (cells["options"] or "").strip():
        item["options"] = [o.strip() for o in cells["options"].split(",") if o.strip()]
    return item


def output_of(cells: dict) -> dict | None:
    if not any((cells.get(key) or "").strip() for key in ("name", "label", "expression")):
        return None
    item = {"name": (cells.get("name") or "").strip(), "expression": cells.get("expression") or "",
            "sensitive": bool(cells.get("sensitive"))}
    if (cells.get("label") or "").strip():
        item["label"] = cells["label"].strip()
    return item


def cells_of_variable(item: dict) -> dict:
    return {"name": item.get("name", ""), "type": item.get("type", "string"), "required": bool(item.get("required")),
            "default": text(item.get("default")), "description": item.get("description") or "",
            "min": text(item.get("min")), "max": text(item.get("max")), "pattern": item.get("pattern") or "",
            "options": ", ".join(map(text, item.get("options") or []))}


def cells_of_output(item: dict) -> dict:
    return {"name": item.get("name", ""), "label": item.get("label") or "", "expression": item.get("expression", ""),
            "sensitive": bool(item.get("sensitive"))}


class Table:
    """The rows of one table (`variables` or `outputs`), bound to the posted cells or to initial items."""

    def __init__(self, key: str, row_class, cells: tuple, to_item, to_cells, *, data=None, items=(), extra=1):
        self.key, self.cells, self.to_item = key, cells, to_item
        if data is not None:
            count = _count(data, key) + extra
            self.rows = [row_class(data, prefix=f"{key}-{i}") for i in range(count)]
        else:
            initial = [to_cells(item) for item in items]
            self.rows = [row_class(prefix=f"{key}-{i}", initial=row) for i, row in enumerate(initial)]
            self.rows += [row_class(prefix=f"{key}-{len(initial) + i}") for i in range(extra)]
        noun = "Variable" if key == "variables" else "Output"
        self.template = row_class(prefix=f"{key}-__i__")  # the row static/studio/rows.js adds in the page
        for number, row in [*enumerate(self.rows, 1), ("__n__", self.template)]:
            for field in row.fields.values():
                field.widget.attrs["aria-label"] = f"{noun} {number} {field.label.lower()}"
        self.count = len(self.rows)
        self.index: list[int] = []  # item i of the body ← row index[i]

    def items(self) -> list[dict]:
        items, self.index = [], []
        for number, row in enumerate(self.rows):
            cells = {name: row[name].value() for name in self.cells}
            item = self.to_item(cells)
            if item is not None:
                items.append(item)
                self.index.append(number)
        return items

    def file(self, path: str, message: str) -> bool:
        """File `variables[2].min: …` on its row and cell; False when the path is not in this table."""
        found = re.fullmatch(rf"{self.key}\[(\d+)\]\.?([A-Za-z]*)(.*)", path)
        if not found or int(found.group(1)) >= len(self.index):
            return False
        row = self.rows[self.index[int(found.group(1))]]
        cell, rest = found.group(2), found.group(3)
        if cell in row.fields:
            row.add_error(cell, f"{rest.lstrip('.')}: {message}" if rest else message)
        else:
            row.add_error(None, message)
        return True

    def errors(self) -> list[str]:
        return [e for row in self.rows for e in row.non_field_errors()]


def _parsed(raw):
    try:
        return json.loads(raw) if isinstance(raw, str) and raw.strip() else {}
    except ValueError:
        return {}


def _count(data, key: str) -> int:
    try:
        return min(max(int(data.get(f"{key}-rows", 0)), 0), 200)
    except ValueError:
        return 0


class VersionEditor:
    """The whole form: version, kind, state and spec template (VersionForm), and the variables and outputs as
    tables (TABLE) or as JSON (JSON)."""

    def __init__(self, data=None, *, initial: dict, variables=(), outputs=()):
        self.mode = JSON if data is not None and data.get("editor") == JSON else TABLE
        kind = (data.get("kind") if data is not None else None) or initial.get("kind") or "training"
        # the kind shown is the kind rendered: choosing it again re-renders nothing (static/studio/ui.js)
        self.form = VersionForm(data, initial={**initial, "kind": kind,
                                               "variables": json.dumps(list(variables), indent=2),
                                               "outputs": json.dumps(list(outputs), indent=2)})
        # choosing another kind re-renders the form with that kind's spec fields (static/studio/ui.js)
        self.form.fields["kind"].widget.attrs["data-refresh-with"] = "refresh-kind"
        self.spec = SpecEditor(kind, data=data, spec=_parsed(
            data.get("specTemplate") if data is not None and "specTemplate" in data else initial.get("specTemplate")))
        more = (data or {}).get("more", "")
        self.variables = Table("variables", VariableRow, VARIABLE_CELLS, variable_of, cells_of_variable,
                               data=data, items=variables, extra=1 if more == "variables" else (0 if data else 1))
        self.outputs = Table("outputs", OutputRow, OUTPUT_CELLS, output_of, cells_of_output,
                             data=data, items=outputs, extra=1 if more == "outputs" else (0 if data else 1))

    @classmethod
    def rebuilt(cls, data: QueryDict, *, initial: dict) -> "VersionEditor":
        """The form after a non-saving button (switch view, add a row): what was typed, in the asked-for view."""
        editor = cls(data, initial=initial)
        switch = data.get("switch")
        if switch not in (TABLE, JSON) or switch == editor.mode:
            return editor
        fresh = data.copy()
        fresh["editor"] = switch
        if switch == JSON:
            fresh["variables"] = json.dumps(editor.variables.items(), indent=2)
            fresh["outputs"] = json.dumps(editor.outputs.items(), indent=2)
            fresh["specTemplate"] = json.dumps(editor.spec.value(), indent=2)
            fresh.pop(MARK, None)
            return cls(fresh, initial=initial)
        parsed = editor.form.payload()
        if parsed is None:  # JSON that does not parse stays in the JSON view, with its error
            return editor
        for key, to_cells in (("variables", cells_of_variable), ("outputs", cells_of_output)):
            items = [item for item in parsed[key] if isinstance(item, dict)] if isinstance(parsed[key], list) else []
            for name in [k for k in fresh if k.startswith(f"{key}-")]:
                del fresh[name]
            fresh[f"{key}-rows"] = str(len(items) + 1)
            for i, item in enumerate(items):
                for cell, value in to_cells(item).items():
                    if isinstance(value, bool):
                        if value:
                            fresh[f"{key}-{i}-{cell}"] = "on"
                    else:
                        fresh[f"{key}-{i}-{cell}"] = value
        return cls(fresh, initial=initial)

    def payload(self) -> dict | None:
        body = self.form.payload()
        if self.mode == TABLE:
            self.form.errors.pop("variables", None)  # the JSON fields are not what was edited
            self.form.errors.pop("outputs", None)
            self.form.errors.pop("specTemplate", None)
            if self.form.errors:
                return None
            body = body or {"version": self.form.cleaned_data["version"], "kind": self.form.cleaned_data["kind"],
                            "state": self.form.cleaned_data["state"]}
            body["specTemplate"] = self.spec.value()
            body["variables"] = self.variables.items()
            body["outputs"] = self.outputs.items()
        return body

    def draft(self) -> dict | None:
        """The kind, spec, variables and outputs as typed, even when the version's own fields have problems (the
        save's check then names the rest too); None while a JSON box does not parse (its error is the answer)."""
        data = self.form.data
        if self.mode == TABLE:
            return {"kind": data.get("kind", ""), "spec_template": self.spec.value(),
                    "variables": self.variables.items(), "outputs": self.outputs.items()}
        try:
            found = {key: json.loads(data.get(key) or ("{}" if key == "specTemplate" else "[]"))
                     for key in ("specTemplate", "variables", "outputs")}
        except ValueError:
            return None
        lists = [found[key] if isinstance(found[key], list) else [] for key in ("variables", "outputs")]
        return {"kind": data.get("kind", ""), "spec_template": found["specTemplate"],
                "variables": [v for v in lists[0] if isinstance(v, dict)],
                "outputs": [o for o in lists[1] if isinstance(o, dict)]}

    def file(self, errors: list[dict]) -> None:
        if self.mode == JSON:
            self.form.file_all(errors)
            return
        rest = [e for e in errors if not (self.variables.file(e["field"], e["message"])
                                          or self.outputs.file(e["field"], e["message"])
                                          or self.spec.file(e["field"], e["message"]))]
        self.form.file_all(rest)
