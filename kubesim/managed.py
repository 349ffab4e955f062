"""Field management, as the real API server keeps it in `metadata.managedFields`: which manager owns which fields,
server-side apply (`application/apply-patch+yaml`) with its conflicts and removals, and the ownership that plain
writes (create, update, patch) move to their manager.

A field set is a Python set of paths; a path is a tuple of elements written as in FieldsV1: `f:<field>` for a
struct or map field, `k:<json of the key fields>` for an item of a list keyed by fields (containers by name),
`v:<json value>` for an item of a set (finalizers). Atomic lists and scalars are leaves. The schema of a kind
(from the OpenAPI document, openapi.py) says which list is which; kinds without one (custom resources) are maps
all the way down with atomic lists, as the real server treats schemaless objects.
"""

from __future__ import annotations

import functools
import json

from .errors import ApiError
from .store import jcopy, now_rfc3339

# Fields no manager owns: the server sets them, or they identify the object.
_IGNORED_TOP = {"apiVersion", "kind", "status"}
_IGNORED_META = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                 "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields", "selfLink"}


# --- schemas ---------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def _definitions() -> dict:
    from .openapi import swagger_definitions

    return swagger_definitions()


@functools.lru_cache(maxsize=128)
def kind_schema(api_version: str, kind: str) -> dict | None:
    group, _, version = api_version.rpartition("/")
    for schema in _definitions().values():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            if (gvk["group"], gvk["version"], gvk["kind"]) == (group, version, kind):
                return schema
    return None


def _resolve(schema: dict | None) -> dict | None:
    while schema is not None and "$ref" in schema:
        schema = _definitions().get(schema["$ref"].rsplit("/", 1)[-1])
    return schema


def _child(schema: dict | None, key: str) -> dict | None:
    schema = _resolve(schema)
    if schema is None:
        return None
    if "properties" in schema:
        return _resolve(schema["properties"].get(key))
    extra = schema.get("additionalProperties")
    return _resolve(extra) if isinstance(extra, dict) else None


def _is_struct(schema: dict | None) -> bool:
    return schema is not None and "properties" in schema


def _list_kind(schema: dict | None) -> tuple[str, tuple[str, ...]]:
    """("map", keys) | ("set", ()) | ("atomic", ())"""
    if schema is None:
        return "atomic", ()
    kind = schema.get("x-kubernetes-list-type")
    keys = tuple(schema.get("x-kubernetes-list-map-keys") or ())
    if kind == "map" and keys:
        return "map", keys
    if kind == "set":
        return "set", ()
    if kind is None and schema.get("x-kubernetes-patch-merge-key"):
        return "map", (schema["x-kubernetes-patch-merge-key"],)
    return "atomic", ()


def _item_key(item, keys: tuple[str, ...]) -> str | None:
    if not isinstance(item, dict) or not all(k in item for k in keys[:1]):
        return None
    return "k:" + json.dumps({k: item[k] for k in sorted(keys) if k in item}, separators=(",", ":"))


def _set_key(item) -> str:
    return "v:" + json.dumps(item, separators=(",", ":"))


# --- field sets ------------------------------------------------------------------------------------------------

def field_set(obj: dict, schema: dict | None, maps: bool = False) -> set[tuple]:
    """Every path the object sets, leaves and members, without the fields no manager owns. With `maps`, a
    non-empty map (labels, data) is a member too: a plain write that adds a map owns it ("." in FieldsV1), an
    applied configuration owns only its entries, as on the real server."""
    out: set[tuple] = set()
    for key, value in obj.items():
        if key in _IGNORED_TOP:
            continue
        if key == "metadata" and isinstance(value, dict):
            meta_schema = _child(schema, "metadata")
            for mkey, mvalue in value.items():
                if mkey not in _IGNORED_META:
                    _walk(mvalue, _child(meta_schema, mkey), ("f:metadata", f"f:{mkey}"), out, maps)
            continue
        _walk(value, _child(schema, key), (f"f:{key}",), out, maps)
    return out


def _walk(value, schema: dict | None, path: tuple, out: set, maps: bool = False) -> None:
    if isinstance(value, dict):
        if not value or (maps and not _is_struct(schema)):
            out.add(path)  # an empty map or struct is a leaf
        for key, child in value.items():
            _walk(child, _child(schema, key), path + (f"f:{key}",), out, maps)
    elif isinstance(value, list):
        kind, keys = _list_kind(schema)
        if kind == "map":
            item_schema = _resolve(schema.get("items"))
            for item in value:
                element = _item_key(item, keys)
                if element is None:
                    out.add(path)
                    return
                out.add(path + (element,))
                for key, child in item.items():
                    _walk(child, _child(item_schema, key), path + (element, f"f:{key}"), out, maps)
        elif kind == "set":
            out.add(path)
            out.update(path + (_set_key(item),) for item in value)
        else:
            out.add(path)
    else:
        out.add(path)


