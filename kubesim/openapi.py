"""`GET /openapi/v2`: the OpenAPI (Swagger 2.0) document of the kinds this server serves, which kubectl downloads
for client-side validation (`kubectl apply -f`) and for computing strategic merge patches.

Source: the Kubernetes definitions bundled with kubernetes_validate (`v<SCHEMA_VERSION>-local/_definitions.json`,
generated from Kubernetes' own OpenAPI document by the kubernetes-json-schema project) — the same schemas this
server validates built-in kinds with. They are turned back into Swagger 2.0 form (nullable types and the oneOf of
Quantity / IntOrString are JSON Schema additions of that project), limited to the definitions the served kinds
reach, and given paths with the operations and query parameters a real server lists (kubectl looks up the PATCH
operation of a kind to decide which parameters the server supports; like a 1.20 server, no `fieldValidation`, so
kubectl validates on its side).

kubectl asks for `application/com.github.proto-openapi.spec.v2@v1.0+protobuf` and has no JSON fallback: the
document is also encoded as the protobuf `openapi.v2.Document` of google/gnostic (OpenAPIv2.proto), as the real
server serves it; other Accept values get JSON. Both encodings are built once, on first request.
"""

from __future__ import annotations

import functools
import json
import struct

from .resources import KUBE_VERSION, SCHEMA_VERSION

PROTOBUF_MIME = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
_DEFS = "#/$defs/"
# Kinds Kubernetes documents as strings with a format (the JSON Schema export spells them as oneOf).
_SCALARS = {"io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"}}
# Definitions every server lists besides its kinds: the bodies of deletes, patches and errors.
_COMMON = ("io.k8s.apimachinery.pkg.apis.meta.v1.Status", "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
           "io.k8s.apimachinery.pkg.apis.meta.v1.Patch", "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
           "io.k8s.api.autoscaling.v1.Scale")
_CONSUMES = {"patch": ["application/json-patch+json", "application/merge-patch+json",
                       "application/strategic-merge-patch+json", "application/apply-patch+yaml"]}
_PRODUCES = ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"]


def _query(name: str, kind: str, description: str) -> dict:
    return {"uniqueItems": True, "type": kind, "description": description, "name": name, "in": "query"}


_DRY_RUN = _query("dryRun", "string", "When present, indicates that modifications should not be persisted. An "
                                      "invalid or unrecognized dryRun directive will result in an error response "
                                      "and no further processing of the request. Valid values are: - All: all dry "
                                      "run stages will be processed")
_FIELD_MANAGER = _query("fieldManager", "string", "fieldManager is a name associated with the actor or entity that "
                                                  "is making these changes. This field is required for apply "
                                                  "requests (application/apply-patch).")
_FORCE = _query("force", "boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire "
                                    "conflicting fields owned by other people.")
_LIST_PARAMS = [_query(n, t, d) for n, t, d in (
    ("allowWatchBookmarks", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\"."),
    ("continue", "string", "The continue option should be set when retrieving more results from the server."),
    ("fieldSelector", "string", "A selector to restrict the list of returned objects by their fields."),
    ("labelSelector", "string", "A selector to restrict the list of returned objects by their labels."),
    ("limit", "integer", "limit is a maximum number of responses to return for a list call."),
    ("resourceVersion", "string", "resourceVersion sets a constraint on what resource versions a request may be "
                                  "served from."),
    ("resourceVersionMatch", "string", "resourceVersionMatch determines how resourceVersion is applied to list "
                                       "calls."),
    ("timeoutSeconds", "integer", "Timeout for the list/watch call."),
    ("watch", "boolean", "Watch for changes to the described resources and return them as a stream of add, "
                         "update, and remove notifications."))]


def _swagger_schema(node):
    """One schema node of the JSON Schema export, back in Swagger 2.0 form."""
    if isinstance(node, list):
        return [_swagger_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$ref":
            out[key] = "#/definitions/" + value.removeprefix(_DEFS)
        elif key == "type" and isinstance(value, list):
            out[key] = next(t for t in value if t != "null")
        elif key == "properties":
            out[key] = {name: _swagger_schema(prop) for name, prop in value.items()}
            for name in ("apiVersion", "kind"):  # the export pins them with an enum; Kubernetes does not
                if isinstance(out[key].get(name), dict):
                    out[key][name].pop("enum", None)
        elif key in ("items", "additionalProperties", "allOf"):
            out[key] = _swagger_schema(value)
        else:
            out[key] = value
    return out


def _refs(node, found: set):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.removeprefix(_DEFS))
            else:
                _refs(value, found)
    elif isinstance(node, list):
        for value in node:
            _refs(value, found)


