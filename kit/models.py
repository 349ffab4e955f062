"""Kit App Streaming: applications, their versions, and application profiles.

An application profile says how a Kit app is deployed onto a GPU node (compute, node selection, load
balancing, encryption, authorization, environment) and which application versions it serves, with `*`
wildcards (kit.matching). Profiles belong to a project and are shared through `sharing`. A streaming session
(`StreamSession`) runs as a workload of kind "stream" (workloads.Workload) whose spec is a snapshot of the version
and profile at launch, so editing or deleting either leaves running sessions alone. A session may wait in its
project's queue before it has a workload (`StreamLimit`: a project's cap on concurrent streams). A `ClientUrl`
is a project-scoped, expiring, revocable base URL that lets a Kit client without a token header reach the Kit
APIs (kit.client_urls).
"""

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from kit.matching import is_version
from sharing.models import Shareable
from studio.models import AccessKey, Project
from studio.names import validate_name

VERSION_RULE = "Must be a semantic version such as 1.2.3 or 2.0.0-rc.1."


def validate_version(value: str) -> None:
    if not is_version(value):
        raise ValidationError(VERSION_RULE, code="invalid_version")


class Application(models.Model):
    # The Kit app id ("usd-viewer") is the key: immutable, and the prefix of its sessions' workload names.
    id = models.CharField(primary_key=True, max_length=63, validators=[validate_name])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    tags = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.name  # not the id: Django clears the primary key of a deleted row, and the audit names it after


class ApplicationVersion(models.Model):
    application = models.ForeignKey(Application, on_delete=models.CASCADE, related_name="versions")
    version = models.CharField(max_length=128, validators=[validate_version])
    container = models.CharField(max_length=255)  # image repository, e.g. nvcr.io/nvidia/omniverse/usd-viewer
    container_version = models.CharField(max_length=128)  # image tag
    helm_chart = models.CharField(max_length=255, blank=True, default="")
    helm_chart_version = models.CharField(max_length=128, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["application_id", "version"]
        constraints = [
            models.UniqueConstraint(fields=["application", "version"], name="one_row_per_application_version")
        ]

    def __str__(self):
        return f"{self.application_id} {self.version}"

    @property
    def image(self) -> str:
        return f"{self.container}:{self.container_version}"


class ApplicationProfile(Shareable):
    class ServiceType(models.TextChoices):
        LOAD_BALANCER = "LoadBalancer"
        NODE_PORT = "NodePort"
        CLUSTER_IP = "ClusterIP"

    class OverCapacity(models.TextChoices):
        QUEUE = "queue", "Wait in the project's queue"
        REFUSE = "refuse", "Refuse the request"

    class Encryption(models.TextChoices):
        NONE = "none", "None"
        LOAD_BALANCER = "loadBalancer", "At the load balancer"  # configured by the Service's annotations
        POD = "pod", "In the pod"  # with the certificate of `tls_secret`, mounted at /etc/tls

    slug = models.CharField("id", max_length=63, unique=True, validators=[validate_name])
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True, default="")
    supported_applications = models.JSONField(default=list, blank=True)

    # Deployment settings, in the workload spec's own shapes (validated by workloads.specs parts).
    compute = models.JSONField(default=dict, blank=True)
    node_selector = models.JSONField(default=dict, blank=True)
    tolerations = models.JSONField(default=list, blank=True)
    runtime_class_name = models.CharField(max_length=253, blank=True, default="")
    authorization = models.BooleanField(default=True)
    service_type = models.CharField(max_length=16, choices=ServiceType.choices, default=ServiceType.LOAD_BALANCER)
    service_annotations = models.JSONField(default=dict, blank=True)
    encryption = models.CharField(max_length=16, choices=Encryption.choices, default=Encryption.NONE)
    tls_secret = models.CharField(max_length=253, blank=True, default="")
    environment = models.JSONField(default=list, blank=True)
    ports = models.JSONField(default=list, blank=True)
    # Governance: a session is ended after this long without activity (None: never); a request over its
    # project's cap of concurrent streams waits in the project's queue or is refused.
    idle_timeout_seconds = models.PositiveIntegerField(null=True, blank=True)
    over_capacity = models.CharField(max_length=8, choices=OverCapacity.choices, default=OverCapacity.QUEUE)

    # Bumped on every change, and recorded on each session launched from the profile.
    revision = models.PositiveIntegerField(default=1)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self):
        return self.slug


class StreamLimit(models.Model):
    """A project's cap on its concurrent streaming sessions (None: no cap)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, primary_key=True, related_name="stream_limit")
    max_sessions = models.PositiveIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"{self.project_id}: {self.max_sessions}"


class ClientUrl(models.Model):
    """A base URL `/kit-client/<token>` that acts, in one project, for the user who made it, on the Kit APIs only.
    The token is shown once; only its SHA-256 digest is kept. It records the credential it was made with, and
    ends with it (kit.client_urls): the access key, the user's password (a service account's secret replaces
    its user's password), the user."""

    class Origin(models.TextChoices):
        LOGIN = "login"  # the user's own login: the portal, a password or single sign-on token
        ACCESS_KEY = "access-key"  # a token of an access key's id and secret
        SERVICE_ACCOUNT = "service-account"  # a token of a service account's id and secret

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    token_digest = models.CharField(max_length=64, unique=True, editable=False)
    hint = models.CharField(max_length=12, editable=False)  # the token's first characters, to tell URLs apart
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.LOGIN)
    # The access key it was made with (origin access-key); null once the key is deleted, which ends the URL.
    access_key = models.ForeignKey(AccessKey, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # A keyed digest of the maker's password hash when it was made (kit.client_urls.credential_digest): a new
    # password, or a service account's new secret, ends the URL.
    credential_digest = models.CharField(max_length=64, blank=True, default="", editable=False)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.name


class StreamSession(models.Model):
    """One request for a stream: queued (no workload yet), launched (its workload says how it runs), or over.
    A session launched at once has its workload's id."""

    class State(models.TextChoices):
        QUEUED = "queued"
        LAUNCHED = "launched"
        FAILED = "failed"  # its turn came and it could not be launched (the reason is in `message`)
        ENDED = "ended"

    class ChosenBy(models.TextChoices):
        REQUEST = "request"  # the request's projectId
        CLIENT_URL = "clientUrl"  # the client URL's project
        PROFILE = "profile"  # the profile's own project, where the caller may launch
        ONLY_PROJECT = "onlyProject"  # the one project where the caller may launch

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    project_chosen_by = models.CharField(max_length=12, choices=ChosenBy.choices)
    workload = models.OneToOneField("workloads.Workload", on_delete=models.SET_NULL, null=True, blank=True,
                                    related_name="stream_session")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True,
                                     related_name="+")
    client_url = models.ForeignKey(ClientUrl, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    # What was asked for, to launch it when its turn comes.
    application = models.CharField(max_length=63)
    version = models.CharField(max_length=128, blank=True, default="")
    profile = models.CharField(max_length=63)
    arguments = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.QUEUED, db_index=True)
    message = models.TextField(blank=True, default="")
    idle_timeout_seconds = models.PositiveIntegerField(null=True, blank=True)  # the profile's, at request
    requested_at = models.DateTimeField(auto_now_add=True, db_index=True)
    launched_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-requested_at"]
        indexes = [models.Index(fields=["project", "state", "requested_at"])]

    def __str__(self):
        return f"{self.application} {self.id}"
