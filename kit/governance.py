"""When a running stream counts as idle. Pure: times in, a verdict out.

A session is in use while a client asks about it (`GET /streaming/stream/{id}`, the portal's stream page: its
`last_activity`) or its GPU works (a GPU_UTILIZATION sample at or over GPU_IDLE_THRESHOLD_PERCENT: `busy_at`, the
latest). It is idle once none of these happened for the profile's idle time, counted from when it started running
at the earliest: a session that waits for a GPU is never idle."""

from datetime import datetime


def span(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else "", f"{secs} s" if secs else ""]
    return " ".join(part for part in parts if part) or "0 s"


def idle_verdict(*, timeout: int | None, now: datetime, running_since: datetime | None,
                 last_activity: datetime | None, busy_at: datetime | None) -> str | None:
    """Why the session ends now (the sentence its event and its page show), or None while it is in use."""
    if not timeout or running_since is None:
        return None
    latest = max(t for t in (running_since, last_activity, busy_at) if t is not None)
    quiet = (now - latest).total_seconds()
    if quiet < timeout:
        return None
    return (f"Ended after {span(quiet)} without a client or GPU activity; the profile ends streams idle for "
            f"{span(timeout)}.")
