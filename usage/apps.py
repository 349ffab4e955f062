from django.apps import AppConfig


class UsageConfig(AppConfig):
    name = "usage"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from studio.org.overtime import register_overtime
        from usage.overtime import org_unit_overtime

        register_overtime(org_unit_overtime)  # projects' and departments' overtimeData (studio never names usage)
