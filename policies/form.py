"""The typed policy form, generated from Run:ai's policy schemas (policies.schema), the ones the API validates
with: a row per field of the policy type (its default, then each rule attribute the schema gives it), grouped
in sections (General, Compute, Security, Storage · hostPath, …). Pure: schema -> rows, stored policy -> the
form's values, posted values -> the policy body, the API's error paths -> the form's fields.

A list field's default instances (default environment variables, PVCs, NFS volumes…) are typed rows
(studio.typed_rows), their columns generated from the schema of the list's items (a nested object's fields as
columns of their own, two deep: `claimInfo.size`, `claimInfo.accessModes.readWriteOnce`; a list of strings inside
an item, such as an exposed URL's authorized users, as one comma-separated input); what no column shows is kept
with its row, and the advanced JSON view edits everything."""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache

from policies import schema
from policies.merge import get_path, set_path
from studio.typed_rows import Column, Rows, label_of

TRI = (("", "—"), ("true", "Yes"), ("false", "No"))
FLAGS = ("required", "canEdit", "canAdd")
ATTRIBUTE_LABELS = {"min": "Min", "max": "Max", "step": "Step", "options": "Options", "required": "Required",
                    "canEdit": "Can edit", "canAdd": "Can add", "locked": "Locked"}
ORDER = ("min", "max", "step", "options", "required", "canEdit", "canAdd", "locked")
_INT = re.compile(r"-?\d+")
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


@dataclass
class Row:
    path: str
    default_type: str = ""  # string, integer, number, boolean, array ("" when the field has no plain default)
    enum: tuple = ()
    kind: str = ""  # the rule's kind (integer, number, quantity, string, boolean, array, items); "" without rules
    attributes: tuple = ()

    @property
    def label(self) -> str:
        return self.path.removesuffix(".instances")

    def default_name(self) -> str:
        return f"d:{self.path}"

    def rule_name(self, attribute: str) -> str:
        return f"r:{self.path}:{attribute}"


@dataclass
class Section:
    key: str
    title: str
    rows: list[Row] = field(default_factory=list)


def _defaults_fields(policy_type: str):
    """(path, name, resolved schema) of each field below the policy type's defaults that is not an object, in the
    schema's order, walking into objects (eight deep at most)."""
    root = schema._properties(schema.schemas()[f"{schema.TYPES[policy_type]}PolicyDefaultsAndRulesV2"])

    def walk(node, path, depth=0):
        for name, child in schema._properties(node).items():
            child_path = f"{path}.{name}" if path else name
            resolved = schema._resolve(child)
            if "allOf" in resolved or resolved.get("type") == "object" or resolved.get("properties"):
                if depth < 8:
                    yield from walk(child, child_path, depth + 1)
            else:
                yield child_path, name, resolved

    return walk(root["defaults"], "")


def _defaults_leaves(policy_type: str) -> dict[str, tuple[str, tuple]]:
    found: dict[str, tuple[str, tuple]] = {}
    for path, name, resolved in _defaults_fields(policy_type):
        kind = resolved.get("type")
        if kind == "array":
            items = schema._resolve(resolved.get("items") or {})
            if items.get("type") not in (None, "string") or name == "instances":
                continue  # a list of objects: the advanced view's
        if kind in ("string", "integer", "number", "boolean", "array"):
            found[path] = (kind, tuple(resolved.get("enum") or ()))
    return found


# The noun of a list field's default instance, by the field's name (its title otherwise)
NOUNS = {"environmentVariables": "Environment variable", "pvc": "PVC", "nfs": "NFS volume", "git": "Git repository",
         "s3": "S3 bucket", "hostPath": "Host path", "dataVolume": "Data volume", "configMapVolume": "ConfigMap volume",
         "secretVolume": "Secret volume", "extendedResources": "Extended resource", "exposedUrls": "Exposed URL",
         "relatedUrls": "Related URL", "annotations": "Annotation", "labels": "Label", "tolerations": "Toleration",
         "ports": "Port"}


