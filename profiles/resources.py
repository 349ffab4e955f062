"""What a catalog entry asks of the cluster by default, for its card: GPUs, CPU and memory of the template's
`compute`, a `{{ variable }}` read from the profile's default for it (a pure function of the version and profile)."""

import re

from profiles.inputs import effective_inputs

_PLACEHOLDER = re.compile(r"^\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")
SHOWN = (("gpuDevicesRequest", "GPU"), ("gpuPortionRequest", "of a GPU"), ("cpuCoreRequest", "CPU"),
         ("cpuMemoryRequest", "memory"))


def default_resources(spec_template: dict, variables: list[dict], settings: list[dict]) -> list[str]:
    """["1 GPU", "4 CPU", "8Gi memory"]: each compute request the entry makes with its defaults."""
    compute = (spec_template or {}).get("compute") or {}
    defaults = {i["name"]: i["default"] for i in effective_inputs(variables or [], settings or [])}
    shown = []
    for key, unit in SHOWN:
        value = compute.get(key)
        match = _PLACEHOLDER.match(value) if isinstance(value, str) else None
        if match:
            value = defaults.get(match.group(1))
        if value in (None, "", 0):
            continue
        if key == "gpuPortionRequest":
            shown.append(f"{float(value):.0%} {unit}")
        elif key == "gpuDevicesRequest":
            shown.append(f"{value} GPU{'s' if str(value) != '1' else ''}")
        else:
            shown.append(f"{value} {unit}")
    return shown
