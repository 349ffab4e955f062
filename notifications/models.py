"""Notification channels (Run:ai's `email` and `slack`, and our `webhook`), the users' subscriptions, what each
user was told (the in-portal notifications, read or unread) and each delivery of it through a channel."""

import uuid

from django.conf import settings
from django.db import models

from studio.crypto import EncryptedTextField
from studio.models import Department, Project
from workloads.models import Workload


class Channel(models.Model):
    class Type(models.TextChoices):
        EMAIL = "email"
        SLACK = "slack"
        WEBHOOK = "webhook"

    name = models.CharField(max_length=63, unique=True)
    type = models.CharField(max_length=8, choices=Type.choices)
    config = models.JSONField(default=dict, blank=True, help_text="The configuration without its secrets.")
    # The secret fields of the configuration (password, apiToken, webhookUrl, secret) as JSON, encrypted at rest.
    secrets = EncryptedTextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class Subscription(models.Model):
    """Which events a user is told of, through which channels (by name), for which workloads: those of
    `project`, or of `department`, or (neither) every workload the user may see."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    events = models.JSONField(default=list, blank=True)  # [{"category": ..., "types": [...]}]
    channels = models.JSONField(default=list, blank=True)  # channel names
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    department = models.ForeignKey(Department, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    pending_minutes = models.PositiveIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"subscription of {self.user_id}"


class Notification(models.Model):
    """What a user was told, once (`key` names the event), shown in the portal until read."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    category = models.CharField(max_length=64)
    type = models.CharField(max_length=64)
    title = models.CharField(max_length=300)
    message = models.TextField(blank=True, default="")
    details = models.JSONField(default=dict, blank=True)  # what the channels send: names, ids, phase; no secret
    workload = models.ForeignKey(Workload, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="notification_once_per_user")]
        indexes = [models.Index(fields=["user", "read_at"])]

    def __str__(self):
        return self.title


class Delivery(models.Model):
    class State(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"

    notification = models.ForeignKey(Notification, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="+")
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")  # our own words: never a URL or a server's answer
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["notification", "channel"], name="delivery_once_per_channel")]

    def __str__(self):
        return f"{self.notification_id} via {self.channel_id}: {self.state}"


class State(models.Model):
    """Run:ai's Notification State: the tenant's switches per channel type (one row)."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    email_enabled = models.BooleanField(null=True, blank=True)
    slack_enabled = models.BooleanField(null=True, blank=True)
    slack_workspace_name = models.CharField(max_length=200, null=True, blank=True)

    def __str__(self):
        return "notification state"

    @classmethod
    def current(cls) -> "State":
        return cls.objects.get_or_create(pk=1)[0]