def to_fields_v1(paths: set[tuple]) -> dict:
    tree: dict = {}
    for path in sorted(paths):
        node = tree
        for element in path:
            node = node.setdefault(element, {})
        node.setdefault(".", {})
    return _render(tree)


def _render(node: dict) -> dict:
    children = {k: _render(v) for k, v in node.items() if k != "."}
    if "." in node and children:
        return {".": {}, **children}
    return children


def from_fields_v1(tree: dict, prefix: tuple = ()) -> set[tuple]:
    out: set[tuple] = set()
    for key, child in (tree or {}).items():
        if key == ".":
            out.add(prefix)
            continue
        path = prefix + (key,)
        if not child:
            out.add(path)
        else:
            out |= from_fields_v1(child, path)
    return out


# --- values at paths -------------------------------------------------------------------------------------------

def _value_at(obj, path: tuple):
    """The value a path points at, or a sentinel when absent."""
    node = obj
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f" and isinstance(node, dict) and rest in node:
            node = node[rest]
        elif kind == "k" and isinstance(node, list):
            wanted = json.loads(rest)
            node = next((i for i in node if isinstance(i, dict)
                         and all(i.get(k) == v for k, v in wanted.items())), _MISSING)
        elif kind == "v" and isinstance(node, list):
            value = json.loads(rest)
            node = value if value in node else _MISSING
        else:
            return _MISSING
        if node is _MISSING:
            return _MISSING
    return node


_MISSING = object()


def _remove_at(obj, path: tuple) -> None:
    parent = _value_at(obj, path[:-1]) if len(path) > 1 else obj
    kind, _, rest = path[-1].partition(":")
    if kind == "f" and isinstance(parent, dict):
        parent.pop(rest, None)
    elif kind == "k" and isinstance(parent, list):
        wanted = json.loads(rest)
        parent[:] = [i for i in parent if not (isinstance(i, dict) and all(i.get(k) == v for k, v in wanted.items()))]
    elif kind == "v" and isinstance(parent, list):
        value = json.loads(rest)
        parent[:] = [i for i in parent if i != value]


def changed_paths(old: dict, new: dict, paths: set[tuple]) -> set[tuple]:
    """The paths of `paths` a write added, or whose value it changed (for leaves; a member with children, like a
    list item, changes through them)."""
    parents = {p[:i] for p in paths for i in range(len(p))}
    out = set()
    for path in paths:
        before = _value_at(old, path)
        if before is _MISSING:
            out.add(path)
            continue
        after = _value_at(new, path)
        if path not in parents and not isinstance(after, dict) and before != after:
            out.add(path)
    return out


# --- merging an applied configuration --------------------------------------------------------------------------

def merge(live, config, schema: dict | None):
    """The applied configuration over the live object: structs and maps merge, keyed lists merge by key, sets
    unite, everything else is replaced."""
    if isinstance(config, dict) and isinstance(live, dict):
        out = dict(live)
        for key, value in config.items():
            out[key] = merge(live.get(key), value, _child(schema, key)) if key in live else jcopy(value)
        return out
    if isinstance(config, list) and isinstance(live, list):
        kind, keys = _list_kind(schema)
        if kind == "map":
            item_schema = _resolve(schema.get("items"))
            out = list(live)
            for item in config:
                key = _item_key(item, keys)
                index = next((n for n, cur in enumerate(out) if key is not None and _item_key(cur, keys) == key), None)
                if index is None:
                    out.append(jcopy(item))
                else:
                    out[index] = merge(out[index], item, item_schema)
            return out
        if kind == "set":
            return list(live) + [jcopy(v) for v in config if v not in live]
    return jcopy(config)


# --- managers --------------------------------------------------------------------------------------------------

class Manager:
    """One managedFields entry: manager name, operation (Apply | Update) and the API version it wrote with."""

    def __init__(self, entry: dict):
        self.entry = entry
        self.paths = from_fields_v1(entry.get("fieldsV1") or {})

    @property
    def identity(self) -> tuple:
        apply = self.entry.get("operation") == "Apply"
        return self.entry.get("manager"), self.entry.get("operation"), None if apply else self.entry.get("apiVersion")

    def printed(self) -> str:
        name = json.dumps(self.entry.get("manager", ""))
        if self.entry.get("operation") == "Update":
            return f"{name} using {self.entry.get('apiVersion')}"
        return name


