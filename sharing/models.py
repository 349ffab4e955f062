"""Who may see a shareable thing: its owner project, and none / all / selected other projects.

One mechanism for every kind (service profiles, environment templates, Kit app profiles): a model inherits
`Shareable`, gets `owner_project`, `sharing_mode` and `shared_with`, and its manager answers "what may these
projects see" in one query (an EXISTS over the share table, no DISTINCT)."""

from django.db import models
from django.db.models import Exists, OuterRef, Q

from studio.models import Project, is_platform_admin


class SharingMode(models.TextChoices):
    NONE = "none"
    ALL = "all"
    SELECTED = "selected"


class ShareableQuerySet(models.QuerySet):
    def for_projects(self, project_ids):
        """Rows owned by, or shared with, any of `project_ids` (ids or a subquery of ids). "Shared with all" is
        shared with every project, so it reaches a caller only through a project: none for an empty set."""
        shared_with_all = Q(sharing_mode=SharingMode.ALL)
        if isinstance(project_ids, (list, tuple, set, frozenset)):
            if not project_ids:
                return self.none()
        else:  # a subquery of ids: "all" holds only when it has one (uncorrelated, evaluated once)
            shared_with_all &= Exists(Project.objects.filter(pk__in=project_ids))
        through = self.model.shared_with.through
        source = self.model._meta.model_name
        selected = Exists(through.objects.filter(**{f"{source}_id": OuterRef("pk"), "project_id__in": project_ids}))
        return self.filter(
            Q(owner_project_id__in=project_ids)
            | shared_with_all
            | (Q(sharing_mode=SharingMode.SELECTED) & selected)
        )

    def for_project(self, project):
        return self.for_projects([project.pk if hasattr(project, "pk") else project])

    def visible_to(self, user):
        """Platform admins see everything; a user sees what any of their projects may see."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.for_projects(Project.objects.visible_to(user).values("pk"))


class Shareable(models.Model):
    owner_project = models.ForeignKey(Project, on_delete=models.PROTECT, null=True, blank=True, related_name="+")
    sharing_mode = models.CharField(max_length=8, choices=SharingMode.choices, default=SharingMode.NONE)
    shared_with = models.ManyToManyField(Project, blank=True, related_name="+")

    objects = ShareableQuerySet.as_manager()

    class Meta:
        abstract = True

    def sharing(self) -> dict:
        """The API shape: {"mode", "projectIds"} (ids only for `selected`)."""
        ids = sorted(p.pk for p in self.shared_with.all()) if self.sharing_mode == SharingMode.SELECTED else []
        return {"mode": self.sharing_mode, "projectIds": ids}
