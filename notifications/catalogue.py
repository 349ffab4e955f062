"""The notification types (Run:ai's Notification Types: a category and a type each) and which of them a change of
a workload or a stream is. Pure: no models."""

WORKLOAD = "Workload status change"  # Run:ai's category of a workload's status changes
TIMEOUT = "Workload timeout"
QUOTA = "Quota"
KIT = "Kit stream"

TYPES = [
    (WORKLOAD, "Failed", "The workload failed."),
    (WORKLOAD, "Completed", "The workload completed."),
    (WORKLOAD, "Preempted", "The scheduler evicted the workload for one of higher priority; it waits to run again."),
    (WORKLOAD, "Reclaimed", "The workload's GPUs were reclaimed: by the scheduler for a project within its quota, "
                            "or by the platform after they stayed idle."),
    (WORKLOAD, "PendingTooLong", "The workload has been pending for longer than the subscription's minutes."),
    (TIMEOUT, "TimeLimitReached", "The workload ran past its project's time limit and was suspended."),
    (QUOTA, "QuotaReached", "The workload waits because its project's or department's quota or limit is reached."),
    (KIT, "Ended", "A Kit stream session ended."),
    (KIT, "IdleStopped", "A Kit stream session was ended for being idle."),
]
KNOWN = {category: {t for c, t, _ in TYPES if c == category} for category, _, _ in TYPES}

# The waiting reasons (workloads.cluster.pending) and the platform's suspend reasons (workloads.cluster.reclaim)
# that are notification types.
REASONS = {"Preempted": (WORKLOAD, "Preempted"), "Reclaimed": (WORKLOAD, "Reclaimed"),
           "IdleGpuReclaimed": (WORKLOAD, "Reclaimed"), "TimeLimitReached": (TIMEOUT, "TimeLimitReached"),
           "OverQuota": (QUOTA, "QuotaReached")}
PHASES = {"Failed": (WORKLOAD, "Failed"), "Completed": (WORKLOAD, "Completed")}


def workload_types(change: dict) -> list[tuple[str, str]]:
    """The (category, type) pairs of one change that workloads.signals.phase_changed tells."""
    found = [PHASES[change["phase"]]] if change.get("phase") in PHASES else []
    if change.get("reason") in REASONS:
        found.append(REASONS[change["reason"]])
    return found


def stream_type(*, idle: bool) -> tuple[str, str]:
    return (KIT, "IdleStopped") if idle else (KIT, "Ended")


def events_errors(events) -> list[tuple[str, str]]:
    """(field, message) for each unknown category or type of a subscription's `events`."""
    errors = []
    for i, event in enumerate(events):
        types = KNOWN.get(event["category"])
        if types is None:
            errors.append((f"events[{i}].category", f"Unknown category {event['category']!r}; one of: "
                                                     f"{', '.join(sorted(KNOWN))}."))
            continue
        for j, name in enumerate(event["types"]):
            if name not in types:
                errors.append((f"events[{i}].types[{j}]", f"Unknown type {name!r} of {event['category']!r}; one "
                                                          f"of: {', '.join(sorted(types))}."))
    return errors


def subscribed(events: list, category: str, type_: str) -> bool:
    return any(e.get("category") == category and type_ in (e.get("types") or []) for e in events)


def render_subject(template: str, *, category: str, reason: str, name: str) -> str:
    """Run:ai's subject template (`{{ .category }} {{ .reason }}`, Go's syntax) with this notification's words."""
    values = {"category": category, "reason": reason, "type": reason, "name": name}
    out = template
    for key, value in values.items():
        for spelling in (f"{{{{ .{key} }}}}", f"{{{{.{key}}}}}"):
            out = out.replace(spelling, value)
    return out
