from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from profiles.validation import register_spec_check, register_spec_serializer
        from studio.models import Project
        from studio.org.numbers import GpuUse, register_gpu_use
        from studio.signals import deleting
        from workloads.models import ALLOCATED, REQUESTED, Workload
        from workloads.signals import phase_changed
        from workloads.specs import ALL_SPECS, validate_spec
        from workloads.telemetry import prometheus

        prometheus.register()
        register_spec_check(validate_spec)  # templates and profiles must render to a spec this accepts
        register_spec_serializer(ALL_SPECS.get)  # the version editor's typed spec inputs
        deleting.connect(_project_deleting, sender=Project, dispatch_uid="workloads.project_deleting")
        phase_changed.connect(_finished_logs_capture, sender=Workload, dispatch_uid="workloads.finished_logs")
        register_gpu_use(GpuUse(rows=lambda: Workload.objects.filter(deleted_at__isnull=True),
                                allocated=ALLOCATED, requested=REQUESTED))


def _project_deleting(sender, instance, **kwargs):
    from workloads.cluster.push import leaving_workloads_remove
    from workloads.services import project_workloads_release

    project_workloads_release(project=instance, unreached=leaving_workloads_remove(instance))


LOGS_CAPTURE_BATCH = 20


def _finished_logs_capture(sender, changes: list[dict], **kwargs):
    """Workloads the sync saw finish: their pods' last lines are read before the pods go (a Job's time to live), in
    tasks of LOGS_CAPTURE_BATCH workloads each (a send costs the sender ~0.5 ms of CPU: a pass that sees 10,000
    workloads fail sends 500 messages, not 10,000)."""
    from studio.queue import enqueue_on_commit

    finished = [[change["workload_id"], change["phase"]] for change in changes
                if change.get("phase") in ("Completed", "Failed")]
    for start in range(0, len(finished), LOGS_CAPTURE_BATCH):
        enqueue_on_commit("workloads.tasks.workloads_logs_capture", finished[start:start + LOGS_CAPTURE_BATCH])