@functools.lru_cache(maxsize=1)
def _exported_definitions() -> dict:
    import importlib.resources

    base = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema" / f"v{SCHEMA_VERSION}-local"
    return json.loads((base / "_definitions.json").read_text())["$defs"]


@functools.lru_cache(maxsize=1)
def swagger_definitions() -> dict:
    """Every exported definition in Swagger 2.0 form (the schemas of kinds, for documents and field management)."""
    out = {}
    for name, schema in _exported_definitions().items():
        if name in _SCALARS:
            out[name] = {**({"description": schema["description"]} if "description" in schema else {}),
                         **_SCALARS[name]}
        else:
            out[name] = _swagger_schema(schema)
    return out


def _kind_index(definitions: dict) -> dict:
    index = {}
    for name, schema in definitions.items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or []:
            index[(gvk["group"], gvk["version"], gvk["kind"])] = name
    return index


def _operation(action: str, res, definition: str, verb: str, summary: str, params: list, ok_schema: str) -> dict:
    group = res.group.split(".")[0] if res.group else "core"
    operation_name = f"{verb}{(res.group.split('.')[0].capitalize() if res.group else 'Core')}" \
                     f"{res.version.capitalize()}{'Namespaced' if res.namespaced else ''}{res.kind}"
    responses = {"200": {"description": "OK", "schema": {"$ref": f"#/definitions/{ok_schema}"}},
                 "401": {"description": "Unauthorized"}}
    if action == "post":
        responses["201"] = {"description": "Created", "schema": {"$ref": f"#/definitions/{definition}"}}
    return {"description": f"{summary} {res.kind}", "consumes": _CONSUMES.get(action, ["*/*"]),
            "produces": _PRODUCES, "schemes": ["https"], "tags": [f"{group}_{res.version}"],
            "operationId": operation_name, "parameters": params, "responses": responses,
            "x-kubernetes-action": verb if verb != "replace" else "put",
            "x-kubernetes-group-version-kind": {"group": res.group, "kind": res.kind, "version": res.version}}


