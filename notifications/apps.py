from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    """Reacts to what the lower apps announce (workloads.signals, kit.signals): each receiver enqueues a task."""

    name = "notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from kit.models import StreamSession
        from kit.signals import stream_ended
        from notifications import receivers
        from workloads.models import Workload
        from workloads.signals import phase_changed

        phase_changed.connect(receivers.workload_phase_changed, sender=Workload,
                              dispatch_uid="notifications.phase_changed")
        stream_ended.connect(receivers.stream_ended, sender=StreamSession, dispatch_uid="notifications.stream_ended")
