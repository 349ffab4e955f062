"""Identity and access: roles and their levels, access rules (subject x role x scope), access keys, single sign-on
and service accounts, temporary passwords.

App label `studio` (the module is inside the studio app), as before the split: studio/models.py imports these
models so that Django registers them, and the tables and migrations stay as they are. An access rule names its
scope's row (cluster, department, project) by the model's label: this module imports neither studio.org nor
studio.clusters, which stand above it.

- `IdentityProvider`: the organisation's OpenID Connect provider as Run:ai's `POST /api/v1/idps` sets it. Its
  client secret is encrypted at rest (studio.crypto) and never answered.
- `ExternalIdentity`: what the provider said of a user at the last login (subject, groups, uid/gid); a user who
  has one is not local (`isLocal: false`).
- `ServiceAccount`: a non-personal identity for automation (CI), with a client id and a secret shown once and
  stored hashed. It acts through a user row of its own, never able to log in with a password, so that access
  rules, visibility and the workloads it submits work as they do for a person.
- `TemporaryPassword`: present while the user's password is one an admin was shown (studio/iam/passwords.py).
- `CliDeviceAuthorization`: a command line's sign-in through the browser (OAuth's device authorization grant,
  studio/iam/device_codes.py): both its codes stored as keyed digests only, short-lived, used once.
"""

import secrets
import uuid

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, make_password
from django.db import models
from django.db.models import Exists, Q

from perf import keyed_rows
from studio.crypto import EncryptedTextField

PLATFORM_ADMINS_GROUP = "platform-admins"


def is_platform_admin(user) -> bool:
    """Superusers, and subjects of an admin-level role at tenant scope (e.g. "System administrator").

    The `platform-admins` group keeps working through the group access rule the migration created for it.
    Cached on the user for the request."""
    if not getattr(user, "is_authenticated", False):
        return False
    cached = getattr(user, "_studio_platform_admin", None)
    if cached is None:
        cached = user.is_superuser or any(scope in AccessRule.TENANT_WIDE and level == Level.ADMIN
                                           for scope, _project, _department, level in subject_rules(user))
        user._studio_platform_admin = cached
    return cached


def subject_rules(user) -> list[tuple]:
    """(scope type, project id, department id, role level) of each access rule that applies to the user; one
    query, cached on the user for the request: the platform-admin check and the user's roles read the same rows."""
    cached = getattr(user, "_studio_rules", None)
    if cached is None:
        if not getattr(user, "is_authenticated", False):
            cached = []
        else:
            # compiled once (perf.keyed_rows): compiling it cost about a millisecond of every API request
            cached = [(row["scope_type"], row["project_id"], row["department_id"], row["role__level"])
                      for row in keyed_rows.values_once_compiled(_rules_of_user, user_id=user.pk)]
        user._studio_rules = cached
    return cached


def _rules_of_user(user_id: int):
    """AccessRule.objects.of_subject's rules of one user, as values: (scope type, project, department, level)."""
    return (AccessRule.objects.of_user_id(user_id).order_by("id")
            .values("scope_type", "project_id", "department_id", "role__level"))


class Level(models.TextChoices):
    """Our three permission levels; every Run:ai role maps to one."""

    ADMIN = "admin"
    MEMBER = "member"
    VIEWER = "viewer"


LEVEL_RANK = {Level.VIEWER: 1, Level.MEMBER: 2, Level.ADMIN: 3}