@dataclass(frozen=True)
class ListField:
    """A list of objects in the policy's defaults (`storage.pvc.instances`): its default instances as rows."""
    path: str
    section: str
    noun: str
    columns: tuple

    def rows(self, *, data=None, defaults=None) -> Rows:
        items = get_path(defaults or {}, self.path) if data is None else ()
        rows = Rows(self.path, self.columns, noun=self.noun, data=data, items=items if isinstance(items, list) else ())
        rows.title = f"Default instances of {self.path.removesuffix('.instances')}"
        rows.add = f"Add a default {self.noun[0].lower() + self.noun[1:] if self.noun[1:2].islower() else self.noun}"
        return rows


def _column(name: str, node: dict) -> Column | None:
    kind, enum = node.get("type"), tuple(node.get("enum") or ())
    if enum:
        return Column(name, label_of(name), "choice", enum)
    if kind in ("integer", "number", "boolean"):
        return Column(name, label_of(name), kind)
    if kind == "array" and schema._resolve(node.get("items") or {}).get("type") in ("string", None):
        return Column(name, label_of(name), "texts")  # authorized users: one input, separated by commas
    return Column(name, label_of(name)) if kind in ("string", None) else None


def _item_columns(items: dict, prefix: str = "", depth: int = 0) -> tuple[Column, ...]:
    """The scalar fields of a list's items, its lists of strings (one comma-separated input each) and those of
    its nested objects, two deep (`claimInfo.accessModes.readWriteOnce`), in the schema's order; lists of
    objects inside an item are kept with its row, not shown."""
    columns = []
    for name, child in schema._properties(items).items():
        node = schema._resolve(child)
        if "allOf" in node or node.get("type") == "object" or node.get("properties"):
            if depth < 2:
                columns.extend(_item_columns(child, f"{prefix}{name}.", depth + 1))
        else:
            columns.append(_column(f"{prefix}{name}", node))
    return tuple(column for column in columns if column is not None)


def _section_of(path: str) -> tuple[str, str]:
    parts = path.split(".")
    if len(parts) == 1:
        return "general", "General"
    if parts[0] == "storage" and len(parts) > 2:
        return f"storage-{parts[1]}", f"Storage · {parts[1]}"
    return parts[0], _title(parts[0])


@cache
def list_fields(policy_type: str) -> tuple[ListField, ...]:
    """The lists of objects of the policy type's defaults, from the schema the API validates with."""
    found = []
    for path, _, resolved in _defaults_fields(policy_type):
        if resolved.get("type") != "array":
            continue
        items = schema._resolve(resolved.get("items") or {})
        if items.get("type") == "object" or items.get("properties") or "allOf" in items:
            owner = path.removesuffix(".instances").rsplit(".", 1)[-1]
            columns = _item_columns(resolved.get("items") or {})
            if columns:
                found.append(ListField(path, _section_of(path)[0], NOUNS.get(owner, _title(owner)), columns))
    return tuple(found)


@cache
def sections(policy_type: str) -> tuple[Section, ...]:
    """The form's rows, in the schema's order, grouped by the field's first name (storage by its second)."""
    rules = schema.rule_fields(policy_type)
    rows: dict[str, Row] = {}
    for path, (kind, enum) in _defaults_leaves(policy_type).items():
        rows[path] = Row(path, default_type=kind, enum=enum)
    for path, rule in rules.items():
        row = rows.setdefault(path, Row(path))
        row.kind = rule["kind"]
        row.attributes = tuple(a for a in ORDER if a in rule["attributes"])
    grouped: dict[str, Section] = {}
    for row in rows.values():
        key, title = _section_of(row.path)
        grouped.setdefault(key, Section(key, title)).rows.append(row)
    return tuple(grouped.values())


def _title(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r" \1", name).capitalize()


def rows(policy_type: str) -> list[Row]:
    return [row for section in sections(policy_type) for row in section.rows]


# --- stored policy -> the form's values ---------------------------------------------------------------------

def _text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def _options_text(options) -> str:
    lines = []
    for option in options or ():
        if isinstance(option, Mapping):
            value, shown = option.get("value", ""), option.get("displayed")
            lines.append(f"{value} = {shown}" if shown else str(value))
        else:
            lines.append(str(option))
    return "\n".join(lines)


def values_of(policy_type: str, defaults: Mapping, rules: Mapping) -> dict[str, str]:
    values = {}
    for row in rows(policy_type):
        if row.default_type:
            values[row.default_name()] = _text(get_path(defaults, row.path))
        rule = get_path(rules, row.path) or {}
        for attribute in row.attributes:
            value = rule.get(attribute) if isinstance(rule, Mapping) else None
            values[row.rule_name(attribute)] = _options_text(value) if attribute == "options" else _text(value)
    return values


