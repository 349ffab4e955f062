"""PATCH bodies: JSON merge patch (RFC 7386), strategic merge patch, and JSON patch (RFC 6902).

The strategic merge patch merges the lists the real server merges by key (containers, env, ports, volumes, ...)
and honours the `$patch: replace|delete` directive; other directives (`$setElementOrder`, `$retainKeys`) are
accepted and dropped, which keeps the result right for what clients send in practice.
"""

import copy

from .errors import ApiError, bad_request

# Patch-merge keys of the lists Kubernetes merges by key (from the `patchMergeKey` tags of the Go types).
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "imagePullSecrets": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "conditions": "type", "ownerReferences": "uid", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name", "readinessGates": "conditionType",
}
MERGED_PRIMITIVE_LISTS = {"finalizers"}


def merge_patch(target, patch):
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _list_key(field: str, items: list) -> str | None:
    if field == "ports":
        # Container ports merge by containerPort, Service ports by port.
        return "containerPort" if any(isinstance(i, dict) and "containerPort" in i for i in items) else "port"
    return MERGE_KEYS.get(field)


def strategic_merge(target, patch, field: str = ""):
    if isinstance(patch, list):
        return _merge_list(target if isinstance(target, list) else [], patch, field)
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            result[name] = [v for v in result.get(name) or [] if v not in value]
            continue
        if key.startswith("$"):  # $setElementOrder/..., $retainKeys: ordering hints, dropped
            continue
        if value is None:
            result.pop(key, None)
            continue
        merged = strategic_merge(result.get(key), value, key)
        if merged is None:
            result.pop(key, None)
        else:
            result[key] = merged
    return result


def _merge_list(target: list, patch: list, field: str) -> list:
    if field in MERGED_PRIMITIVE_LISTS:
        return list(target) + [v for v in patch if v not in target]
    key = _list_key(field, patch + target)
    if not key or not all(isinstance(i, dict) for i in patch):
        return [i for i in copy.deepcopy(patch) if not (isinstance(i, dict) and i.get("$patch"))]
    if any(i.get("$patch") == "replace" for i in patch):
        return [i for i in copy.deepcopy(patch) if not i.get("$patch")]
    result = list(target)
    for item in patch:
        index = next((n for n, t in enumerate(result) if isinstance(t, dict) and t.get(key) == item.get(key)), None)
        if item.get("$patch") == "delete":
            if index is not None:
                result.pop(index)
        elif index is None:
            result.append(strategic_merge({}, item, ""))
        else:
            result[index] = strategic_merge(result[index], item, "")
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise bad_request(f"invalid JSON pointer: {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _resolve(doc, parts: list[str]):
    node = doc
    for part in parts:
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node


def _unprocessable(message: str) -> ApiError:
    return ApiError(422, "Invalid", message, {})


def json_patch(doc, ops):
    if not isinstance(ops, list):
        raise bad_request("json patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        kind, parts = op.get("op"), _pointer(op.get("path", ""))
        try:
            if kind == "test":
                if _resolve(doc, parts) != op.get("value"):
                    raise _unprocessable(f"testing value {op.get('path')} failed")
                continue
            if kind in ("move", "copy"):
                value = copy.deepcopy(_resolve(doc, _pointer(op["from"])))
                if kind == "move":
                    doc = _remove(doc, _pointer(op["from"]))
                doc = _add(doc, parts, value)
            elif kind == "add":
                doc = _add(doc, parts, copy.deepcopy(op.get("value")))
            elif kind == "remove":
                doc = _remove(doc, parts)
            elif kind == "replace":
                _resolve(doc, parts)  # must exist
                doc = _add(_remove(doc, parts), parts, copy.deepcopy(op.get("value")))
            else:
                raise bad_request(f"Unexpected kind: {kind}")
        except (KeyError, IndexError, ValueError, TypeError):
            raise _unprocessable(f"the server rejected our request due to an error in our request: "
                                 f"{kind} operation does not apply: doc is missing path: \"{op.get('path')}\"") from None
    return doc


def _add(doc, parts, value):
    if not parts:
        return value
    parent = _resolve(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        index = len(parent) if last == "-" else int(last)
        if index > len(parent):
            raise IndexError(index)
        parent.insert(index, value)
    else:
        parent[last] = value
    return doc


def _remove(doc, parts):
    parent = _resolve(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, list):
        parent.pop(int(last))
    else:
        del parent[last]
    return doc
