"""Admission checks the real API server makes, for what clients trip over: names, labels, the OpenAPI schema of
built-in kinds (via kubernetes_validate's bundled schemas), and the semantic rules the schema cannot express.

Each check yields causes `{"reason", "message", "field"}` worded like the real validators; the API turns them
into one 422 Invalid.
"""

import functools
import json
import re

from . import quantity
from .errors import bad_request
from .resources import SCHEMA_VERSION

_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_LABEL_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

MSG_SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
MSG_LABEL_1123 = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
                  "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                  "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
MSG_LABEL_1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                  "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
                  "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
MSG_LABEL_VALUE = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                   "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
MSG_QUALIFIED = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
                 "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                 "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")

# Names that must be DNS labels rather than subdomains.
_NAME_RULES = {"namespaces": (_LABEL_1123, 63, MSG_LABEL_1123), "services": (_LABEL_1035, 63, MSG_LABEL_1035),
               "services.serving.knative.dev": (_LABEL_1035, 63, MSG_LABEL_1035)}
_EXTENDED_PREFIXES = ("nvidia.com/",)


def cause(field: str, message: str, reason: str = "FieldValueInvalid") -> dict:
    return {"reason": reason, "message": message, "field": field}


def _invalid(field: str, value, why: str) -> dict:
    return cause(field, f"Invalid value: {json.dumps(value)}: {why}")


def name_causes(res_key: str, name: str) -> list[dict]:
    pattern, limit, message = _NAME_RULES.get(res_key, (_SUBDOMAIN, 253, MSG_SUBDOMAIN))
    causes = []
    if len(name) > limit:
        causes.append(_invalid("metadata.name", name, f"must be no more than {limit} characters"))
    if not pattern.match(name):
        causes.append(_invalid("metadata.name", name, message))
    return causes


def labels_causes(labels, field: str) -> list[dict]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [_invalid(field, labels, "must be a map of strings")]
    causes = []
    for key, value in labels.items():
        causes += key_causes(key, field)
        if not isinstance(value, str):
            causes.append(_invalid(field, value, "label values must be strings"))
        elif len(value) > 63:
            causes.append(_invalid(field, value, "must be no more than 63 characters"))
        elif not _LABEL_VALUE.match(value):
            causes.append(_invalid(field, value, MSG_LABEL_VALUE))
    return causes


def key_causes(key: str, field: str) -> list[dict]:
    prefix, _, name = key.rpartition("/")
    causes = []
    if prefix and (len(prefix) > 253 or not _SUBDOMAIN.match(prefix)):
        causes.append(_invalid(field, key, "prefix part " + MSG_SUBDOMAIN))
    if not name or len(name) > 63 or not _QUALIFIED.match(name):
        causes.append(_invalid(field, key, MSG_QUALIFIED))
    return causes


@functools.lru_cache(maxsize=1)
def _schema_registry():
    import importlib.resources

    from referencing import Registry, Resource

    base = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema" / f"v{SCHEMA_VERSION}-local"
    definitions = json.loads((base / "_definitions.json").read_text())
    return base, Resource.from_contents(definitions) @ Registry()


@functools.lru_cache(maxsize=64)
def _validator(kind: str, api_version: str):
    """One compiled validator per kind: loading the 1.4 MB definitions per request would dominate create time."""
    import jsonschema
    from referencing import Resource

    base, registry = _schema_registry()
    # kubernetes_validate's naming: networking.k8s.io/v1 -> networking-v1, v1 -> v1.
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema = json.loads((base / f"{kind.lower()}-{group_version}.json").read_text())
    return jsonschema.validators.Draft202012Validator(schema, registry=Resource.from_contents(schema) @ registry)


def _field_path(parts) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def schema_causes(obj: dict) -> list[dict]:
    causes = []
    for error in sorted(_validator(obj["kind"], obj["apiVersion"]).iter_errors(obj), key=lambda e: list(map(str, e.absolute_path))):
        path = _field_path(error.absolute_path)
        if error.validator == "required":
            missing = re.match(r"'([^']+)'", error.message)
            field = ".".join(p for p in (path, missing.group(1) if missing else "") if p)
            causes.append(cause(field, "Required value", "FieldValueRequired"))
        elif error.validator == "enum":
            supported = ", ".join(json.dumps(v) for v in error.validator_value if v is not None)
            causes.append(cause(path, f"Unsupported value: {json.dumps(error.instance)}: supported values: "
                                      f"{supported}", "FieldValueNotSupported"))
        elif error.validator == "type":
            continue  # a decoding error, answered 400 by decode_check before validation
        else:
            causes.append(_invalid(path, error.instance, error.message))
        if len(causes) >= 10:
            break
    return causes


