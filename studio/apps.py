from django.apps import AppConfig


class StudioConfig(AppConfig):
    name = "studio"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from studio import schema  # noqa: F401  (registers the OpenAPI auth extension)
