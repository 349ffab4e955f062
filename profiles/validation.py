"""Save-time rules of template versions and profiles, beyond the shape the serializers check. Every problem
is collected and raised at once as a ValidationError of dotted fields (`variables[1].default`,
`specTemplate.compute.gpuPortionRequest`, `inputs.gpus`). A version or profile that passes renders, with its
defaults (or a sample of each type where there is none), to a spec that the workload spec check accepts.

profiles defines templates and profiles; it does not know workload specs. The app that runs workloads registers
its check (`register_spec_check`, in its AppConfig.ready), so that imports point one way: workloads -> profiles."""

import re
from collections.abc import Callable

from django.core.exceptions import ImproperlyConfigured, ValidationError
from rest_framework.exceptions import ValidationError as DRFValidationError

from profiles.compose import GENERATED, OUTPUT_CONTEXT, SPEC_CONTEXT, blame, compose
from profiles.inputs import effective_inputs, preview_values, secret_names
from profiles.rendering import PLACEHOLDER, RenderError, join, misplaced_secrets, names_in, placeholders
from profiles.variables import BOUNDED, NAME_RE, PATTERNED, InputError, check, coerce, measure
from studio.clusters.names import is_label_value, is_qualified_name

ENV_NAME_RE = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
RESERVED_PREFIXES = ("paas-studio/", "app.kubernetes.io/managed-by")
PREVIEW_CONTEXT = {"workload.name": "preview", "project.name": "preview"}
_spec_check: list[Callable[[str, dict], dict]] = []


def register_spec_check(check: Callable[[str, dict], dict]) -> None:
    """`check(kind, spec)` answers the cleaned spec or raises DRF's ValidationError (workloads.specs.validate_spec)."""
    _spec_check[:] = [check]


_spec_serializer: list[Callable[[str], type | None]] = []


def register_spec_serializer(provider: Callable[[str], type | None]) -> None:
    """`provider(kind)` answers the serializer class of a workload spec of that kind (workloads.specs), from which
    the version editor generates its typed spec inputs (profiles.spec_editor)."""
    _spec_serializer[:] = [provider]


def spec_serializer(kind: str) -> type | None:
    return _spec_serializer[0](kind) if _spec_serializer else None


def validate_rendered_spec(kind: str, spec: dict) -> dict:
    if not _spec_check:
        raise ImproperlyConfigured("No workload spec check is registered (workloads.apps registers it).")
    return _spec_check[0](kind, spec)


def _raise(errors: dict) -> None:
    if errors:
        raise ValidationError({field: messages for field, messages in errors.items()})


def _typed(variable: dict, value, field: str, errors: dict):
    try:
        value = coerce(variable["type"], value, options=variable.get("options"))
        check(variable, value)
    except InputError as exc:
        errors[field] = str(exc)
        return None
    return value


def clean_variables(variables: list[dict]) -> tuple[list[dict], dict]:
    """Variables with typed bounds and defaults, and the errors found."""
    cleaned, errors, seen = [], {}, set()
    for index, raw in enumerate(variables):
        at = f"variables[{index}]"
        var = {"name": raw.get("name"), "type": raw.get("type"), "required": bool(raw.get("required")),
               "default": raw.get("default"), "description": raw.get("description") or "",
               "min": raw.get("min"), "max": raw.get("max"), "pattern": raw.get("pattern") or None,
               "options": raw.get("options")}
        if not isinstance(var["name"], str) or not NAME_RE.fullmatch(var["name"]):
            errors[f"{at}.name"] = "Must be a letter or '_' then letters, digits or '_' (at most 63)."
        elif var["name"] in seen:
            errors[f"{at}.name"] = "Another variable has this name."
        seen.add(var["name"])
        kind = var["type"]
        if kind == "enum" and not var["options"]:
            errors[f"{at}.options"] = "An enum needs options."
        elif kind == "enum" and len(set(var["options"])) != len(var["options"]):
            errors[f"{at}.options"] = "Options must be unique."
        elif kind != "enum" and var["options"] is not None:
            errors[f"{at}.options"] = "Only an enum has options."
        for bound in ("min", "max"):
            if var[bound] is None:
                continue
            if kind not in BOUNDED:
                errors[f"{at}.{bound}"] = "Only integer, number and quantity variables have bounds."
                continue
            try:
                var[bound] = coerce(kind, var[bound])
            except InputError as exc:
                errors[f"{at}.{bound}"] = str(exc)
        if f"{at}.min" not in errors and f"{at}.max" not in errors and var["min"] is not None \
                and var["max"] is not None and measure(kind, var["min"]) > measure(kind, var["max"]):
            errors[f"{at}.max"] = "Must be at least min."
        if var["pattern"] is not None:
            if kind not in PATTERNED:
                errors[f"{at}.pattern"] = "Only string and secret variables have a pattern."
            else:
                try:
                    re.compile(var["pattern"])
                except re.error as exc:
                    errors[f"{at}.pattern"] = f"Not a regular expression: {exc}."
        if var["default"] is not None:
            if kind == "secret":
                errors[f"{at}.default"] = "A secret variable has no stored default; the user gives it at launch."
            elif not any(key.startswith(at + ".") for key in errors):
                var["default"] = _typed(var, var["default"], f"{at}.default", errors)
        cleaned.append(var)
    return cleaned, errors


