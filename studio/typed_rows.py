"""Typed inputs generated from an API serializer (the one the API validates with), for the portal's forms: a
set of fields (`Fields`: one input per scalar field, as Compute's) or a table of rows (`Rows`: one row per item
of a list, as tolerations or ports), with `static/studio/rows.js` adding a row in the page (no round trip) and
one empty row always there without script.

What was typed goes to the API as JSON of the field's type when it reads as one (`"4"` -> 4 for an integer),
and as typed otherwise, so the API's answer names the problem; its errors (`tolerations[1].key`) are filed on
the cell they name. Keys of an item that no column shows are kept with the row (a hidden field), so editing a
row never drops them. A column may name a field of an object inside the item (`claimInfo.size`,
`handler.httpGet.port`): `flat_columns` gives those of a serializer's nested objects. A row removed in the page
leaves a gap in the posted numbering, which the server closes when it shows the form again."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass

from rest_framework import serializers

_INT = re.compile(r"-?\d+")
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
MAX_ROWS = 200


@dataclass(frozen=True)
class Column:
    name: str
    label: str
    kind: str = "text"  # text, integer, number, boolean, choice, texts (a list of strings, separated by commas)
    choices: tuple = ()

    def typed(self, raw: str):
        raw = raw.strip()
        if self.kind == "integer" and _INT.fullmatch(raw):
            return int(raw)
        if self.kind == "number" and _NUMBER.fullmatch(raw):
            number = float(raw)
            return int(number) if number.is_integer() and "." not in raw else number
        if self.kind == "boolean":
            return {"true": True, "false": False, "on": True}.get(raw, raw)
        if self.kind == "texts":
            return [part.strip() for part in raw.split(",") if part.strip()]
        return raw

    def text(self, value) -> str:
        if value is None:
            return ""
        if isinstance(value, list) and self.kind == "texts":
            return ", ".join(self.text(part) for part in value)
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)


def _label(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r" \1", name).replace("gpu", "GPU").replace("cpu", "CPU").capitalize() \
        .replace("Gpu", "GPU").replace("Cpu", "CPU").replace(" gpu", " GPU").replace(" cpu", " CPU")


def label_of(dotted: str) -> str:
    """`claimInfo.size` -> "Claim info size"."""
    return " ".join(_label(part) if i == 0 else _label(part).lower() for i, part in enumerate(dotted.split(".")))


def column_of(name: str, field, label: str = "") -> Column | None:
    """The column of one serializer field; None for a nested one (a list of objects or an object). A list of
    strings (node pools, authorized users) is one input, its entries separated by commas."""
    label = label or _label(name)
    if isinstance(field, serializers.ListField) and not isinstance(
            field.child, (serializers.BaseSerializer, serializers.ListField, serializers.DictField)):
        return Column(name, label, "texts")
    if isinstance(field, (serializers.BaseSerializer, serializers.ListField, serializers.DictField)):
        return None
    if isinstance(field, serializers.BooleanField):
        return Column(name, label, "boolean")
    if isinstance(field, serializers.ChoiceField):
        return Column(name, label, "choice", tuple(field.choices))
    if isinstance(field, serializers.IntegerField):
        return Column(name, label, "integer")
    if isinstance(field, (serializers.FloatField, serializers.DecimalField)):
        return Column(name, label, "number")
    return Column(name, label)


def columns_of(serializer_class, *, only=(), labels=None) -> tuple[Column, ...]:
    """The scalar fields of a serializer, in its order (or in `only`'s)."""
    fields = serializer_class().fields
    names = only or list(fields)
    found = (column_of(name, fields[name], (labels or {}).get(name, "")) for name in names)
    return tuple(column for column in found if column is not None)


def flat_columns(serializer_class, *, depth: int = 1, labels=None, skip=()) -> tuple[Column, ...]:
    """The scalar fields of a serializer and, `depth` objects deep, of its nested objects (not lists), as dotted
    columns (`claimInfo.size`), in the serializer's order."""
    labels = labels or {}

    def walk(fields, prefix: str, level: int):
        for name, field in fields.items():
            dotted = f"{prefix}{name}"
            if dotted in skip or field.read_only:
                continue
            if isinstance(field, serializers.Serializer) and not getattr(field, "many", False):
                if level < depth:
                    yield from walk(field.fields, f"{dotted}.", level + 1)
                continue
            label = labels.get(dotted) or label_of(dotted)
            column = column_of(dotted, field, label)
            if column is not None:
                yield column

    return tuple(walk(serializer_class().fields, "", 0))


def get_dotted(item, name: str):
    for part in name.split("."):
        if not isinstance(item, dict):
            return None
        item = item.get(part)
    return item


def set_dotted(item: dict, name: str, value) -> None:
    *parents, last = name.split(".")
    for part in parents:
        if not isinstance(item.get(part), dict):
            item[part] = {}
        item = item[part]
    item[last] = value


def without(item: dict, names) -> dict:
    """A copy of `item` less the (dotted) `names`, and the objects that leaves empty."""
    rest = copy.deepcopy(item)
    for name in names:
        *parents, last = name.split(".")
        trail, node = [rest], rest
        for part in parents:
            node = node.get(part) if isinstance(node, dict) else None
            if not isinstance(node, dict):
                break
            trail.append(node)
        else:
            node.pop(last, None)
            for depth in range(len(parents), 0, -1):
                if trail[depth] == {}:
                    trail[depth - 1].pop(parents[depth - 1], None)
    return rest


def _cell_of(columns, tail: str, message: str):
    """(column, message) of the column that holds `tail` (`claimInfo.size`, `name`), the longest first."""
    for column in sorted(columns, key=lambda c: -len(c.name)):
        if tail == column.name:
            return column, message
        if tail.startswith(f"{column.name}.") or tail.startswith(f"{column.name}["):
            return column, f"{tail[len(column.name):].lstrip('.')}: {message}"
    return None, message


class Fields:
    """One input per column, named `<key>.<column>`: an object of the API (Compute)."""

    def __init__(self, key: str, columns, *, data=None, value=None):
        self.key, self.columns = key, columns
        value = value if isinstance(value, dict) else {}
        self.cells = []
        for column in columns:
            name = f"{key}.{column.name}"
            shown = data.get(name, "") if data is not None else column.text(get_dotted(value, column.name))
            self.cells.append({"column": column, "name": name, "id": f"f-{key}-{column.name}".replace(".", "-"),
                               "value": shown, "errors": []})
        self.rest = without(value, [c.name for c in columns])
        if data is not None:
            self.rest = _kept(data.get(f"{key}.__rest__"))

    def value(self) -> dict:
        found = copy.deepcopy(self.rest)
        for cell in self.cells:
            if str(cell["value"]).strip():
                set_dotted(found, cell["column"].name, cell["column"].typed(str(cell["value"])))
        return found

    def file(self, path: str, message: str) -> bool:
        if not path.startswith(f"{self.key}."):
            return False
        column, message = _cell_of(self.columns, path[len(self.key) + 1:], message)
        for cell in self.cells:
            if column is not None and cell["column"] is column:
                cell["errors"].append(message)
                return True
        return False

    def rest_json(self) -> str:
        return json.dumps(self.rest) if self.rest else ""

    @property
    def errors(self) -> bool:
        return any(cell["errors"] for cell in self.cells)


class Rows:
    """A row per item of a list of the API (tolerations, ports…), named `<key>-<i>-<column>`; `<key>-rows` says
    how many were sent. Empty rows are ignored."""

    def __init__(self, key: str, columns, *, noun: str, data=None, items=(), extra=1, pairs: bool = False):
        self.key, self.columns, self.noun, self.pairs = key, columns, noun, pairs
        self.rows: list[dict] = []
        if data is not None:
            try:
                count = min(max(int(data.get(f"{key}-rows", 0)), 0), MAX_ROWS)
            except ValueError:
                count = 0
            for i in range(count):
                names = [f"{key}-{i}-{c.name}" for c in columns] + [f"{key}-{i}-__rest__"]
                if not any(name in data for name in names):
                    continue  # removed in the page: the rows shown again are numbered without the gap
                self.rows.append(self._row(len(self.rows),
                                           {c.name: data.get(f"{key}-{i}-{c.name}", "") for c in columns},
                                           _kept(data.get(f"{key}-{i}-__rest__"))))
        else:
            for item in items:
                item = item if isinstance(item, dict) else {}
                self.rows.append(self._row(len(self.rows), {c.name: c.text(get_dotted(item, c.name)) for c in columns},
                                           without(item, [c.name for c in columns])))
            for _ in range(extra):
                self.rows.append(self._row(len(self.rows), {}, {}))
        self.index: list[int] = []
        self.template = self._row("__i__", {}, {})

    def _row(self, i, values: dict, rest: dict) -> dict:
        number = i + 1 if isinstance(i, int) else "__n__"
        return {"i": i, "number": number, "errors": [], "rest": json.dumps(rest) if rest else "",
                "rest_value": rest,
                "cells": [{"column": c, "name": f"{self.key}-{i}-{c.name}", "value": values.get(c.name, ""),
                           "label": f"{self.noun} {number} {c.label.lower()}", "errors": []} for c in self.columns]}

    def items(self) -> list[dict]:
        found, self.index = [], []
        for number, row in enumerate(self.rows):
            item = copy.deepcopy(row["rest_value"])
            for cell in row["cells"]:
                if str(cell["value"]).strip():
                    set_dotted(item, cell["column"].name, cell["column"].typed(str(cell["value"])))
            if not any(str(cell["value"]).strip() for cell in row["cells"]) and not row["rest_value"]:
                continue
            found.append(item)
            self.index.append(number)
        return found

    def mapping(self) -> dict:
        """For a two-column table of a JSON object (a node selector): {first: second}."""
        first, second = self.columns[0].name, self.columns[1].name
        return {item.get(first, ""): item.get(second, "") for item in self.items()}

    def file(self, path: str, message: str) -> bool:
        if self.pairs:  # nodeSelector.<key>: the row whose key it is
            head, _, name = path.partition(".")
            if head != self.key:
                return False
            for row in self.rows:
                if row["cells"][0]["value"].strip() == name:
                    row["cells"][1]["errors"].append(message)
                    return True
            return False
        found = re.fullmatch(rf"{re.escape(self.key)}\[(\d+)\]\.?(.*)", path)
        if not found:
            return False
        position = int(found.group(1))
        if position >= len(self.index):
            return False
        row = self.rows[self.index[position]]
        tail = found.group(2)
        column, said = _cell_of(self.columns, tail, message)
        for cell in row["cells"]:
            if column is not None and cell["column"] is column:
                cell["errors"].append(said)
                return True
        row["errors"].append(f"{tail}: {message}" if tail else message)
        return True


class GroupedRows(Rows):
    """A list of objects that each hold one list (a node affinity's terms, each a list of match expressions) as
    one table: a row per inner item, with the number of the outer item it belongs to as a column of its own
    (rows of the same number form one outer item, in the order the numbers first appear)."""

    def __init__(self, key: str, inner: str, columns, *, noun: str, group: str, data=None, items=(), extra=1):
        self.inner = inner
        self.positions: list[tuple[int, int]] = []
        flat = []
        for number, outer in enumerate(items if isinstance(items, list) else (), start=1):
            for item in (outer.get(inner) if isinstance(outer, dict) else None) or ():
                flat.append({**(item if isinstance(item, dict) else {}), GROUP: number})
        super().__init__(key, (Column(GROUP, group, "integer"), *columns), noun=noun, data=data, items=flat,
                         extra=extra)

    def items(self) -> list[dict]:
        groups: dict = {}
        self.positions = []
        for item in super().items():
            name = item.pop(GROUP, 1)
            inner = groups.setdefault(name if isinstance(name, int) else str(name), [])
            self.positions.append((list(groups).index(name if isinstance(name, int) else str(name)), len(inner)))
            inner.append(item)
        return [{self.inner: inner} for inner in groups.values()]

    def file(self, path: str, message: str) -> bool:
        found = re.fullmatch(rf"{re.escape(self.key)}\[(\d+)\](?:\.{re.escape(self.inner)}\[(\d+)\])?\.?(.*)", path)
        if not found:
            return False
        outer, inner = int(found.group(1)), found.group(2)
        for position, number in zip(self.positions, self.index, strict=True):
            if position[0] == outer and (inner is None or position[1] == int(inner)):
                row, tail = self.rows[number], found.group(3)
                column, said = _cell_of(self.columns, tail, message)
                cell = next((cell for cell in row["cells"] if column is not None and cell["column"] is column), None)
                (cell["errors"] if cell else row["errors"]).append(said if cell else (
                    f"{tail}: {message}" if tail else message))
                return True
        return False


GROUP = "__group__"


def _kept(raw) -> dict:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
