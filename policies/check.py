"""A workload spec held to an effective policy: its defaults filled in where the spec is silent, then every
rule checked. Pure: `enforce(policy_type, effective, spec)` -> (spec with defaults, problems), where each
problem is (field path relative to the spec, message naming the rule and the policy it came from):
`("security.runAsUid", "must be at least 1 (policy: tenant)")`.

The spec is Run:ai's workload spec (workloads/api/seed_examples.py): flat fields as in the policy, itemized fields
(`storage.hostPath`, `environmentVariables`…) as lists, where the policy has `{"instances", "attributes"}`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation

from policies.merge import Effective, get_path, item_key
from policies.schema import itemized_fields, rule_fields
from studio.clusters.quantities import parse_quantity


def _is_excluded(item) -> bool:
    return isinstance(item, Mapping) and item.get("exclude") is True


def apply_defaults(defaults: Mapping, spec: Mapping, *, itemized: frozenset[str], prefix: str = "") -> dict:
    """`spec` with each default the spec leaves out; itemized defaults add their instances (the spec's own
    item of the same name wins) and fill their `attributes` into every item."""
    result = copy.deepcopy(dict(spec))
    for key, default in defaults.items():
        path = f"{prefix}.{key}" if prefix else key
        if default is None:
            continue
        if path in itemized and isinstance(default, Mapping):
            items = [dict(item) if isinstance(item, Mapping) else item for item in result.get(key) or []]
            names = {item_key(item) for item in items}
            items += [copy.deepcopy(item) for item in default.get("instances") or [] if item_key(item) not in names]
            for item in items:
                for attribute, value in (default.get("attributes") or {}).items():
                    if isinstance(item, dict) and item.get(attribute) is None and value is not None:
                        item[attribute] = copy.deepcopy(value)
            if items:
                result[key] = items
        elif isinstance(default, Mapping):
            current = result.get(key)
            if current is None or isinstance(current, Mapping):
                nested = apply_defaults(default, current or {}, itemized=itemized, prefix=path)
                if nested:
                    result[key] = nested
        elif result.get(key) is None:
            result[key] = copy.deepcopy(default)
    return result


def _number(kind: str, value):
    if kind == "quantity":
        return parse_quantity(str(value))
    return Decimal(str(value))


def _shown(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def check_value(kind: str, rule: Mapping, value, *, default=None) -> list[tuple[str, str]]:
    """(attribute, message) for each rule attribute `value` breaks."""
    missing = value is None or value == "" or value == []
    if missing:
        return [("required", "is required")] if rule.get("required") else []
    problems = []
    if rule.get("canEdit") is False and value != default:
        problems.append(("canEdit", f"cannot be changed from its default ({_shown(default)})" if default is not None
                         else "cannot be set"))
    if kind in ("integer", "number", "quantity"):
        try:
            number = _number(kind, value)
        except (InvalidOperation, ValueError, TypeError):
            return problems
        if rule.get("min") is not None and number < _number(kind, rule["min"]):
            problems.append(("min", f"must be at least {_shown(rule['min'])}"))
        if rule.get("max") is not None and number > _number(kind, rule["max"]):
            problems.append(("max", f"must be at most {_shown(rule['max'])}"))
        step = rule.get("step")
        if step and kind != "quantity" and (number - _number(kind, rule.get("min") or 0)) % _number(kind, step):
            problems.append(("step", f"must be a multiple of {_shown(step)} from {_shown(rule.get('min') or 0)}"))
    options = rule.get("options")
    if options is not None:
        allowed = [option["value"] for option in options]
        values = value if isinstance(value, list) else [value]
        refused = [str(v) for v in values if v not in allowed]
        if refused:
            listed = ", ".join(map(str, allowed)) or "none"
            problems.append(("options", f"{', '.join(refused)} {'is' if len(refused) == 1 else 'are'} not allowed: "
                                        f"must be one of {listed}"))
    return problems


def _items_problems(path: str, rule: Mapping, items: list, default_items: list) -> list[tuple[str, str]]:
    present = [item for item in items if not _is_excluded(item)]
    problems = []
    if rule.get("canAdd") is False:
        known = {item_key(item) for item in default_items}
        added = [item_key(item) for item in present if item_key(item) not in known]
        if added:
            problems.append(("canAdd", "no items may be added" + (f" (policy defaults: {', '.join(sorted(known))})"
                                                                    if known else "")))
    names = {item_key(item) for item in present}
    removed = [name for name in rule.get("locked") or () if name not in names
               and name in {item_key(item) for item in default_items}]
    if removed:
        problems.append(("locked", f"{', '.join(removed)} cannot be removed"))
    return problems


def _attribute_of(base: str, attribute: str, item: Mapping) -> tuple[str, object, str]:
    """(the item's field a rule on `attribute` is about, its value, words that set the context of a refusal).
    Run:ai's `ports.customExternalPort` is no field of a port but a fact about one: the submitter chose the port's
    number on every node (a NodePort's `external`; other types' `external` is only the Service's port)."""
    if (base, attribute) == ("ports", "customExternalPort"):
        chosen = item.get("serviceType") == "NodePort" and item.get("external") is not None
        return "external", (True if chosen else None), "a NodePort number of your choosing "
    return attribute, item.get(attribute), ""


def enforce(policy_type: str, policy: Effective, spec: Mapping) -> tuple[dict, list[tuple[str, str]]]:
    """(spec with the policy's defaults, [(field, "message (policy: <scope>)")]) — empty when it complies."""
    result, problems = violations(policy_type, policy, spec)
    return result, [(field, message) for field, _rule, message in problems]


def violations(policy_type: str, policy: Effective, spec: Mapping) -> tuple[dict, list[tuple[str, str, str]]]:
    """`enforce` with the rule attribute each problem breaks: [(field, rule, message)] (a launch preview
    lists them)."""
    table = rule_fields(policy_type)
    result = apply_defaults(policy.defaults, spec, itemized=itemized_fields(policy_type))
    problems: list[tuple[str, str, str]] = []

    def blame(field_path: str, leaf: str, found: list[tuple[str, str]]) -> None:
        for attribute, message in found:
            layer = policy.origins[leaf].get(attribute)
            problems.append((field_path, attribute, f"{message} (policy: {layer.label})" if layer else message))

    for leaf, rule in policy.rules.items():
        kind = table[leaf]["kind"]
        if kind == "items":
            base = leaf.rsplit(".", 1)[0]
            items = get_path(result, base) or []
            defaults = (get_path(policy.defaults, base) or {}).get("instances") or []
            blame(base, leaf, _items_problems(base, rule, items, defaults))
        elif ".attributes." in leaf:
            base, attribute = leaf.split(".attributes.")
            attribute_default = ((get_path(policy.defaults, base) or {}).get("attributes") or {}).get(attribute)
            for index, item in enumerate(get_path(result, base) or []):
                if isinstance(item, Mapping) and not _is_excluded(item):
                    field, value, context = _attribute_of(base, attribute, item)
                    blame(f"{base}[{index}].{field}", leaf,
                          [(a, context + m) for a, m in check_value(kind, rule, value, default=attribute_default)])
        else:
            blame(leaf, leaf, check_value(kind, rule, get_path(result, leaf), default=get_path(policy.defaults, leaf)))
    return result, problems
