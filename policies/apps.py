from django.apps import AppConfig


class PoliciesConfig(AppConfig):
    name = "policies"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from studio.models import Project
        from studio.signals import project_created

        project_created.connect(_project_created, sender=Project, dispatch_uid="policies.project_created")


def _project_created(sender, instance, **kwargs):
    # A new project's namespace is labelled for Pod Security as the policies say (on commit: the row must exist).
    from studio.queue import enqueue_on_commit

    enqueue_on_commit("policies.tasks.project_namespace_security", instance.pk)