# What Go's JSON decoder (the real server's, 1.35) calls a JSON value of the wrong type, and the Go types of schema
# leaves: `json: cannot unmarshal <value> into Go struct field <Struct>.<path> of type <Go type>`.
_JSON_WORDS = {str: "string", bool: "bool", int: "number", float: "number", dict: "object", list: "array"}
_GO_SCALARS = {("integer", "int32"): "int32", ("integer", "int64"): "int64", ("integer", None): "int64",
               ("number", "double"): "float64", ("number", None): "float64", ("boolean", None): "bool",
               ("string", "byte"): "[]uint8", ("string", None): "string"}


def _go_type_of(schema: dict | None) -> str:
    """The Go type behind a Swagger schema: `int32`, `map[string]string`, `[]v1.Container`, `v1.LabelSelector`."""
    if not schema:
        return "interface {}"
    if "$ref" in schema:
        return ".".join(schema["$ref"].rsplit(".", 2)[-2:])  # ...batch.v1.JobSpec -> v1.JobSpec
    kind = schema.get("type")
    if kind == "array":
        return "[]" + _go_type_of(schema.get("items"))
    if kind == "object" and "additionalProperties" in schema:
        return "map[string]" + _go_type_of(schema["additionalProperties"])
    return _GO_SCALARS.get((kind, schema.get("format")), _GO_SCALARS.get((kind, None), "interface {}"))


def _go_field(api_version: str, kind: str, path) -> tuple[str, str, str]:
    """Where the decoder stopped: (the innermost Go struct, the JSON field path from the top without map keys or
    indexes, the Go type of the value there)."""
    from .openapi import swagger_definitions

    definitions = swagger_definitions()
    group, _, version = api_version.rpartition("/")
    name = next((n for n, d in definitions.items() for gvk in d.get("x-kubernetes-group-version-kind") or []
                 if (gvk["group"], gvk["version"], gvk["kind"]) == (group, version, kind)), None)
    struct, fields, schema = kind, [], {"$ref": f"#/definitions/{name}"} if name else None
    for part in path:
        while schema and "$ref" in schema:
            name = schema["$ref"].rsplit("/", 1)[-1]
            struct, schema = name.rsplit(".", 1)[-1], definitions.get(name)
        if schema is None:
            break
        if isinstance(part, int):
            schema = schema.get("items")
        elif "properties" in schema:
            fields.append(part)
            schema = schema["properties"].get(part)
        else:  # a map's key: the decoder names the map, and the type of its values
            schema = schema.get("additionalProperties")
    return struct, ".".join(fields), _go_type_of(schema)


def decode_check(obj: dict) -> bool:
    """A value of the wrong JSON type fails decoding on the real server: 400 BadRequest, before any validation.
    True when the object breaks no rule of its schema at all (defaulting keeps it so: no need to check again)."""
    found = list(_validator(obj["kind"], obj["apiVersion"]).iter_errors(obj))
    errors = [e for e in found if e.validator == "type"]
    if not errors:
        return not found
    error = min(errors, key=lambda e: list(map(str, e.absolute_path)))
    kind, version = obj["kind"], obj["apiVersion"].rpartition("/")[2]
    struct, field, go_type = _go_field(obj["apiVersion"], kind, error.absolute_path)
    value = _JSON_WORDS.get(type(error.instance), "value")
    if value == "number" and go_type.startswith(("int", "uint")):
        value = f"number {json.dumps(error.instance)}"  # a number that is not an integer: Go quotes it
    raise bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot unmarshal '
                      f"{value} into Go struct field {struct}.{field} of type {go_type}")


# --- semantic rules --------------------------------------------------------------------------------------------

def _resources_causes(resources: dict, path: str) -> list[dict]:
    causes, parsed = [], {}
    for part in ("limits", "requests"):
        for name, value in (resources.get(part) or {}).items():
            try:
                parsed[(part, name)] = quantity.parse(value)
            except ValueError:
                raise bad_request(quantity.PATTERN_MESSAGE) from None
    for (part, name), value in parsed.items():
        if value < 0:
            causes.append(_invalid(f"{path}.{part}[{name}]", value, "must be greater than or equal to 0"))
        if name.startswith(_EXTENDED_PREFIXES):
            if value != int(value):
                causes.append(_invalid(f"{path}.{part}[{name}]", value, "must be an integer"))
            if part == "requests" and ("limits", name) not in parsed:
                causes.append(cause(f"{path}.limits", "Required value: Limit must be set for non overcommitable "
                                                      "resources", "FieldValueRequired"))
            elif part == "requests" and parsed[("limits", name)] != value:
                causes.append(_invalid(f"{path}.requests[{name}]", resources["requests"][name],
                                       f"must be equal to {name} limit of {resources['limits'][name]}"))
        elif part == "requests" and ("limits", name) in parsed and value > parsed[("limits", name)]:
            causes.append(_invalid(f"{path}.requests", resources["requests"][name],
                                   f"must be less than or equal to {name} limit of {resources['limits'][name]}"))
    return causes


