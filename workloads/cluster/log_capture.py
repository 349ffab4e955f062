"""The last lines of a workload's pod logs, kept after the pods are gone: read from the cluster before a suspend or
a delete removes the pods (workloads.cluster.push), and when the sync sees the workload finish (a receiver of
`phase_changed` enqueues workloads.tasks.workloads_logs_capture, a batch), then shown by the log panel in their place.

Best effort: a pod whose log cannot be read (no kubelet behind it, never started, the cluster not answering) keeps
its previous capture, if any; nothing here stops a suspend or a delete."""

import re

from django.utils import timezone

from studio.clusters import kube
from workloads.models import PodLogCapture, Workload

CAPTURED_LINES = 500
MAX_PODS = 20  # a large distributed training: the first pods' logs, not hundreds of requests
_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d) ")


def pod_logs_capture(workload: Workload, *, reason: str) -> int:
    """Keep the last lines of each of the workload's pods (as last seen by the sync); how many were read."""
    names = list(workload.pods.order_by("created_at", "name").values_list("name", flat=True)[:MAX_PODS])
    if not names:
        return 0
    try:
        conn = kube.connect(workload.cluster)
    except kube.ClusterError:
        return 0
    captured = 0
    for name in names:
        try:
            text = kube.pod_log(conn, workload.project.namespace, name, tail_lines=CAPTURED_LINES, timestamps=True)
        except kube.ClusterError as exc:
            if isinstance(exc, kube.TransientClusterError) and exc.status not in (500, 502):
                break  # the cluster does not answer: the suspend goes on without waiting on every pod
            continue  # this pod has no log to give (never started, its node's kubelet not answering)
        except kube.TRANSIENT_ERRORS:
            break
        if not text.strip():
            continue
        PodLogCapture.objects.update_or_create(workload=workload, pod_name=name, defaults={
            "text": text, "captured_at": timezone.now(), "reason": reason})
        captured += 1
    return captured


def workload_logs_capture(workload_id, *, reason: str) -> int:
    workload = Workload.objects.select_related("project", "cluster").filter(pk=workload_id).first()
    return 0 if workload is None else pod_logs_capture(workload, reason=reason)


def captured_text(capture: PodLogCapture, *, tail_lines: int, timestamps: bool) -> str:
    """The capture as the panel asks it: its last `tail_lines` lines, with or without their times."""
    lines = capture.text.splitlines()[-tail_lines:] if tail_lines else []
    if not timestamps:
        lines = [_STAMP.sub("", line, count=1) for line in lines]
    return "\n".join(lines) + ("\n" if lines else "")


def capture_note(capture: PodLogCapture) -> str:
    when = timezone.localtime(capture.captured_at).strftime("%Y-%m-%d %H:%M:%S %Z")
    event = {"Suspended": "was suspended", "Deleted": "was deleted", "Completed": "completed",
             "Failed": "failed"}.get(capture.reason, "stopped")
    return (f"The pod is gone: these are the last lines of its log, captured at {when} when the workload {event}.")
