from django.apps import AppConfig


class WorkloadsConfig(AppConfig):
    name = "workloads"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from profiles.validation import register_spec_check
        from workloads.specs import validate_spec
        from workloads.telemetry import prometheus

        prometheus.register()
        register_spec_check(validate_spec)  # templates and profiles must render to a spec this accepts
