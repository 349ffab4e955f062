from django.apps import AppConfig


class PortalConfig(AppConfig):
    """Pages that show several apps' objects at once (the home page): the top layer, so that no app below has to
    name another to its right."""

    name = "portal"
    default_auto_field = "django.db.models.BigAutoField"
