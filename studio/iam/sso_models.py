"""Rows of single sign-on and service accounts (app label `studio`: studio/models.py imports them).

- `IdentityProvider`: the organisation's OpenID Connect provider as Run:ai's `POST /api/v1/idps` sets it. Its
  client secret is encrypted at rest (studio.crypto) and never answered.
- `ExternalIdentity`: what the provider said of a user at the last login (subject, groups, uid/gid); a user who
  has one is not local (`isLocal: false`).
- `ServiceAccount`: a non-personal identity for automation (CI), with a client id and a secret shown once and
  stored hashed. It acts through a user row of its own, never able to log in with a password, so that access
  rules, visibility and the workloads it submits work as they do for a person.
"""

import uuid

from django.conf import settings
from django.db import models

from studio.crypto import EncryptedTextField


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
