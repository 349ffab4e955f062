from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_migrate


class StudioConfig(AppConfig):
    name = "studio"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from studio import keys, schema  # noqa: F401  (register the key checks and the OpenAPI auth extension)
        from studio.iam import passwords
        from studio.iam.roles import roles_ensure

        post_migrate.connect(roles_ensure, sender=self, dispatch_uid="studio-roles-ensure")
        user_logged_in.connect(passwords.remember_at_login, dispatch_uid="studio-temporary-password")
