"""Run:ai's own Policy schemas (policies/schema/runai-policy.json, extracted by scripts/policy_schemas.py) as
the authority on the shape of a policy: a jsonschema validator per component, and the table of rule fields
of each policy type (`security.runAsUid` -> "integer", `storage.hostPath.instances` -> "items", …) that the
merge and the checks walk. Pure: read once from the file, no models."""

import json
from functools import cache
from pathlib import Path

from jsonschema import Draft202012Validator

DOCUMENT = Path(__file__).with_name("runai-policy.json")

# Policy type (the URL's plural) -> the Run:ai schema prefix and the workload kind it governs.
TYPES = {"trainings": "Training", "workspaces": "Workspace", "inferences": "Inference"}
TYPE_OF_KIND = {"training": "trainings", "workspace": "workspaces", "inference": "inferences",
                "stream": "workspaces",
                # A distributed training's master and workers are held to the training policy (Run:ai has a
                # distributed policy type of its own; PaaS Studio does not yet).
                "distributed": "trainings"}  # a Kit stream is an interactive Deployment: the workspace policy
LIST_TYPE = {"trainings": "training", "workspaces": "workspace", "inferences": "inference"}  # PolicyType enum

# Fields of a workload spec that reach a pod but that Run:ai 2.18's policy of the type has no rules for: Run:ai
# latest's inference spec (and PaaS Studio's, workloads.specs) has hostPath, nfs and priorityClass, its 2.18
# policy does not. The training policy's rules for them apply, so that the secure default and a platform admin
# reach every field that reaches a pod.
BORROWED_RULES = {"inferences": ("trainings", ("storage.hostPath", "storage.nfs", "priorityClass"))}

# Rule fields PaaS Studio adds to Run:ai 2.18's policy of a type, so that every field that bounds what a workload
# puts on the cluster has a rule (issue 37): latest's `terminationGracePeriodSeconds` (its Training and Workspace
# policies have it), latest's distributed policy's worker counts (a distributed training takes the training policy
# here, workers' counts at the spec's top level as in its create body), and PaaS Studio's own
# `security.automountServiceAccountToken`.
_INTEGER = {"kind": "integer", "attributes": ["canEdit", "max", "min", "required", "step"]}
_BOOLEAN = {"kind": "boolean", "attributes": ["canEdit", "required"]}
ADDED_RULES = {
    "trainings": {"terminationGracePeriodSeconds": _INTEGER, "numWorkers": _INTEGER, "minReplicas": _INTEGER,
                  "maxReplicas": _INTEGER, "security.automountServiceAccountToken": _BOOLEAN},
    "workspaces": {"terminationGracePeriodSeconds": _INTEGER, "security.automountServiceAccountToken": _BOOLEAN},
    "inferences": {"security.automountServiceAccountToken": _BOOLEAN},
}

RULE_ATTRIBUTES = {"sourceOfRule", "required", "canEdit", "min", "max", "step", "options", "canAdd", "locked"}


@cache
def schemas() -> dict:
    return json.loads(DOCUMENT.read_text())["components"]["schemas"]


def _nullable_to_json_schema(node):
    """OpenAPI 3.0's `nullable: true` is JSON Schema's `type: [t, "null"]` (or null as an alternative)."""
    if isinstance(node, list):
        return [_nullable_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _nullable_to_json_schema(value) for key, value in node.items()}
    if node.pop("nullable", False):
        if isinstance(node.get("type"), str):
            node["type"] = [node["type"], "null"]
        elif "type" not in node:
            node = {"anyOf": [{"type": "null"}, node]}
    return node


@cache
def _root() -> dict:
    return {"components": {"schemas": _nullable_to_json_schema(schemas())}}


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator of the component schema `name`, its `$ref`s resolved inside the document."""
    return Draft202012Validator({**_root(), "$ref": f"#/components/schemas/{name}"})


def _resolve(node: dict) -> dict:
    while "$ref" in node:
        node = schemas()[node["$ref"].rsplit("/", 1)[-1]]
    return node


def _properties(node: dict) -> dict:
    node = _resolve(node)
    found = {}
    for part in node.get("allOf", ()):
        found.update(_properties(part))
    found.update(node.get("properties") or {})
    return found


def _rule_kind(ref: str, props: dict) -> str | None:
    """The kind of a rule object, from its attributes: None when `props` is a group of fields, not a rule."""
    names = set(props)
    if not names or not names <= RULE_ATTRIBUTES:
        return None
    if "canAdd" in names:
        return "items"
    if ref.endswith("/ArrayRules"):
        return "array"
    if "options" in names:
        return "string"
    if "min" in names:
        kind = _resolve(props["min"]).get("type")
        return {"integer": "integer", "number": "number"}.get(kind, "quantity")
    return "boolean"


@cache
def rule_fields(policy_type: str) -> dict[str, dict]:
    """`{"security.runAsUid": {"kind": "integer", "attributes": {...}}, …}` for the policy type's rules."""
    root = _properties(schemas()[f"{TYPES[policy_type]}PolicyDefaultsAndRulesV2"])["rules"]
    table: dict[str, dict] = {}

    def walk(node: dict, path: str) -> None:
        for name, child in _properties(node).items():
            child_path = f"{path}.{name}" if path else name
            props = _properties(child)
            kind = _rule_kind(child.get("$ref", ""), props)
            if kind is None:
                walk(child, child_path)
            else:
                table[child_path] = {"kind": kind, "attributes": sorted(set(props) - {"sourceOfRule"})}

    walk(root, "")
    table.update({path: dict(rule) for path, rule in ADDED_RULES.get(policy_type, {}).items()})
    lender, prefixes = BORROWED_RULES.get(policy_type, (None, ()))
    if lender is not None:
        table.update({path: rule for path, rule in rule_fields(lender).items()
                      if any(path == p or path.startswith(f"{p}.") for p in prefixes)})
    return table


@cache
def itemized_fields(policy_type: str) -> frozenset[str]:
    """Fields whose defaults and rules come as `{"instances", "attributes"}` (`storage.hostPath`, `labels`…)."""
    return frozenset(path.rsplit(".", 1)[0] for path, rule in rule_fields(policy_type).items()
                     if rule["kind"] == "items")
