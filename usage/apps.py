from django.apps import AppConfig


class UsageConfig(AppConfig):
    name = "usage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from studio.org.overtime import register_overtime
        from usage.org_series import org_unit_series
        from usage.overtime import org_unit_overtime
        from workloads.telemetry.org_history import register_org_history

        register_overtime(org_unit_overtime)  # projects' and departments' overtimeData (studio never names usage)
        register_org_history(org_unit_series)  # their metrics over long ranges (workloads never names usage)