def pod_spec_causes(spec: dict, path: str, restart_policies: tuple[str, ...] | None) -> list[dict]:
    causes = []
    if not isinstance(spec, dict):
        return [cause(path, "Required value", "FieldValueRequired")]
    containers = spec.get("containers") or []
    if not containers:
        causes.append(cause(f"{path}.containers", "Required value", "FieldValueRequired"))
    seen = set()
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            if isinstance(c, dict):
                causes += _container_causes(c, f"{path}.{field}[{i}]", seen)
    policy = spec.get("restartPolicy")
    if restart_policies and policy not in restart_policies:
        supported = ", ".join(json.dumps(p) for p in restart_policies)
        causes.append(cause(f"{path}.restartPolicy", (f"Unsupported value: {json.dumps(policy)}: supported values: "
                                                      f"{supported}") if policy else "Required value",
                            "FieldValueNotSupported" if policy else "FieldValueRequired"))
    return causes


def _container_causes(c: dict, cpath: str, seen: set) -> list[dict]:
    """A container's name (unique among the pod's, in `seen`), image and resources."""
    causes = []
    name = c.get("name") or ""
    if not name:
        causes.append(cause(f"{cpath}.name", "Required value", "FieldValueRequired"))
    elif not _LABEL_1123.match(name) or len(name) > 63:
        causes.append(_invalid(f"{cpath}.name", name, MSG_LABEL_1123))
    elif name in seen:
        causes.append(cause(f"{cpath}.name", f'Duplicate value: "{name}"', "FieldValueDuplicate"))
    seen.add(name)
    if not c.get("image"):
        causes.append(cause(f"{cpath}.image", "Required value", "FieldValueRequired"))
    return causes + _resources_causes(c.get("resources") or {}, f"{cpath}.resources")


def _selector_causes(obj: dict) -> list[dict]:
    from .selectors import from_label_selector, match_labels

    spec = obj.get("spec") or {}
    selector = spec.get("selector")
    if not selector or not (selector.get("matchLabels") or selector.get("matchExpressions")):
        return [cause("spec.selector", "Required value", "FieldValueRequired")]
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not match_labels(from_label_selector(selector), labels):
        return [_invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`")]
    return []


def semantic_causes(res_key: str, obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    template = spec.get("template") or {}
    if res_key == "pods":
        return pod_spec_causes(spec, "spec", ("Always", "OnFailure", "Never"))
    if res_key == "jobs.batch":
        return (labels_causes((template.get("metadata") or {}).get("labels"), "spec.template.metadata.labels")
                + pod_spec_causes(template.get("spec"), "spec.template.spec", ("OnFailure", "Never")))
    if res_key in ("deployments.apps", "replicasets.apps"):
        return (_selector_causes(obj)
                + labels_causes((template.get("metadata") or {}).get("labels"), "spec.template.metadata.labels")
                + pod_spec_causes(template.get("spec"), "spec.template.spec", ("Always",)))
    if res_key == "services.serving.knative.dev":
        return pod_spec_causes(template.get("spec"), "spec.template.spec", None)
    if res_key == "services":
        return _service_causes(spec)
    return []


def _service_causes(spec: dict) -> list[dict]:
    kind = spec.get("type") or "ClusterIP"
    ports = spec.get("ports") or []
    causes = []
    if not ports and kind != "ExternalName" and spec.get("clusterIP") != "None":
        causes.append(cause("spec.ports", "Required value", "FieldValueRequired"))
    for i, port in enumerate(ports):
        number = port.get("port")
        if not isinstance(number, int) or not 0 < number < 65536:
            causes.append(_invalid(f"spec.ports[{i}].port", number, "must be between 1 and 65535, inclusive"))
        node_port = port.get("nodePort")
        if node_port and not 30000 <= node_port <= 32767:
            causes.append(_invalid(f"spec.ports[{i}].nodePort", node_port,
                                   "provided port is not in the valid range. The range of valid ports is "
                                   "30000-32767"))
        if len(ports) > 1 and not port.get("name"):
            causes.append(cause(f"spec.ports[{i}].name", "Required value", "FieldValueRequired"))
    return causes