def clean_outputs(outputs: list[dict], variables: list[dict]) -> tuple[list[dict], dict]:
    allowed = {*OUTPUT_CONTEXT, *GENERATED, *(f"inputs.{v['name']}" for v in variables)}
    secret = {*GENERATED, *(f"inputs.{name}" for name in secret_names(variables))}
    cleaned, errors, seen = [], {}, set()
    for index, raw in enumerate(outputs):
        at = f"outputs[{index}]"
        out = {"name": raw.get("name"), "label": raw.get("label") or raw.get("name"),
               "expression": raw.get("expression") or "", "sensitive": bool(raw.get("sensitive"))}
        if not isinstance(out["name"], str) or not NAME_RE.fullmatch(out["name"]):
            errors[f"{at}.name"] = "Must be a letter or '_' then letters, digits or '_' (at most 63)."
        elif out["name"] in seen:
            errors[f"{at}.name"] = "Another output has this name."
        seen.add(out["name"])
        used = names_in(out["expression"])
        unknown = [name for name in used if name not in allowed]
        if unknown:
            errors[f"{at}.expression"] = (f"Unknown name {unknown[0]}; use {', '.join(OUTPUT_CONTEXT)}, "
                                          "generated.token or inputs.<variable>.")
        elif not used:
            errors[f"{at}.expression"] = "Must use at least one {{ name }}; a constant belongs in the readme."
        if any(name in secret for name in used) and not out["sensitive"]:
            errors[f"{at}.sensitive"] = "An output that shows a secret or generated value must be sensitive."
        cleaned.append(out)
    return cleaned, errors


def _render_check(kind, spec_template, inputs, *, blame_inputs: set[str], prefix: str,
                  labels=None, annotations=None, extra_config=None) -> dict:
    secrets = {*secret_names(inputs), *GENERATED}
    try:
        spec, sources = compose(
            spec_template, values=preview_values(inputs), context=PREVIEW_CONTEXT, secrets=secrets,
            secret_ref=lambda name: {"name": "preview", "key": name}, labels=labels or {},
            annotations=annotations or {}, extra_config=extra_config or {},
        )
    except RenderError as exc:
        return {join(prefix, exc.path): [str(exc)]}
    try:
        validate_rendered_spec(kind, spec)
    except DRFValidationError as exc:
        return blame(exc.detail, sources, inputs=blame_inputs, prefix=prefix)
    return {}


def version_problems(*, kind: str, spec_template, variables: list[dict], outputs: list[dict]) -> tuple[list, list, dict]:
    """(variables, outputs) cleaned and {path: message} of every problem of the version, all at once: a spec
    value with an unknown or misplaced placeholder is also checked against the kind's spec (without its
    placeholders), so a wrong type elsewhere is named in the same answer, not after the placeholder is fixed."""
    variables, errors = clean_variables(variables)
    outputs, output_errors = clean_outputs(outputs, variables)
    errors.update(output_errors)
    if not isinstance(spec_template, dict):
        errors["specTemplate"] = "Must be a JSON object (a workload spec)."
        return variables, outputs, errors
    known = {*(v["name"] for v in variables), *SPEC_CONTEXT, *GENERATED}
    blamed: set[str] = set()
    for name, paths in placeholders(spec_template).items():
        if name not in known:
            for path in paths:
                blamed.add(path)
                errors[join("specTemplate", path)] = (
                    f"Unknown placeholder {{{{ {name} }}}}: declare a variable {name} or use "
                    f"{', '.join((*SPEC_CONTEXT, *GENERATED))}.")
    for path, message in misplaced_secrets(spec_template, {*secret_names(variables), *GENERATED}).items():
        blamed.add(path)
        errors[join("specTemplate", path)] = message
    inputs = effective_inputs(variables, [])
    checked = _unplaceheld(spec_template, blamed)
    for path, messages in _render_check(kind, checked, inputs, blame_inputs=set(), prefix="specTemplate").items():
        errors.setdefault(path, messages)  # a blamed value's own problem is the placeholder, said already
    return variables, outputs, errors


