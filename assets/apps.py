from django.apps import AppConfig


class AssetsConfig(AppConfig):
    name = "assets"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from studio.models import Project
        from studio.signals import deleting, project_created

        project_created.connect(_project_changed, sender=Project, dispatch_uid="assets.project_created")
        deleting.connect(_project_changed, sender=Project, dispatch_uid="assets.project_deleting")


def _project_changed(sender, instance, **kwargs):
    # A project made or deleted: its cluster's credential Secrets follow (made in, or removed from, its namespace),
    # once the transaction commits (a deleted project is then gone, and its Secrets are orphans to delete).
    from studio.queue import enqueue_on_commit

    enqueue_on_commit("assets.tasks.cluster_credentials_sync", str(instance.cluster_id))
