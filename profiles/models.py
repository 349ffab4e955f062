"""Environment templates (+ versions), service profiles, and the secret values of catalog launches.

A template version is the "code" of a service: the workload kind, a spec template with `{{ name }}`
placeholders, typed variables and output expressions. A service profile packages one version for end users:
input and output settings, labels, annotations, extra configuration, sharing. Workloads keep
what they were launched from as plain values (Workload.profile_id is no foreign key), so deleting or editing
a profile never touches them."""

import json
from functools import cache

from django.conf import settings
from django.core.signals import setting_changed
from django.db import models
from django.templatetags.static import static

from profiles.system import SYSTEM_ICONS
from sharing.models import Shareable, ShareableQuerySet
from studio.crypto import EncryptedTextField
from studio.names import validate_name

KINDS = ("training", "inference", "workspace", "distributed")  # distributed: a Kubeflow job, master + workers


@cache
def system_icon_url(path: str) -> str:
    """`static(path)` of a shipped icon, once per process: a catalog page asked the static files storage for the
    same few URLs 100 times (a third of rendering its entries). Forgotten when a static files setting changes."""
    return static(path)


def _forget_icon_urls(*, setting, **kwargs) -> None:
    if setting in ("STATIC_URL", "STATIC_ROOT", "STORAGES", "STATICFILES_STORAGE", "FORCE_SCRIPT_NAME"):
        system_icon_url.cache_clear()


setting_changed.connect(_forget_icon_urls)


class EnvironmentTemplate(Shareable):
    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    display_name = models.CharField(max_length=200, blank=True, default="")
    description = models.TextField(blank=True, default="")
    system = models.BooleanField(default=False)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_by_name = models.CharField(max_length=254, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ShareableQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class TemplateVersion(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft"
        ACTIVE = "active"
        DISABLED = "disabled"

    template = models.ForeignKey(EnvironmentTemplate, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=64)
    kind = models.CharField(max_length=12, choices=[(k, k) for k in KINDS])
    spec_template = models.JSONField(default=dict)
    variables = models.JSONField(default=list, blank=True)
    outputs = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.DRAFT)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["template_id", "created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["template", "version"], name="one_version_per_template")]

    def __str__(self):
        return f"{self.template} {self.version}"


class ServiceProfile(Shareable):
    class ServiceType(models.TextChoices):
        NOTEBOOK = "notebook"
        INFERENCE = "inference"
        JOBS = "jobs"
        CUSTOM = "custom"

    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    display_name = models.CharField(max_length=200, blank=True, default="")
    description = models.TextField(blank=True, default="")
    # PROTECT: a version that backs a profile cannot be deleted (409), only disabled.
    template_version = models.ForeignKey(TemplateVersion, on_delete=models.PROTECT, related_name="profiles")
    service_type = models.CharField(max_length=9, choices=ServiceType.choices, db_index=True)
    icon_url = models.URLField(max_length=500, blank=True, default="")
    readme = models.TextField(blank=True, default="")
    readme_html = models.TextField(blank=True, default="", editable=False)  # rendered once, on save
    labels = models.JSONField(default=dict, blank=True)
    annotations = models.JSONField(default=dict, blank=True)
    extra_config = models.JSONField(default=dict, blank=True)
    inputs = models.JSONField(default=list, blank=True)  # one setting per template variable, in its order
    outputs = models.JSONField(default=list, blank=True)  # one setting per template output
    revision = models.PositiveIntegerField(default=1)
    system = models.BooleanField(default=False)
    # A profile still being set up in the portal's wizard: the step it resumes at; blank once set up. A draft is
    # in no catalog and cannot be launched; every step is saved (and validated) like any other update.
    draft_step = models.CharField(max_length=16, blank=True, default="")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_by_name = models.CharField(max_length=254, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ShareableQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def is_draft(self) -> bool:
        return bool(self.draft_step)

    @property
    def icon_src(self) -> str:
        """The icon to show: the profile's own URL, else the shipped icon of its system template, else none."""
        if self.icon_url:
            return self.icon_url
        template = self.template_version.template
        icon = SYSTEM_ICONS.get(template.name) if template.system else None
        return system_icon_url(icon) if icon else ""


class LaunchSecret(models.Model):
    """What a catalog launch must keep out of the workload's spec: secret inputs and generated values (a
    notebook token). The spec's environment variables reference the Kubernetes Secret `name`, keys as in
    `data`; the pipeline creates that Secret from `profiles.selectors.launch_secret_manifest`."""

    workload_id = models.UUIDField(unique=True)  # a plain id: profiles sit below workloads in the app order
    name = models.CharField(max_length=63)
    data_json = EncryptedTextField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"launch secret {self.name}"

    @property
    def data(self) -> dict[str, str]:
        return json.loads(self.data_json)
