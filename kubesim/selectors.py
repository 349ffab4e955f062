"""Label and field selectors, parsed the way the API server parses `labelSelector=` and `fieldSelector=`.

Label selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, comma-joined (AND).
Field selectors: `f=v`, `f==v`, `f!=v`, comma-joined, over the fields each kind supports.
"""

import re

from .errors import bad_request

_KEY = r"(?:[a-z0-9A-Z](?:[-a-z0-9A-Z_./]*[a-z0-9A-Z])?)"
_VALUE = r"(?:(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?)"
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s*\(\s*((?:{_VALUE}\s*,\s*)*{_VALUE})\s*\)\s*$")
_EQ = re.compile(rf"^\s*({_KEY})\s*(==|!=|=)\s*({_VALUE})\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")

Requirement = tuple  # (key, op, values) with op in "in", "notin", "exists", "!"

# Fields each kind can be selected on, beyond metadata.name and metadata.namespace, as the real server allows.
_FIELDS = {
    "pods": {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
             "status.phase", "status.podIP", "status.nominatedNodeName", "spec.hostNetwork"},
    "events": {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
               "reason", "reportingComponent", "source", "type"},
    "namespaces": {"status.phase"},
    "secrets": {"type"},
    "nodes": {"spec.unschedulable"},
    "jobs.batch": {"status.successful"},
    "replicasets.apps": {"status.replicas"},
}


def _split_top_level(selector: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(selector):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(selector[start:i])
            start = i + 1
    parts.append(selector[start:])
    return [p for p in parts if p.strip()]


def parse_labels(selector: str | None) -> list[Requirement]:
    reqs = []
    for term in _split_top_level(selector or ""):
        if m := _SET.match(term):
            values = frozenset(v.strip() for v in m.group(3).split(","))
            reqs.append((m.group(1), m.group(2), values))
        elif m := _EQ.match(term):
            reqs.append((m.group(1), "notin" if m.group(2) == "!=" else "in", frozenset([m.group(3)])))
        elif m := _EXISTS.match(term):
            reqs.append((m.group(2), "!" if m.group(1) else "exists", frozenset()))
        else:
            raise bad_request(f"unable to parse requirement: found invalid selector term {term.strip()!r}")
    return reqs


def from_label_selector(sel: dict | None) -> list[Requirement]:
    """A metav1.LabelSelector (matchLabels + matchExpressions) as requirements."""
    sel = sel or {}
    reqs = [(k, "in", frozenset([v])) for k, v in (sel.get("matchLabels") or {}).items()]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in sel.get("matchExpressions") or []:
        reqs.append((expr["key"], ops[expr["operator"]], frozenset(expr.get("values") or [])))
    return reqs


def match_labels(reqs: list[Requirement], labels: dict | None) -> bool:
    labels = labels or {}
    for key, op, values in reqs:
        present = key in labels
        if op == "in" and not (present and labels[key] in values):
            return False
        if op == "notin" and present and labels[key] in values:
            return False
        if op == "exists" and not present:
            return False
        if op == "!" and present:
            return False
    return True


def parse_fields(selector: str | None, res_key: str) -> list[tuple[str, bool, str]]:
    """[(field, equal?, value)]; a field the kind does not support is a 400 as on the real server."""
    allowed = {"metadata.name", "metadata.namespace"} | _FIELDS.get(res_key, set())
    reqs = []
    for term in _split_top_level(selector or ""):
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*?)\s*$", term)
        if not m:
            raise bad_request(f"invalid selector: '{selector}'; can't understand '{term}'")
        field, op, value = m.groups()
        if field not in allowed:
            raise bad_request(f'field label not supported: {field}')
        reqs.append((field, op != "!=", value))
    return reqs


def field_value(obj: dict, field: str) -> str:
    if field == "source":
        return (obj.get("source") or {}).get("component", "")
    node = obj
    for part in field.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, bool):
        return "true" if node else "false"
    return "" if node is None else str(node)


def match_fields(reqs: list, obj: dict) -> bool:
    return all((field_value(obj, field) == value) == equal for field, equal, value in reqs)