def _unplaceheld(value, blamed: set[str], path: str = ""):
    """A copy of a spec template whose strings at `blamed` paths have their placeholders taken out."""
    if isinstance(value, str):
        return PLACEHOLDER.sub("", value) if path in blamed else value
    if isinstance(value, dict):
        return {key: _unplaceheld(item, blamed, join(path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_unplaceheld(item, blamed, join(path, index)) for index, item in enumerate(value)]
    return value


def check_version(*, kind: str, spec_template, variables: list[dict], outputs: list[dict]) -> tuple[list, list]:
    """(variables, outputs) cleaned, or ValidationError listing every problem of the version."""
    variables, outputs, errors = version_problems(kind=kind, spec_template=spec_template, variables=variables,
                                                  outputs=outputs)
    _raise(errors)
    return variables, outputs


def _check_metadata(labels: dict, annotations: dict, extra_config: dict, errors: dict) -> None:
    for field, values in (("labels", labels), ("annotations", annotations)):
        for key, value in values.items():
            if not is_qualified_name(key):
                errors[f"{field}.{key}"] = "The key must be a Kubernetes qualified name such as 'team' or 'example.com/team'."
            elif key.startswith(RESERVED_PREFIXES):
                errors[f"{field}.{key}"] = "Keys under paas-studio/ and app.kubernetes.io/managed-by are set by the studio."
            elif field == "labels" and not is_label_value(value):
                errors[f"{field}.{key}"] = ("A label value is at most 63 letters, digits, '-', '_' or '.', "
                                            "starting and ending with a letter or digit.")
    for key in extra_config:
        if not ENV_NAME_RE.fullmatch(key):
            errors[f"extraConfig.{key}"] = "The key must be an environment variable name (letters, digits, '_', '-', '.')."


def _settings_by_name(items: list[dict], settings: list[dict], *, field: str, noun: str, errors: dict) -> dict:
    """The profile's settings by the template item they name; unknown and repeated names are errors."""
    names = [item["name"] for item in items]
    given: dict[str, dict] = {}
    for index, setting in enumerate(settings):
        name = setting.get("name")
        if name not in names:
            errors[f"{field}[{index}].name"] = (f"No {noun} {name!r} in the template version; it has: "
                                                f"{', '.join(names) or 'none'}.")
        elif name in given:
            errors[f"{field}[{index}].name"] = f"Another {field[:-1]} setting has this name."
        else:
            given[name] = setting
    return given


def _clean_settings(variables: list[dict], settings: list[dict], errors: dict) -> list[dict]:
    given = _settings_by_name(variables, settings, field="inputs", noun="variable", errors=errors)
    cleaned = []
    for variable in variables:
        name = variable["name"]
        raw = given.get(name, {})
        at = f"inputs.{name}"
        setting = {"name": name, "default": raw.get("default"), "override": raw.get("override") or "allowed",
                   "allowedValues": raw.get("allowedValues"), "required": bool(raw.get("required")),
                   "visible": raw.get("visible", True)}
        secret = variable["type"] == "secret"
        if setting["default"] is not None:
            if secret:
                errors[f"{at}.default"] = "A secret input has no stored default; the user gives it at launch."
            else:
                setting["default"] = _typed(variable, setting["default"], f"{at}.default", errors)
        if setting["override"] == "restricted":
            if secret:
                errors[f"{at}.override"] = "A secret input cannot be restricted to listed values."
            elif not setting["allowedValues"]:
                errors[f"{at}.allowedValues"] = "A restricted input needs allowedValues."
            else:
                setting["allowedValues"] = [_typed(variable, value, f"{at}.allowedValues[{i}]", errors)
                                            for i, value in enumerate(setting["allowedValues"])]
        elif setting["allowedValues"] is not None:
            errors[f"{at}.allowedValues"] = "Only a restricted input has allowedValues."
        default = variable["default"] if setting["default"] is None else setting["default"]
        if setting["override"] == "restricted" and default is not None and setting["allowedValues"] \
                and f"{at}.allowedValues" not in errors and default not in setting["allowedValues"]:
            errors[f"{at}.default"] = "The default must be one of allowedValues."
        required = variable["required"] or setting["required"]
        fixed = setting["override"] == "not-allowed" or not setting["visible"]
        if required and fixed and default in (None, ""):
            errors[f"{at}.default"] = "A required input that users cannot set (not-allowed or hidden) needs a default."
        cleaned.append(setting)
    return cleaned


def _clean_output_settings(outputs: list[dict], settings: list[dict], errors: dict) -> list[dict]:
    given = _settings_by_name(outputs, settings, field="outputs", noun="output", errors=errors)
    return [{"name": o["name"], "label": given.get(o["name"], {}).get("label") or o["label"],
             "visible": given.get(o["name"], {}).get("visible", True),
             # a profile may hide a template's output more, never less
             "sensitive": bool(o["sensitive"] or given.get(o["name"], {}).get("sensitive"))} for o in outputs]


def check_profile(*, version, labels: dict, annotations: dict, extra_config: dict, inputs: list[dict],
                  outputs: list[dict]) -> tuple[list[dict], list[dict]]:
    """(input settings, output settings), one per template variable and output in the template's order, or
    ValidationError listing every problem; the defaults must render to a valid spec."""
    errors: dict = {}
    _check_metadata(labels, annotations, extra_config, errors)
    input_settings = _clean_settings(version.variables, inputs, errors)
    output_settings = _clean_output_settings(version.outputs, outputs, errors)
    _raise(errors)
    merged = effective_inputs(version.variables, input_settings)
    profile_defaults = {s["name"] for s in input_settings if s["default"] is not None}
    _raise(_render_check(version.kind, version.spec_template, merged, blame_inputs=profile_defaults,
                         prefix="specTemplate", labels=labels, annotations=annotations, extra_config=extra_config))
    return input_settings, output_settings