def _entry(manager: str, operation: str, api_version: str, paths: set[tuple]) -> dict:
    return {"manager": manager, "operation": operation, "apiVersion": api_version, "time": now_rfc3339(),
            "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(paths)}


def _managers(obj: dict | None) -> list[Manager]:
    return [Manager(e) for e in ((obj or {}).get("metadata") or {}).get("managedFields") or [] if isinstance(e, dict)]


def _entries(managers: list[Manager]) -> list[dict]:
    return [m.entry for m in managers if m.paths]


def _path_string(path: tuple) -> str:
    out = ""
    for element in path:
        kind, _, rest = element.partition(":")
        if kind == "f":
            out += f".{rest}"
        elif kind == "k":
            out += "[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(rest).items()) + "]"
        else:
            out += f"[={rest}]"
    return out


def conflict_error(conflicts: list[tuple[Manager, tuple]]) -> ApiError:
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {m.printed()}", "field": _path_string(p)}
              for m, p in conflicts]
    if len(conflicts) == 1:
        message = f"Apply failed with 1 conflict: conflict with {conflicts[0][0].printed()}: " \
                  f"{_path_string(conflicts[0][1])}"
    else:
        lines = []
        for printed in sorted({m.printed() for m, _ in conflicts}):
            lines.append(f"conflicts with {printed}:")
            lines += [f"- {_path_string(p)}" for m, p in conflicts if m.printed() == printed]
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return ApiError(409, "Conflict", message, {"causes": causes})


def apply(live: dict | None, config: dict, *, manager: str, api_version: str, force: bool) -> dict:
    """The object after `manager` applies `config` (not yet defaulted or validated), with its managedFields.
    Raises 409 Conflict when the configuration changes a field another manager owns, unless forced."""
    schema = kind_schema(api_version, config.get("kind", ""))
    live = live or {}
    config_paths = field_set(config, schema)
    managers = _managers(live)
    mine = next((m for m in managers if m.identity == (manager, "Apply", None)), None)
    merged = merge(live, config, schema)
    # Fields this manager applied before and no longer does are removed, unless someone else owns them too.
    others = set().union(*(m.paths for m in managers if m is not mine))
    for path in sorted((mine.paths if mine else set()) - config_paths - others, key=len, reverse=True):
        _remove_at(merged, path)
    changed = changed_paths(live, merged, config_paths)
    conflicts = [(m, p) for m in managers if m is not mine for p in sorted(m.paths & changed)]
    if conflicts and not force:
        raise conflict_error(conflicts)
    for m in managers:
        if m is not mine and force:
            m.paths -= changed
            m.entry = {**m.entry, "fieldsV1": to_fields_v1(m.paths)}
    entry = _entry(manager, "Apply", api_version, config_paths)
    if mine is not None and mine.paths == config_paths:
        entry = mine.entry  # the same fields again: the entry (and its time) stays, so a no-op is a no-op
    if mine is not None:
        mine.entry, mine.paths = entry, config_paths
    else:
        managers.append(Manager(entry))
    merged.setdefault("metadata", {})["managedFields"] = _entries(managers)
    return merged


def record_update(old: dict | None, new: dict, *, manager: str, api_version: str) -> None:
    """A plain write (create, update, patch) by `manager`: it owns what it changed, and others lose it."""
    schema = kind_schema(api_version, new.get("kind", ""))
    new_paths = field_set(new, schema, maps=True)
    if old is None:
        changed, removed = new_paths, set()
    else:
        old_paths = field_set(old, schema, maps=True)
        changed = changed_paths(old, new, new_paths)
        removed = old_paths - new_paths
    managers = _managers(old)
    if not changed and not removed:
        new["metadata"]["managedFields"] = _entries(managers)
        return
    mine = next((m for m in managers if m.identity == (manager, "Update", api_version)), None)
    for m in managers:
        if m is not mine:
            lost = m.paths & (changed | removed)
            if lost:
                m.paths -= lost
                m.entry = {**m.entry, "fieldsV1": to_fields_v1(m.paths)}
    paths = ((mine.paths if mine else set()) | changed) - removed
    paths &= new_paths
    entry = _entry(manager, "Update", api_version, paths)
    if mine is not None:
        mine.entry, mine.paths = entry, paths
    else:
        managers.append(Manager(entry))
    new["metadata"]["managedFields"] = _entries(managers)


def manager_from_user_agent(user_agent: str) -> str:
    # The real server's default: the User-Agent up to its first "/", at most 128 characters.
    return (user_agent or "").split("/", 1)[0][:128]