def _paths(registry, index: dict) -> tuple[dict, set]:
    paths, used = {}, set()
    body = {"name": "body", "in": "body", "required": True}
    for res in registry.all:
        definition = index.get((res.group, res.version, res.kind))
        if definition is None or not res.builtin or "create" not in res.verbs:
            continue  # custom resources without a schema, aggregated read-only APIs
        list_definition = index.get((res.group, res.version, res.list_kind), definition)
        used.update((definition, list_definition))
        prefix = f"/apis/{res.group}/{res.version}" if res.group else "/api/v1"
        scope = f"{prefix}/namespaces/{{namespace}}" if res.namespaced else prefix
        kind_body = {**body, "schema": {"$ref": f"#/definitions/{definition}"}}
        collection = {
            "get": _operation("get", res, definition, "list", "list or watch objects of kind", _LIST_PARAMS,
                              list_definition),
            "post": _operation("post", res, definition, "post", "create a", [kind_body, _DRY_RUN, _FIELD_MANAGER],
                               definition),
        }
        if "deletecollection" in res.verbs:
            collection["delete"] = _operation("delete", res, definition, "deletecollection",
                                              "delete collection of", [_DRY_RUN, *_LIST_PARAMS],
                                              "io.k8s.apimachinery.pkg.apis.meta.v1.Status")
        delete_body = {"name": "body", "in": "body",
                       "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"}}
        patch_body = {**body, "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
        item = {
            "get": _operation("get", res, definition, "get", "read the specified", [], definition),
            "put": _operation("put", res, definition, "put", "replace the specified",
                              [kind_body, _DRY_RUN, _FIELD_MANAGER], definition),
            "delete": _operation("delete", res, definition, "delete", "delete a",
                                 [delete_body, _DRY_RUN,
                                  _query("gracePeriodSeconds", "integer", "The duration in seconds before the "
                                                                          "object should be deleted."),
                                  _query("propagationPolicy", "string", "Whether and how garbage collection will "
                                                                        "be performed.")],
                                 "io.k8s.apimachinery.pkg.apis.meta.v1.Status"),
            "patch": _operation("patch", res, definition, "patch", "partially update the specified",
                                [patch_body, _DRY_RUN, _FIELD_MANAGER, _FORCE], definition),
        }
        namespace = [{"uniqueItems": True, "type": "string", "name": "namespace", "in": "path", "required": True,
                      "description": "object name and auth scope, such as for teams and projects"}]
        name = [{"uniqueItems": True, "type": "string", "name": "name", "in": "path", "required": True,
                 "description": f"name of the {res.kind}"}]
        scoped = namespace if res.namespaced else []
        paths[f"{scope}/{res.plural}"] = {**collection, "parameters": scoped}
        paths[f"{scope}/{res.plural}/{{name}}"] = {**item, "parameters": name + scoped}
        if res.namespaced:
            paths[f"{prefix}/{res.plural}"] = {"get": _operation("get", res, definition, "list",
                                                                 "list or watch objects of kind", _LIST_PARAMS,
                                                                 list_definition), "parameters": []}
    return paths, used


@functools.lru_cache(maxsize=4)
def _document(registry) -> dict:
    exported = _exported_definitions()
    paths, roots = _paths(registry, _kind_index(exported))
    wanted, pending = set(), [*roots, *_COMMON]
    while pending:  # the definitions the served kinds reach through $ref
        name = pending.pop()
        if name in wanted or name not in exported:
            continue
        wanted.add(name)
        found = set()
        _refs(exported[name], found)
        pending.extend(found - wanted)
    converted = swagger_definitions()
    definitions = {name: converted[name] for name in sorted(wanted)}
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": KUBE_VERSION["gitVersion"]},
            "paths": dict(sorted(paths.items())), "definitions": definitions,
            "securityDefinitions": {"BearerToken": {"description": "Bearer Token authentication", "type": "apiKey",
                                                    "name": "authorization", "in": "header"}},
            "security": [{"BearerToken": []}]}


@functools.lru_cache(maxsize=4)
def json_bytes(registry) -> bytes:
    return json.dumps(_document(registry), separators=(",", ":")).encode()


@functools.lru_cache(maxsize=4)
def protobuf_bytes(registry) -> bytes:
    return _encode_document(_document(registry))


def wants_protobuf(accept: str) -> bool:
    return PROTOBUF_MIME in accept


# --- protobuf encoding of gnostic's openapi.v2.Document (field numbers from OpenAPIv2.proto) ----------------

def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _string(field: int, value: str) -> bytes:
    return _bytes(field, value.encode()) if value else b""


def _bool(field: int, value: bool) -> bytes:
    return _varint(field << 3) + b"\x01" if value else b""


def _int(field: int, value: int) -> bytes:
    return _varint(field << 3) + _varint(int(value))


def _double(field: int, value: float) -> bytes:
    return _varint(field << 3 | 1) + struct.pack("<d", float(value))


def _any(value) -> bytes:
    # gnostic keeps free-form values (extensions, defaults, enums) as YAML text; JSON is YAML.
    return _string(2, json.dumps(value, separators=(",", ":")))


def _extensions(field: int, node: dict) -> bytes:
    return b"".join(_bytes(field, _string(1, k) + _bytes(2, _any(v))) for k, v in node.items() if k.startswith("x-"))


def _schema(node: dict) -> bytes:
    out = [_string(1, node.get("$ref", "")), _string(2, node.get("format", "")), _string(3, node.get("title", "")),
           _string(4, node.get("description", ""))]
    if "default" in node:
        out.append(_bytes(5, _any(node["default"])))
    for field, key in ((6, "multipleOf"), (7, "maximum"), (9, "minimum")):
        if key in node:
            out.append(_double(field, node[key]))
    for field, key in ((11, "maxLength"), (12, "minLength"), (14, "maxItems"), (15, "minItems"),
                       (17, "maxProperties"), (18, "minProperties")):
        if key in node:
            out.append(_int(field, node[key]))
    out.append(_string(13, node.get("pattern", "")))
    out.append(_bool(16, node.get("uniqueItems", False)))
    out += [_string(19, r) for r in node.get("required") or []]
    out += [_bytes(20, _any(v)) for v in node.get("enum") or []]
    out += _additional_properties(node.get("additionalProperties"))
    if node.get("type"):
        kinds = node["type"] if isinstance(node["type"], list) else [node["type"]]
        out.append(_bytes(22, b"".join(_string(1, k) for k in kinds)))
    if isinstance(node.get("items"), dict):
        out.append(_bytes(23, _bytes(1, _schema(node["items"]))))
    out += [_bytes(24, _schema(s)) for s in node.get("allOf") or []]
    if node.get("properties"):
        out.append(_bytes(25, b"".join(_bytes(1, _string(1, k) + _bytes(2, _schema(v)))
                                       for k, v in node["properties"].items())))
    out.append(_bool(27, node.get("readOnly", False)))
    out.append(_extensions(31, node))
    return b"".join(out)


