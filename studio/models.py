"""Organisation and identity: clusters, departments, projects, memberships, access keys, the audit trail."""

import secrets
import uuid

from django.conf import settings
from django.contrib.auth.hashers import check_password, make_password
from django.db import models

from studio.crypto import EncryptedTextField
from studio.names import validate_name

PLATFORM_ADMINS_GROUP = "platform-admins"


def is_platform_admin(user) -> bool:
    """Superusers and members of the `platform-admins` group; cached on the user for the request."""
    if not getattr(user, "is_authenticated", False):
        return False
    cached = getattr(user, "_studio_platform_admin", None)
    if cached is None:
        cached = user.is_superuser or user.groups.filter(name=PLATFORM_ADMINS_GROUP).exists()
        user._studio_platform_admin = cached
    return cached


class ClusterQuerySet(models.QuerySet):
    def visible_to(self, user):
        if is_platform_admin(user):
            return self
        return self.filter(projects__memberships__user=user).distinct()


class Cluster(models.Model):
    class Status(models.TextChoices):
        UNKNOWN = "Unknown"
        CONNECTED = "Connected"
        DISCONNECTED = "Disconnected"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    api_server_url = models.URLField(blank=True, default="")
    # Write-only credentials, encrypted at rest: a bearer token or a whole kubeconfig.
    token = EncryptedTextField(blank=True, default="")
    kubeconfig = EncryptedTextField(blank=True, default="")
    ca_cert = models.TextField(blank=True, default="")
    verify_tls = models.BooleanField(default=True)
    prometheus_url = models.URLField(blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UNKNOWN)
    status_message = models.TextField(blank=True, default="")
    last_seen_at = models.DateTimeField(null=True, blank=True)
    failed_rounds = models.PositiveIntegerField(default=0)
    has_knative = models.BooleanField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ClusterQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class DepartmentQuerySet(models.QuerySet):
    def visible_to(self, user):
        if is_platform_admin(user):
            return self
        return self.filter(projects__memberships__user=user).distinct()


class Department(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    description = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DepartmentQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class ProjectQuerySet(models.QuerySet):
    def visible_to(self, user):
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(memberships__user=user)


class Project(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    department = models.ForeignKey(Department, on_delete=models.PROTECT, related_name="projects")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="projects")
    namespace = models.CharField(max_length=63, unique=True, editable=False)
    gpu_deserved = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    gpu_limit = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @staticmethod
    def namespace_for(name: str) -> str:
        return f"studio-{name}"[:63]


class Membership(models.Model):
    class Role(models.TextChoices):
        ADMIN = "admin"
        MEMBER = "member"
        VIEWER = "viewer"

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=8, choices=Role.choices, default=Role.MEMBER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="one_membership_per_project")]
        ordering = ["project__name", "user__username"]

    def __str__(self):
        return f"{self.user} in {self.project} ({self.role})"


class AccessKey(models.Model):
    """A client id and secret for the client_credentials grant; the secret is shown once and stored hashed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_keys")
    name = models.CharField(max_length=100)
    client_id = models.CharField(max_length=64, unique=True, editable=False)
    secret_hash = models.CharField(max_length=256, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.client_id})"

    @classmethod
    def issue(cls, *, user, name: str) -> tuple["AccessKey", str]:
        secret = secrets.token_urlsafe(32)
        key = cls.objects.create(
            user=user, name=name, client_id="ak-" + secrets.token_hex(12), secret_hash=make_password(secret)
        )
        return key, secret

    def check_secret(self, secret: str) -> bool:
        return check_password(secret, self.secret_hash)


class AuditEvent(models.Model):
    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    actor_name = models.CharField(max_length=150, blank=True, default="")
    action = models.CharField(max_length=8, choices=Action.choices)
    object_type = models.CharField(max_length=64, db_index=True)
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200, blank=True, default="")
    changes = models.JSONField(default=dict, blank=True)
    request_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"])]

    def __str__(self):
        return f"{self.actor_name} {self.action} {self.object_type} {self.object_repr}"


