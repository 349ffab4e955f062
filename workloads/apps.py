from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from workloads.telemetry import prometheus

        prometheus.register()