class Role(models.Model):
    """A predefined Run:ai role (seeded by a migration, read-only through the API) and the level it grants."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    level = models.CharField(max_length=8, choices=Level.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.name


# The role a project member of each level gets when granted through the members API or page.
DEFAULT_ROLE_OF_LEVEL = {Level.ADMIN: "Editor", Level.MEMBER: "L1 researcher", Level.VIEWER: "Viewer"}  # as migration 0002
PLATFORM_ADMIN_ROLE = "System administrator"


class AccessRuleQuerySet(models.QuerySet):
    def of_subject(self, user):
        """Rules that apply to the user: as a user (or service account) subject, or through one of the user's
        groups (a user of the identity provider: the provider's groups at the last login)."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.of_user_id(user.pk)

    def of_user_id(self, user_id: int):
        groups = get_user_model()._meta.get_field("groups").related_model
        return self.filter(
            Q(subject_type__in=AccessRule.PERSONAL, user_id=user_id)
            | Q(subject_type=AccessRule.Subject.GROUP, subject_id__in=groups.objects.filter(user=user_id).values("name"))
        )

    def visible_to(self, user):
        """Platform admins see every rule; others their own rules and the rules on the projects they see (as
        the members of a project are shown to its viewers)."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        # A project the user sees (as `Project.objects.visible_to` selects it), read from the rules' side: any
        # project under a tenant-wide rule, the projects of a department under a department rule, a project
        # under a project rule.
        rules = AccessRule.objects.of_subject(user)
        seen_project = (Exists(rules.filter(scope_type__in=AccessRule.TENANT_WIDE))
                        | Q(project__department_id__in=rules.filter(scope_type=AccessRule.Scope.DEPARTMENT)
                            .values("department_id"))
                        | Q(project_id__in=rules.filter(scope_type=AccessRule.Scope.PROJECT).values("project_id")))
        return self.filter(Q(user_id=user.pk)
                           | Q(Q(scope_type=AccessRule.Scope.PROJECT, project__isnull=False) & seen_project))


class AccessRule(models.Model):
    """Subject (user / group / app) × role × scope (tenant / department / project …): how roles are granted.

    A tenant-scope rule covers everything, a department-scope rule its projects. The scope's row is also kept
    as a foreign key, so deleting a project or department deletes its rules and lookups are indexed joins."""

    class Subject(models.TextChoices):
        USER = "user"
        GROUP = "group"
        APP = "app"
        SERVICE_ACCOUNT = "service-account"

    class Scope(models.TextChoices):
        SYSTEM = "system"
        TENANT = "tenant"
        CLUSTER = "cluster"
        DEPARTMENT = "department"
        PROJECT = "project"

    TENANT_WIDE = (Scope.SYSTEM, Scope.TENANT)
    PERSONAL = (Subject.USER, Subject.SERVICE_ACCOUNT)  # subjects that are one row of the user table
    TENANT_ID = 1  # one tenant per installation

    subject_type = models.CharField(max_length=16, choices=Subject.choices)
    # a username, a group name, an app's or a service account's client id
    subject_id = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True,
                             related_name="access_rules")
    role = models.ForeignKey(Role, on_delete=models.PROTECT, related_name="access_rules")
    scope_type = models.CharField(max_length=12, choices=Scope.choices)
    scope_id = models.CharField(max_length=64)
    cluster = models.ForeignKey("studio.Cluster", on_delete=models.CASCADE, null=True, blank=True, related_name="access_rules")
    department = models.ForeignKey("studio.Department", on_delete=models.CASCADE, null=True, blank=True,
                                   related_name="access_rules")
    project = models.ForeignKey("studio.Project", on_delete=models.CASCADE, null=True, blank=True, related_name="access_rules")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AccessRuleQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["subject_type", "subject_id", "role", "scope_type", "scope_id"],
                                               name="one_access_rule_per_subject_role_scope")]
        indexes = [models.Index(fields=["subject_type", "subject_id"]), models.Index(fields=["scope_type", "scope_id"])]

    def __str__(self):
        return f"{self.subject_type} {self.subject_id}: {self.role} on {self.scope_type} {self.scope_id}"

    @property
    def scope_name(self) -> str:
        target = self.project or self.department or self.cluster
        return target.name if target is not None else "tenant"

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



class IdentityProvider(models.Model):
    class Type(models.TextChoices):
        OIDC = "oidc"

    alias = models.CharField(max_length=63, unique=True)
    type = models.CharField(max_length=16, choices=Type.choices, default=Type.OIDC)
    name = models.CharField(max_length=100, blank=True, default="")  # the login page's button, when set
    discovery_url = models.URLField(max_length=500)
    client_id = models.CharField(max_length=255)
    client_secret = EncryptedTextField()
    scopes = models.JSONField(default=list, blank=True)
    mandatory_claim = models.JSONField(null=True, blank=True)  # {"claim": ..., "values": [...]}
    mappers = models.JSONField(default=dict, blank=True)  # Run:ai's Mappers: claim names of groups, uid, gid, ...
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["alias"]

    def __str__(self):
        return self.alias


class ExternalIdentity(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="external_identity")
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    provider_alias = models.CharField(max_length=63)
    # The provider's groups at the last login: the user's Django groups among them are the provider's to
    # change (a group taken away there is taken away here); other groups of the user are left alone.
    groups = models.JSONField(default=list, blank=True)
    uid = models.BigIntegerField(null=True, blank=True)
    gid = models.BigIntegerField(null=True, blank=True)
    supplementary_groups = models.JSONField(default=list, blank=True)
    # The provider's refresh token, when it gives one: our refresh grant asks the provider again with it, so
    # that a user removed there (or from a group) loses access at the next refresh, not only the next login.
    refresh_token = EncryptedTextField(blank=True, default="")
    last_login_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="one_user_per_external_subject")]

    def __str__(self):
        return f"{self.provider_alias}:{self.subject}"


SERVICE_ACCOUNT_USERNAME = "service-account:{}"  # ':' is not in Django's username characters: no person has it


class ServiceAccount(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=63, unique=True)
    client_id = models.CharField(max_length=63, unique=True, editable=False)
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="service_account")
    secret_hash = models.CharField(max_length=256, editable=False)
    enabled = models.BooleanField(default=True)
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_login = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class TemporaryPassword(models.Model):
    """Present while the user's password is one an admin was shown (user_create, user_password_reset)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="temporary_password")
    set_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"temporary password of user {self.user_id}"


class CliDeviceAuthorization(models.Model):
    """One `studio login --sso`: the CLI holds the device code and polls; a signed-in user types (or follows) the
    user code in the portal and approves or denies. Neither code is stored, only their keyed digests."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        DENIED = "denied"
        USED = "used"  # its token was handed out: the device code gives nothing more

    device_code_digest = models.CharField(max_length=64, unique=True, editable=False)
    user_code_digest = models.CharField(max_length=64, unique=True, editable=False)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True,
                             related_name="cli_device_authorizations")  # who approved or denied
    client_name = models.CharField(max_length=100, blank=True, default="")  # what the CLI says it is
    client_address = models.GenericIPAddressField(null=True, blank=True)
    client_agent = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(db_index=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    interval = models.PositiveSmallIntegerField()  # seconds between polls; slow_down adds 5
    last_polled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"CLI sign-in from {self.client_address or 'an unknown address'}"