def _additional_properties(extra) -> list[bytes]:
    if isinstance(extra, dict):
        return [_bytes(21, _bytes(1, _schema(extra)))]
    if isinstance(extra, bool):
        return [_bytes(21, _varint(2 << 3) + (b"\x01" if extra else b"\x00"))]
    return []


def _parameter(param: dict) -> bytes:
    if param["in"] == "body":
        body = (_string(1, param.get("description", "")) + _string(2, param["name"]) + _string(3, "body")
                + _bool(4, param.get("required", False)) + _bytes(5, _schema(param["schema"])))
        parameter = _bytes(1, body)
    else:  # query (field 3) and path (field 4) sub-schemas share their first fields
        common = (_bool(1, param.get("required", False)) + _string(2, param["in"])
                  + _string(3, param.get("description", "")) + _string(4, param["name"]))
        if param["in"] == "query":
            sub = _bytes(3, common + _string(6, param.get("type", "")) + _bool(20, param.get("uniqueItems", False)))
        else:
            sub = _bytes(4, common + _string(5, param.get("type", "")) + _bool(19, param.get("uniqueItems", False)))
        parameter = _bytes(2, sub)
    return _bytes(1, parameter)  # ParametersItem.parameter


def _operation_bytes(op: dict) -> bytes:
    out = [_string(1, t) for t in op.get("tags", [])]
    out += [_string(3, op.get("description", "")), _string(5, op.get("operationId", ""))]
    out += [_string(6, p) for p in op.get("produces", [])] + [_string(7, c) for c in op.get("consumes", [])]
    out += [_bytes(8, _parameter(p)) for p in op.get("parameters", [])]
    codes = b""
    for code, response in op.get("responses", {}).items():
        resp = _string(1, response.get("description", ""))
        if "schema" in response:
            resp += _bytes(2, _bytes(1, _schema(response["schema"])))
        codes += _bytes(1, _string(1, code) + _bytes(2, _bytes(1, resp)))
    out.append(_bytes(9, codes))
    out += [_string(10, s) for s in op.get("schemes", [])]
    out.append(_extensions(13, op))
    return b"".join(out)


_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _encode_document(doc: dict) -> bytes:
    info = _string(1, doc["info"]["title"]) + _string(2, doc["info"]["version"])
    paths = b""
    for path, item in doc["paths"].items():
        encoded = b"".join(_bytes(_METHODS[m], _operation_bytes(op)) for m, op in item.items() if m in _METHODS)
        encoded += b"".join(_bytes(9, _parameter(p)) for p in item.get("parameters", []))
        paths += _bytes(2, _string(1, path) + _bytes(2, encoded))
    definitions = b"".join(_bytes(1, _string(1, name) + _bytes(2, _schema(schema)))
                           for name, schema in doc["definitions"].items())
    security = b"".join(_bytes(1, _string(1, name) + _bytes(2, _bytes(2, _string(1, s["type"]) + _string(2, s["name"])
                                                                      + _string(3, s["in"])
                                                                      + _string(4, s["description"]))))
                        for name, s in doc["securityDefinitions"].items())
    requirements = b"".join(_bytes(12, b"".join(_bytes(1, _string(1, k) + _bytes(2, b"".join(_string(1, v) for v in vs)))
                                                for k, vs in req.items())) for req in doc["security"])
    return (_string(1, doc["swagger"]) + _bytes(2, info) + _bytes(8, paths) + _bytes(9, definitions) + requirements
            + _bytes(13, security))
