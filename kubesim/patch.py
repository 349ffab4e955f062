"""PATCH bodies: JSON merge patch (RFC 7386, by the json-merge-patch library), strategic merge patch (ours: no
library does it), and JSON patch (RFC 6902, by the jsonpatch library).

The strategic merge patch merges the lists the real server merges by key (containers, env, ports, volumes, ...)
and honours the `$patch: replace|delete` directive; other directives (`$setElementOrder`, `$retainKeys`) are
accepted and dropped, which keeps the result right for what clients send in practice.
"""

import copy

import json_merge_patch
import jsonpatch

from .errors import ApiError, bad_request

# Patch-merge keys of the lists Kubernetes merges by key (from the `patchMergeKey` tags of the Go types).
MERGE_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "imagePullSecrets": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath",
    "conditions": "type", "ownerReferences": "uid", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name", "readinessGates": "conditionType",
}
MERGED_PRIMITIVE_LISTS = {"finalizers"}
OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")


def merge_patch(target, patch):
    """RFC 7386, by the json-merge-patch library; neither argument is changed."""
    return json_merge_patch.merge(copy.deepcopy(target) if isinstance(target, dict) else {}, copy.deepcopy(patch))


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
    replaced = not key or not all(isinstance(i, dict) for i in patch) or any(i.get("$patch") == "replace"
                                                                              for i in patch)
    if replaced:
        return [i for i in copy.deepcopy(patch) if not (isinstance(i, dict) and i.get("$patch"))]
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


def _unprocessable(message: str) -> ApiError:
    return ApiError(422, "Invalid", message, {})


def _operation(op) -> dict:
    """An operation as the library takes it, or the server's 400 for one it does not know or a bad pointer."""
    kind = op.get("op") if isinstance(op, dict) else None
    if kind not in OPERATIONS:
        raise bad_request(f"Unexpected kind: {kind}")
    op = {**op, "path": op.get("path", "")}
    for field in ("path", "from"):
        pointer = op.get(field)
        if isinstance(pointer, str) and pointer and not pointer.startswith("/"):
            raise bad_request(f"invalid JSON pointer: {pointer!r}")
    return op


def json_patch(doc, ops):
    """RFC 6902, by the jsonpatch library, an operation at a time (the errors name the one that failed)."""
    if not isinstance(ops, list):
        raise bad_request("json patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        op = _operation(op)
        try:
            doc = jsonpatch.apply_patch(doc, [op], in_place=True)
        except jsonpatch.JsonPatchTestFailed:
            raise _unprocessable(f"testing value {op['path']} failed") from None
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError, IndexError, ValueError,
                TypeError):
            raise _unprocessable(f"the server rejected our request due to an error in our request: "
                                 f"{op['op']} operation does not apply: doc is missing path: \"{op['path']}\"") from None
    return doc