# --- posted values -> the policy ------------------------------------------------------------------------------

def _typed(kind: str, raw: str):
    """A cell's text as JSON of `kind`; text that does not fit goes as typed, so the API names the problem."""
    raw = raw.strip()
    if kind == "integer" and _INT.fullmatch(raw):
        return int(raw)
    if kind == "number" and _NUMBER.fullmatch(raw):
        number = float(raw)
        return int(number) if number.is_integer() and "." not in raw and "e" not in raw.lower() else number
    if kind == "boolean" and raw in ("true", "false"):
        return raw == "true"
    if kind == "array":
        return [item.strip() for item in raw.split(",") if item.strip()]
    return raw


def _options(raw: str) -> list[dict]:
    options = []
    for line in raw.splitlines():
        value, sep, shown = line.partition(" = ")
        if value.strip():
            options.append({"value": value.strip(), **({"displayed": shown.strip()} if sep and shown.strip() else {})})
    return options


def _remove(tree: dict, path: str) -> None:
    """Drop the value at `path` and the objects it leaves empty."""
    parts = path.split(".")
    trail = [tree]
    for part in parts[:-1]:
        node = trail[-1].get(part)
        if not isinstance(node, dict):
            return
        trail.append(node)
    trail[-1].pop(parts[-1], None)
    for depth in range(len(parts) - 1, 0, -1):
        if trail[depth] == {}:
            trail[depth - 1].pop(parts[depth - 1], None)


def policy_of(policy_type: str, data: Mapping, *, defaults: Mapping, rules: Mapping, lists=None) -> dict:
    """{"defaults", "rules"}: the stored ones with every field of the form set to what was posted (removed when
    empty); what the form does not show is kept. `lists`: the list fields' rows bound to `data` (path -> Rows),
    so that the API's errors can be filed on them afterwards."""
    defaults, rules = copy.deepcopy(dict(defaults or {})), copy.deepcopy(dict(rules or {}))
    for row in rows(policy_type):
        if row.default_type:
            raw = (data.get(row.default_name()) or "").strip()
            if raw:
                set_path(defaults, row.path, _typed(row.default_type, raw))
            else:
                _remove(defaults, row.path)
        for attribute in row.attributes:
            raw = (data.get(row.rule_name(attribute)) or "").strip()
            path = f"{row.path}.{attribute}"
            if not raw:
                _remove(rules, path)
            elif attribute == "options":
                set_path(rules, path, _options(raw))
            elif attribute == "locked":
                set_path(rules, path, [item.strip() for item in raw.split(",") if item.strip()])
            elif attribute in FLAGS:
                set_path(rules, path, _typed("boolean", raw))
            else:
                set_path(rules, path, _typed({"quantity": "string"}.get(row.kind, row.kind), raw))
    for field_ in list_fields(policy_type):
        if f"{field_.path}-rows" not in data:
            continue  # not in the posted form: kept as stored
        items = (lists[field_.path] if lists else field_.rows(data=data)).items()
        if items:
            set_path(defaults, field_.path, items)
        else:
            _remove(defaults, field_.path)
    return {"defaults": defaults, "rules": rules}


# --- the API's errors -> the form's fields -------------------------------------------------------------------

def _strip_index(text: str) -> str:
    return re.sub(r"\[\d+\]", "", text)


def field_of(policy_type: str, path: str) -> str | None:
    """`policy.rules.security.runAsUid.min` -> `r:security.runAsUid:min`; `policy.defaults.compute.x` ->
    `d:compute.x`; None when no field of the form holds it."""
    for prefix, rules in (("policy.rules.", True), ("policy.defaults.", False)):
        if not path.startswith(prefix):
            continue
        rest = path[len(prefix):]
        for row in sorted(rows(policy_type), key=lambda r: -len(r.path)):
            if rules and rest.startswith(f"{row.path}."):
                attribute = _strip_index(rest[len(row.path) + 1:]).split(".")[0]
                if attribute in row.attributes:
                    return row.rule_name(attribute)
            if not rules and row.default_type and _strip_index(rest) == row.path:
                return row.default_name()
    return None
