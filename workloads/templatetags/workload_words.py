"""Template filters of the workload pages."""

from django import template

from workloads.pending_words import explain

register = template.Library()


@register.filter
def waiting_words(workload) -> dict:
    """Why the workload waits, in plain words, with the scheduler's own text kept for a details toggle."""
    return explain(workload.waiting_reason, workload.waiting_position, gpus=workload.gpu_request)
