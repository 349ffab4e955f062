"""From a template version, a profile and resolved values to a workload spec. Pure; shared by the save-time
checks (which render with defaults and samples) and the launch (which renders with the user's values).

Names a spec template may use besides its variables: `workload.name`, `project.name` (known before the
workload exists) and `generated.token` (a random value made per launch, a secret). Output expressions may use
`workload.url`, `workload.serviceAddress`, `workload.name`, `project.name`, `inputs.<variable>` and
`generated.token`."""

from profiles.rendering import bind_secrets, join, render
from studio.errors import flatten_errors

SPEC_CONTEXT = ("workload.name", "project.name")
GENERATED = ("generated.token",)
OUTPUT_CONTEXT = ("workload.url", "workload.serviceAddress", "workload.name", "project.name")
MASK = "***"  # what a secret reads as wherever it is shown


def _merge(entries, additions: dict, make) -> list:
    """Run:ai `[{name, ...}]` entries with `additions` applied: an entry of the same name is replaced in
    place (so rendered paths keep their indices), others are appended."""
    merged = list(entries) if isinstance(entries, list) else []
    index = {item.get("name"): i for i, item in enumerate(merged) if isinstance(item, dict)}
    for name, value in additions.items():
        if name in index:
            merged[index[name]] = make(name, value)
        else:
            merged.append(make(name, value))
    return merged


def apply_profile(spec: dict, *, labels: dict, annotations: dict, extra_config: dict) -> dict:
    """The profile's labels and annotations as spec entries `{name, value}`, its extra configuration as
    environment variables; the profile's value wins over the template's entry of the same name."""
    spec = dict(spec)
    pairs = (("labels", labels), ("annotations", annotations), ("environmentVariables", extra_config))
    for key, additions in pairs:
        if additions:
            spec[key] = _merge(spec.get(key), additions, lambda name, value: {"name": name, "value": value})
    return spec


def compose(spec_template: dict, *, values: dict, context: dict, secrets: set[str], secret_ref,
            labels: dict, annotations: dict, extra_config: dict) -> tuple[dict, dict[str, set[str]]]:
    """(spec, sources): the rendered spec and, per rendered path, the names that fed it. Raises RenderError."""
    sources: dict[str, set[str]] = {}
    bound = bind_secrets(spec_template, secrets, secret_ref)
    spec = render(bound, {**values, **context}, sources=sources)
    return apply_profile(spec, labels=labels, annotations=annotations, extra_config=extra_config), sources


def blame(detail, sources: dict[str, set[str]], *, inputs: set[str], prefix: str) -> dict[str, list[str]]:
    """Errors of `workloads.specs.validate_spec` as request fields: an error at a path rendered from one of
    `inputs` is that input's (`inputs.<name>`), any other stays at `<prefix>.<path>`."""
    errors: dict[str, list[str]] = {}
    for error in flatten_errors(detail):
        blamed = sorted(sources.get(error["field"], set()) & inputs)
        where = f"spec.{error['field']}" if error["field"] else "spec"
        for name in blamed:
            errors.setdefault(f"inputs.{name}", []).append(f"{error['message']} (at {where})")
        if not blamed:
            errors.setdefault(join(prefix, error["field"]) if error["field"] else prefix, []).append(error["message"])
    return errors
