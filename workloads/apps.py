from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from workloads import prometheus

        prometheus.register()
