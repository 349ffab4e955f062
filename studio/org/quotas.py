"""Run:ai's per-node-pool quotas (`Resources`: nodePool × gpu/cpu/memory deserved, limit, overQuotaWeight), read
from a request body and checked against the cluster's pools. Pure apart from the pools it is given."""

from django.core.exceptions import ValidationError

MEMORY_UNITS = ("Mib", "MB", "GB")


def _number(value, where: str, errors: dict, *, required: bool = False, allow_unlimited: bool = False):
    """A number ≥ 0 (or -1, "no limit", where allowed); numbers in strings are accepted."""
    if value is None:
        if required:
            errors[where] = "This field is required."
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        errors[where] = f"Must be a number, not {value!r}."
        return None
    if number != number or number < (-1 if allow_unlimited else 0) or (allow_unlimited and -1 < number < 0):
        errors[where] = "Must be at least 0" + (" (or -1: no limit)." if allow_unlimited else ".")
        return None
    return int(number) if number == int(number) else number


def _resource(body, where: str, errors: dict, *, required: bool) -> dict | None:
    if body is None:
        if required:
            errors[where] = "This field is required."
        return None
    if not isinstance(body, dict):
        errors[where] = "Must be an object."
        return None
    for unknown in sorted(set(body) - {"deserved", "limit", "overQuotaWeight", "units"}):
        errors[f"{where}.{unknown}"] = "Unknown field."
    out = {"deserved": _number(body.get("deserved"), f"{where}.deserved", errors, required=required,
                               allow_unlimited=True),
           "limit": _number(body.get("limit"), f"{where}.limit", errors, allow_unlimited=True),
           "overQuotaWeight": _number(body.get("overQuotaWeight"), f"{where}.overQuotaWeight", errors)}
    if out["limit"] not in (None, -1) and out["deserved"] not in (None, -1) and out["limit"] < out["deserved"]:
        errors[f"{where}.limit"] = "Must be at least deserved (or -1: no limit)."
    if "units" in body:
        if body["units"] not in MEMORY_UNITS:
            errors[f"{where}.units"] = f"Must be one of {', '.join(MEMORY_UNITS)}."
        out["units"] = body["units"]
    return out


def resources_from(body, pools: list, *, prefix: str = "resources") -> list[dict]:
    """A `Resources` array (or one entry) → the stored form; every problem named at once (`resources[0].gpu.limit`).
    `pools` are the NodePool rows the entries may name, by id or by name."""
    items = body if isinstance(body, list) else [body]
    by_id = {str(p.pk): p for p in pools}
    by_name = {p.name: p for p in pools}
    errors, out, seen = {}, [], set()
    for index, item in enumerate(items):
        where = f"{prefix}[{index}]"
        if not isinstance(item, dict):
            errors[where] = "Must be an object with nodePool and gpu."
            continue
        for unknown in sorted(set(item) - {"nodePool", "gpu", "cpu", "memory", "priority"}):
            errors[f"{where}.{unknown}"] = "Unknown field."
        named = item.get("nodePool")
        if named is not None and not isinstance(named, dict):  # a string, number or list, not Run:ai's {id, name}
            errors[f"{where}.nodePool"] = "Must be an object with the pool's id or name."
        named = named if isinstance(named, dict) else {}
        pool = by_id.get(str(named.get("id"))) if named.get("id") is not None else by_name.get(named.get("name"))
        if f"{where}.nodePool" in errors:
            pass
        elif pool is None:
            errors[f"{where}.nodePool"] = (f"No node pool {named.get('id') or named.get('name')!r} on the cluster; "
                                           f"its pools are: {', '.join(sorted(by_name)) or 'none'}.")
        elif pool.name in seen:
            errors[f"{where}.nodePool"] = f"Node pool {pool.name} is given twice."
        else:
            seen.add(pool.name)
        entry = {"nodePool": {"id": str(pool.pk), "name": pool.name} if pool else named,
                 "gpu": _resource(item.get("gpu"), f"{where}.gpu", errors, required=True)}
        for kind in ("cpu", "memory"):
            if item.get(kind) is not None:
                entry[kind] = _resource(item[kind], f"{where}.{kind}", errors, required=False)
        if item.get("priority") is not None:  # latest's pool priority: stored and answered
            entry["priority"] = str(item["priority"])
        out.append(entry)
    if errors:
        raise ValidationError(errors)
    return out


def gpu_totals(resources: list[dict]) -> tuple[float, float | None]:
    """The project's GPU deserved and limit over its pools (limit None when some pool has no limit)."""
    deserved = sum(max(0, r["gpu"]["deserved"] or 0) for r in resources)
    limits = [r["gpu"].get("limit") for r in resources]
    limit = None if any(v in (None, -1) for v in limits) else sum(limits)
    return deserved, limit


# --- a department's deserved GPUs bound its projects', pool by pool (Run:ai) ---------------------------------

def _pool_name(entry) -> str | None:
    return ((entry.get("nodePool") or {}) if isinstance(entry, dict) else {}).get("name")


def gpu_deserved_by_pool(resources) -> dict[str, float]:
    """GPU deserved per node pool of a `node_pool_resources` list; unlimited (-1) and unset add nothing."""
    out: dict[str, float] = {}
    for entry in resources or ():
        if isinstance(entry, dict) and isinstance(entry.get("nodePool"), dict) and entry["nodePool"].get("name"):
            value = (entry.get("gpu") or {}).get("deserved") if isinstance(entry.get("gpu"), dict) else None
            name = entry["nodePool"]["name"]
            out[name] = out.get(name, 0.0) + max(0.0, float(value or 0))
    return out


def department_gpu_bounds(resources) -> dict[str, float]:
    """The pools where a department's `resources` set a deserved GPU share (>= 0), and that share."""
    bounds = {}
    for entry in resources or ():
        value = ((entry.get("gpu") or {}) if isinstance(entry, dict) else {}).get("deserved")
        if isinstance(entry, dict) and value is not None and float(value) >= 0:
            bounds[_pool_name(entry)] = float(value)
    return bounds


def summed_by_pool(resources_lists) -> dict[str, float]:
    """GPU deserved per pool summed over several units' `resources` (a department's projects)."""
    total: dict[str, float] = {}
    for resources in resources_lists:
        for name, value in gpu_deserved_by_pool(resources).items():
            total[name] = total.get(name, 0.0) + value
    return total
