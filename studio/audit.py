"""The audit trail: every create, update and delete through the API or the pages is recorded here, as an
`AuditEvent` row (app label `studio`; studio/models.py imports it so that Django registers it)."""

import re

from django.conf import settings
from django.db import models

from studio.logs import current_request_id


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


SECRET_FIELDS = {"token", "kubeconfig", "secret_hash", "password", "ca_cert", "client_secret", "refresh_token"}


def snapshot(instance: models.Model) -> dict:
    """The concrete field values of a row, secrets masked, as JSON-safe values."""
    values = {}
    for field in instance._meta.concrete_fields:
        value = getattr(instance, field.attname)
        if field.name in SECRET_FIELDS:
            value = "***" if value else ""
        elif not isinstance(value, (str, int, float, bool, type(None), list, dict)):
            value = str(value)
        values[field.name] = value
    return values


# Keys whose values are (or name where to find) credentials, in any JSON a row holds: specs, environment
# variables of Kit profiles, inputs and their defaults.
SECRET_LOOKING = re.compile(r"pass(word|wd|phrase)|token|secret|credential|key|cert", re.IGNORECASE)
MASK = "***"


def masked(value):
    """`value` with every value under a secret-looking key, and the value of every `{name, value}` entry
    whose name looks secret (or that is marked secret), replaced by "***"; for the audit trail only (ETags
    must still see every change)."""
    if isinstance(value, list):
        return [masked(item) for item in value]
    if not isinstance(value, dict):
        return value
    marked = any(SECRET_LOOKING.search(str(value.get(k) or "")) for k in ("name", "key")) \
        or value.get("secret") is True or value.get("type") == "secret" or value.get("sensitive") is True
    out = {}
    for key, item in value.items():
        hidden = (SECRET_LOOKING.search(str(key)) and not isinstance(item, bool)) or (
            marked and key in ("value", "default", "values"))
        out[key] = MASK if hidden and item not in (None, "", [], {}) else masked(item)
    return out


def diff(before: dict, after: dict) -> dict:
    return {k: [before.get(k), after.get(k)] for k in sorted(set(before) | set(after)) if before.get(k) != after.get(k)}


def audit_record(*, actor, action: str, instance: models.Model, before: dict | None = None,
                 extra: dict | None = None) -> AuditEvent:
    """Record `action` on `instance`; `before` is the snapshot taken before an update or delete, `extra`
    adds values that are not columns (e.g. many-to-many ids) to the snapshot after."""
    after = {} if action == AuditEvent.Action.DELETE else {**snapshot(instance), **(extra or {})}
    if action == AuditEvent.Action.CREATE:
        changes = {k: [None, v] for k, v in after.items()}
    elif action == AuditEvent.Action.DELETE:
        changes = {k: [v, None] for k, v in (before or {}).items()}
    else:
        changes = diff(before or {}, after)
    changes = {name: [MASK if v not in (None, "") else v for v in pair] if SECRET_LOOKING.search(name)
               else masked(pair) for name, pair in changes.items()}
    authenticated = actor is not None and getattr(actor, "is_authenticated", False)
    return AuditEvent.objects.create(
        actor=actor if authenticated else None,
        actor_name=actor.get_username() if authenticated else "system",
        action=action,
        object_type=instance._meta.label_lower,
        object_id=str((before or {}).get("id", instance.pk)),
        object_repr=str(instance)[:200],
        changes=changes,
        request_id=current_request_id() or "",
    )


def audit_values_record(*, actor, action: str, object_type: str, object_id: str, object_repr: str,
                        values: dict) -> AuditEvent:
    """Record `action` on something that is no row (a session into a container: its caller names the type):
    `values` as the changes from nothing to each value, masked as every row's are."""
    authenticated = actor is not None and getattr(actor, "is_authenticated", False)
    return AuditEvent.objects.create(
        actor=actor if authenticated else None, actor_name=actor.get_username() if authenticated else "system",
        action=action, object_type=object_type, object_id=object_id, object_repr=object_repr[:200],
        changes={name: [None, value] for name, value in masked(values).items()},
        request_id=current_request_id() or "")
