"""A profile's input settings over its template's variables: what the end user is offered, and the values a
launch resolves. Pure.

Resolution, per variable: the profile's default over the template's; a user value only where the setting
allows it (`allowed`, or `restricted` to `allowedValues`; never for `not-allowed` or hidden inputs), coerced
to the variable's type and checked against its constraints; required means a value must come out."""

from collections.abc import Mapping

from profiles.variables import InputError, check, coerce, sample

OVERRIDES = ("allowed", "not-allowed", "restricted")
CONSTRAINTS = ("min", "max", "pattern", "options")


def effective_inputs(variables: list[dict], settings: list[dict]) -> list[dict]:
    """One entry per variable, in the template's order, with the profile's setting applied."""
    by_name = {setting["name"]: setting for setting in settings}
    return [_merged(variable, by_name.get(variable["name"], {})) for variable in variables]


def _merged(variable: dict, setting: dict) -> dict:
    default = setting.get("default")
    return {
        "name": variable["name"],
        "type": variable["type"],
        "description": variable.get("description") or "",
        "default": variable.get("default") if default is None else default,
        "override": setting.get("override") or "allowed",
        "allowedValues": setting.get("allowedValues"),
        "required": bool(variable.get("required") or setting.get("required")),
        "visible": setting.get("visible", True),
        # CONSTRAINTS, written out: a catalog page merges the inputs of each of its 100 entries
        "min": variable.get("min"), "max": variable.get("max"), "pattern": variable.get("pattern"),
        "options": variable.get("options"),
    }


class EffectiveInputs:
    """`effective_inputs` for the many profiles of a page, which share a few template versions: a variable that
    the profile leaves unset is merged once per version (its entry copied, not merged again). Keyed by the
    variables' list (the same object for every profile of a prefetched version), which the key keeps alive."""

    def __init__(self):
        self._unset: dict[int, tuple[list, list[dict]]] = {}

    def __call__(self, variables: list[dict], settings: list[dict]) -> list[dict]:
        kept = self._unset.get(id(variables))
        if kept is None or kept[0] is not variables:
            kept = self._unset[id(variables)] = (variables, [_merged(variable, {}) for variable in variables])
        by_name = {setting["name"]: setting for setting in settings}
        return [dict(unset) if variable["name"] not in by_name else _set_over(unset, by_name[variable["name"]])
                for variable, unset in zip(variables, kept[1], strict=True)]


def _set_over(unset: dict, setting: dict) -> dict:
    """`_merged(variable, setting)` from `_merged(variable, {})`: only what a setting changes is read again."""
    merged = dict(unset)
    default = setting.get("default")
    if default is not None:
        merged["default"] = default
    merged["override"] = setting.get("override") or "allowed"
    merged["allowedValues"] = setting.get("allowedValues")
    if setting.get("required"):
        merged["required"] = True
    merged["visible"] = setting.get("visible", True)
    return merged


def _given(value) -> bool:
    return value is not None and value != ""


def resolve(inputs: list[dict], given: Mapping) -> tuple[dict, dict[str, str]]:
    """(values by name, errors by name) for a launch; every variable gets a value, None when left empty."""
    known = [item["name"] for item in inputs]
    errors = {name: f"Unknown input; this profile takes: {', '.join(known) or 'none'}."
              for name in given if name not in known}
    values = {}
    for item in inputs:
        name, raw = item["name"], given.get(item["name"])
        if _given(raw):
            if item["override"] == "not-allowed" or not item["visible"]:
                errors[name] = "This input is set by the profile and cannot be overridden."
                continue
            try:
                value = coerce(item["type"], raw, options=item.get("options"))
                check(item, value)
            except InputError as exc:
                errors[name] = str(exc)
                continue
            allowed = item.get("allowedValues") or []
            if item["override"] == "restricted" and value not in allowed:
                errors[name] = f"Must be one of the allowed values: {', '.join(map(str, allowed))}."
                continue
        elif name in given and item["required"]:
            # Sent empty on purpose: a required input is not quietly given its default instead.
            errors[name] = "This input is required; an empty value is not accepted."
            continue
        else:
            value = item["default"]
        if not _given(value) and item["required"]:
            errors[name] = "This input is required."
            continue
        values[name] = value
    return values, errors


def preview_values(inputs: list[dict]) -> dict:
    """Values to render a template with at save time: defaults, else a sample of the type."""
    return {item["name"]: item["default"] if _given(item["default"]) else sample(item) for item in inputs}


def secret_names(variables: list[dict]) -> set[str]:
    return {variable["name"] for variable in variables if variable.get("type") == "secret"}
