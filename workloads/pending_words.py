"""Why a workload waits, said to the researcher who submitted it: a sentence built from the pending reason's fields
(workloads.cluster.pending, workloads.cluster.queued) and its place in line. The reason's own message and the
scheduler's text stay as they are (the API answers them); the pages show them behind a details toggle."""

from __future__ import annotations

from studio.words import count, number

RESOURCE = {"nvidia.com/gpu": ("GPU", "GPUs"), "gpu": ("GPU", "GPUs"), "cpu": ("CPU core", "CPU cores"),
            "memory": ("GB of memory", "GB of memory")}
RESOURCE_NAME = {"nvidia.com/gpu": "GPUs", "gpu": "GPUs", "cpu": "CPU", "memory": "memory",
                 "ephemeral-storage": "disk space", "pods": "room for more pods"}


def ordinal(n: int) -> str:
    """1 → "1st", 2 → "2nd", 3 → "3rd", 11 → "11th", 22 → "22nd"."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def in_line(position: int | None) -> str:
    if not position:
        return ""
    return "It is next in line." if position == 1 else f"It is {ordinal(position)} in line."


def _pool(reason: dict) -> str:
    pool = reason.get("nodePool")
    return f" in node pool {pool}" if pool else ""


def _amount(value, resource: str) -> str:
    one, many = RESOURCE.get(resource, (resource, resource))
    return count(value, one, many)


def _are(value) -> str:
    return "is" if float(value) == 1 else "are"


def _over_quota(reason: dict) -> str:
    resource = reason.get("resource") or "gpu"
    who = f"{reason.get('scope') or 'project'} {reason.get('scopeName') or ''}".strip()
    where = _pool(reason)
    allowed, used, requested = reason.get("allowed"), reason.get("used"), reason.get("requested")
    known = None not in (allowed, used, requested)
    if reason.get("quota") == "limit":
        if known:
            return (f"Waiting: {who} may use at most {_amount(allowed, resource)}{where}, and {number(used)} "
                    f"{_are(used)} already in use or waiting ahead of this one, which asks for {number(requested)}. It starts "
                    f"when the {reason.get('scope') or 'project'}'s other work there ends.")
        return (f"Waiting: {who} has reached its limit of {RESOURCE_NAME.get(resource, resource)}{where}. It starts "
                f"when the {reason.get('scope') or 'project'}'s other work there ends.")
    if known:
        return (f"Waiting: this workload cannot be paused by the scheduler, so it only runs within {who}'s "
                f"guaranteed {_amount(allowed, resource)}{where}; {number(used)} {_are(used)} already in use or "
                f"waiting ahead, and it asks for {number(requested)}. Trainings may borrow idle GPUs beyond the quota.")
    return (f"Waiting: this workload cannot be paused by the scheduler, so it only runs within {who}'s guaranteed "
            f"{RESOURCE_NAME.get(resource, resource)}{where}, which are in use. Trainings may borrow idle GPUs "
            f"beyond the quota.")


def _no_room(reason: dict, gpus) -> str:
    lacking = reason.get("resources") or [reason.get("resource") or "nvidia.com/gpu"]
    where = _pool(reason)
    if lacking[0] in ("nvidia.com/gpu", "gpu") and len(lacking) == 1:
        wanted = count(gpus, "GPU") if gpus else "GPUs"
        return f"Waiting for {wanted}{where}: all its GPUs are in use."
    names = [RESOURCE_NAME.get(r, r) for r in lacking]
    said = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"Waiting for room{where}: no node there has enough {said} free for it."


def sentence(reason: dict | None, *, gpus=None) -> str:
    """The reason as one plain sentence ("" for none)."""
    if not reason:
        return ""
    kind = reason.get("type")
    if kind == "NoNodeRoom":
        return _no_room(reason, gpus)
    if kind == "OverQuota":
        return _over_quota(reason)
    if kind == "Unschedulable":
        return f"The scheduler cannot find a place for it{_pool(reason)} yet; its own words are below."
    if kind == "ImagePull":
        image = reason.get("image") or "its image"
        return (f"Its container image {image} cannot be downloaded: check the image's name and tag, and that the "
                f"project has the registry's credentials.")
    if kind == "Creating":
        return "Being set up on the cluster."
    if kind == "Starting":
        return "Placed on a node; its containers are starting."
    if kind == "Scheduling":
        return f"Waiting for the scheduler to place it{_pool(reason)}."
    if kind == "Reclaimed":
        by = reason.get("reclaimedBy") or {}
        whose = f"project {by['project']}" if by.get("project") else "another project"
        return (f"Paused: {whose} needed back GPUs of its own quota that this training had borrowed. It waits in "
                f"line and starts again by itself when GPUs free up.")
    if kind == "Preempted":
        by = reason.get("preemptedBy") or {}
        what = f" ({by['workload']})" if by.get("workload") else ""
        return (f"Paused for a more urgent workload of its own project{what}. It starts again by itself when GPUs "
                f"free up.")
    if kind == "Consolidated":
        return "Moved by the scheduler to pack GPUs tighter; it starts again by itself."
    return reason.get("message") or "Waiting for the scheduler."


def explain(reason: dict | None, position: int | None = None, *, gpus=None) -> dict:
    """{"sentence", "now" (what a paused workload waits for now), "line" (its place), "said" (the reason's own
    message), "scheduler" (the scheduler's text)} for a page."""
    if not reason:
        return {}
    waiting = reason.get("waitingFor")
    return {"sentence": sentence(reason, gpus=gpus),
            "now": sentence(waiting, gpus=gpus) if isinstance(waiting, dict) else "",
            "line": in_line(position),
            "said": reason.get("message") or "",
            "scheduler": reason.get("schedulerMessage") or ""}
