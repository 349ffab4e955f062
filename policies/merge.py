"""The effective policy of an org unit: its layers merged from the widest down. Pure: dicts in, dicts out.

Layers, widest first: the built-in secure default (`fallback.py`), then the stored policies of the tenant,
the department and the project. How two layers combine (our reading of Run:ai's "restrictions and defaults
per org unit"; see docs/policies.md):

* **Rules tighten.** Per field and per attribute, a narrower layer may only make a wider one stricter:
  `min` the larger, `max` the smaller, `options` the values both allow, `required` true if either says so,
  `canEdit` and `canAdd` false if either says so, `locked` the union; `step` stays the wider one's.
* **Unless the wider allows**: the built-in default is the one layer a stored policy may loosen. Any
  attribute a platform admin sets at some scope replaces the built-in one there and below (e.g. `min: 0` on
  `security.runAsUid` for one project, or `canAdd: true` on `storage.hostPath.instances`).
* **Defaults**: the narrower layer's default wins (it is closer to the workload), except where a wider stored
  layer made the field not editable (`canEdit: false`): then the wider default stands.

Each effective rule keeps where each of its attributes came from (`origins`), for the messages of refusals
("must be at least 1 (policy: tenant)") and for `sourceOfRule` in the API.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from policies.schema import itemized_fields, rule_fields
from studio.clusters.quantities import parse_quantity


@dataclass(frozen=True)
class Layer:
    """One org unit's policy: `source` is Run:ai's SourceOfRule ({"scope", "projectId"?, …, "isFallback"?})
    and `label` how a refusal names it ("tenant", "department physics", "project team-a")."""

    source: dict
    label: str
    defaults: dict = field(default_factory=dict)
    rules: dict = field(default_factory=dict)

    @property
    def is_fallback(self) -> bool:
        return bool(self.source.get("isFallback"))


@dataclass
class Effective:
    defaults: dict
    rules: dict[str, dict]  # leaf path -> {attribute: value}
    origins: dict[str, dict[str, Layer]]  # leaf path -> {attribute: the layer it came from}

    def rules_tree(self) -> dict:
        """The rules as Run:ai nests them, with the `sourceOfRule` of each (the narrowest contributor)."""
        tree: dict = {}
        for path, rule in self.rules.items():
            layers = list(self.origins[path].values())
            narrowest = layers[-1] if layers else None
            node = dict(rule)
            if narrowest is not None:
                node["sourceOfRule"] = narrowest.source
            set_path(tree, path, node)
        return tree


def leaves(rules: Mapping, policy_type: str, prefix: str = "") -> Iterator[tuple[str, dict]]:
    """(leaf path, rule) for every rule object in a nested rules tree (unknown keys are skipped here: the
    service refuses them before anything is stored)."""
    table = rule_fields(policy_type)
    for key, value in (rules or {}).items():
        path = f"{prefix}.{key}" if prefix else key
        if path in table and isinstance(value, Mapping):
            yield path, {k: v for k, v in value.items() if k != "sourceOfRule" and v is not None}
        elif isinstance(value, Mapping):
            yield from leaves(value, policy_type, path)


def get_path(tree: Mapping | None, path: str):
    node = tree
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def set_path(tree: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    node = tree
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value


def _number(kind: str, value):
    return parse_quantity(str(value)) if kind == "quantity" else Decimal(str(value))


def tighten(kind: str, attribute: str, wider, narrower):
    """The stricter of two values of one rule attribute."""
    if attribute == "min":
        return max(wider, narrower, key=lambda v: _number(kind, v))
    if attribute == "max":
        return min(wider, narrower, key=lambda v: _number(kind, v))
    if attribute == "required":
        return bool(wider) or bool(narrower)
    if attribute in ("canEdit", "canAdd"):
        return bool(wider) and bool(narrower)
    if attribute == "locked":
        return list(dict.fromkeys([*wider, *narrower]))
    if attribute == "options":
        allowed = {option["value"] for option in narrower}
        return [option for option in wider if option["value"] in allowed]
    return wider  # step: the wider one's grid


def item_key(item) -> str:
    """How instances of an itemized field are told apart (`locked` names them): their `name`."""
    if isinstance(item, Mapping) and item.get("name") is not None:
        return str(item["name"])
    return repr(sorted(item.items())) if isinstance(item, Mapping) else repr(item)


def merge_defaults(wider: dict, narrower: dict, *, itemized: frozenset[str], fixed: set[str],
                   prefix: str = "") -> dict:
    """`narrower` over `wider`, except the fields in `fixed` (made not editable by a wider stored layer)."""
    merged = copy.deepcopy(wider)
    for key, value in (narrower or {}).items():
        path = f"{prefix}.{key}" if prefix else key
        if path in fixed and path in merged:
            continue
        if path in itemized and isinstance(value, Mapping):
            current = merged.setdefault(key, {})
            if "instances" in value:
                by_key = {item_key(item): item for item in current.get("instances") or []}
                by_key.update({item_key(item): copy.deepcopy(item) for item in value["instances"] or []})
                current["instances"] = list(by_key.values())
            if "attributes" in value:
                current["attributes"] = {**(current.get("attributes") or {}), **copy.deepcopy(value["attributes"])}
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_defaults(merged[key], value, itemized=itemized, fixed=fixed, prefix=path)
        elif value is not None:
            merged[key] = copy.deepcopy(value)
    return merged


def effective(policy_type: str, layers: list[Layer]) -> Effective:
    """Merge `layers` (widest first) into the effective defaults and rules."""
    table = rule_fields(policy_type)
    itemized = itemized_fields(policy_type)
    rules: dict[str, dict] = {}
    origins: dict[str, dict[str, Layer]] = {}
    defaults: dict = {}
    for layer in layers:
        fixed = {path for path, rule in rules.items()
                 if rule.get("canEdit") is False and not origins[path]["canEdit"].is_fallback}
        defaults = merge_defaults(defaults, layer.defaults, itemized=itemized, fixed=fixed)
        for path, rule in leaves(layer.rules, policy_type):
            kind = table[path]["kind"]
            current = rules.setdefault(path, {})
            came_from = origins.setdefault(path, {})
            for attribute, value in rule.items():
                if attribute not in current or came_from[attribute].is_fallback:
                    current[attribute], came_from[attribute] = copy.deepcopy(value), layer
                    continue
                stricter = tighten(kind, attribute, current[attribute], value)
                if stricter != current[attribute]:  # the narrower layer tightened it: it is the source now
                    current[attribute], came_from[attribute] = stricter, layer
    return Effective(defaults=defaults, rules=rules, origins=origins)
