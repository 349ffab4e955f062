"""Writes of the notifications app: channels, the tenant's state, subscriptions, and the fan-out of an event to
the users subscribed to it (an in-portal notification each, once, and a delivery per channel, sent by a task)."""

import json
import logging
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from notifications import senders
from notifications.catalogue import KIT, events_errors, subscribed
from notifications.channel_config import validated
from notifications.models import Channel, Delivery, Notification, State, Subscription
from studio.errors import Conflict
from studio.models import Department, Project
from studio.queue import enqueue_on_commit
from studio.services import model_create, model_delete, model_update

log = logging.getLogger(__name__)
ENABLED_BY_DEFAULT = True  # a channel type whose switch was never set sends


# --- channels -----------------------------------------------------------------------------------------------

def _secrets_of(channel: Channel) -> dict:
    return json.loads(channel.secrets) if channel.secrets else {}


def channel_secrets(channel: Channel) -> dict:
    return _secrets_of(channel)


def channel_create(*, actor, name: str, kind: str, config: dict) -> Channel:
    values, secrets = validated(kind, config)
    if Channel.objects.filter(name=name).exists():
        raise Conflict(f"A notification channel named {name!r} exists.")
    try:
        with transaction.atomic():
            return model_create(Channel, actor=actor, name=name, type=kind, config=values,
                                secrets=json.dumps(secrets) if secrets else "")
    except IntegrityError:
        raise Conflict(f"A notification channel named {name!r} exists.") from None


def channel_update(*, actor, channel: Channel, kind: str | None, config: dict | None, merge: bool) -> Channel:
    """PUT (`merge` False: `config` replaces the stored one) or PATCH (merged onto it). A secret the body leaves
    out is kept: answers never show secrets, so a client that writes back what it read must not erase them."""
    kind = kind or channel.type
    stored = {**channel.config, **_secrets_of(channel)} if kind == channel.type else {}
    given = config if config is not None else {}
    kept_secrets = {k: v for k, v in _secrets_of(channel).items() if k not in given} if kind == channel.type else {}
    body = {**stored, **given} if merge else {**kept_secrets, **given}
    values, secrets = validated(kind, body)
    return model_update(channel, actor=actor, type=kind, config=values,
                        secrets=json.dumps(secrets) if secrets else "")


def channel_delete(*, actor, channel: Channel) -> None:
    model_delete(channel, actor=actor)


def channel_valid(*, kind: str, config: dict) -> bool:
    """validate-notification-channel: the configuration is well formed (else a 400 naming each field), its
    addresses pass the rules, and for e-mail the SMTP server answers and takes the login."""
    values, secrets = validated(kind, config)
    if kind == Channel.Type.EMAIL:
        return senders.smtp_reachable(values, secrets)
    return True


# --- the tenant's state -------------------------------------------------------------------------------------

def state_update(*, actor, email: dict | None, slack: dict | None) -> State:
    state = State.current()
    fields = {}
    if email is not None and "enabled" in email:
        fields["email_enabled"] = email["enabled"]
    if slack is not None:
        if "enabled" in slack:
            fields["slack_enabled"] = slack["enabled"]
        if "workspaceName" in slack:
            fields["slack_workspace_name"] = slack["workspaceName"]
    return model_update(state, actor=actor, **fields) if fields else state


def type_enabled(state: State, kind: str) -> bool:
    switch = {"email": state.email_enabled, "slack": state.slack_enabled}.get(kind)
    return ENABLED_BY_DEFAULT if switch is None else switch


# --- subscriptions ------------------------------------------------------------------------------------------

def _subscription_fields(*, user, events: list, channels: list, scope: dict | None,
                         pending_minutes: int | None) -> dict:
    errors = {field: [message] for field, message in events_errors(events)}
    known = set(Channel.objects.filter(name__in=channels).values_list("name", flat=True))
    for i, name in enumerate(channels):
        if name not in known:
            errors[f"channels[{i}]"] = [f"No notification channel is named {name!r}."]
    project = department = None
    scope = scope or {}
    if scope.get("projectId") is not None:
        project = Project.objects.visible_to(user).filter(pk=scope["projectId"]).first()
        if project is None:
            errors["scope.projectId"] = ["No project you may see has this id."]
    if scope.get("departmentId") is not None:
        department = Department.objects.visible_to(user).filter(pk=scope["departmentId"]).first()
        if department is None:
            errors["scope.departmentId"] = ["No department you may see has this id."]
    if errors:
        raise ValidationError(errors)
    return {"events": events, "channels": list(dict.fromkeys(channels)), "project": project,
            "department": department, "pending_minutes": pending_minutes}


def subscription_create(*, user, events: list, channels: list, scope: dict | None = None,
                        pending_minutes: int | None = None) -> Subscription:
    fields = _subscription_fields(user=user, events=events, channels=channels, scope=scope,
                                  pending_minutes=pending_minutes)
    return model_create(Subscription, actor=user, user=user, **fields)


def subscription_update(*, user, subscription: Subscription, events: list, channels: list,
                        scope: dict | None = None, pending_minutes: int | None = None) -> Subscription:
    fields = _subscription_fields(user=user, events=events, channels=channels, scope=scope,
                                  pending_minutes=pending_minutes)
    return model_update(subscription, actor=user, **fields)


def subscription_delete(*, user, subscription: Subscription) -> None:
    model_delete(subscription, actor=user)


# --- in-portal notifications --------------------------------------------------------------------------------

def notification_mark(*, notification: Notification, read: bool) -> Notification:
    notification.read_at = (notification.read_at or timezone.now()) if read else None
    Notification.objects.filter(pk=notification.pk).update(read_at=notification.read_at)
    return notification


# --- the fan-out --------------------------------------------------------------------------------------------

def in_scope(subscription: Subscription, project: Project) -> bool:
    if subscription.project_id is not None and subscription.project_id != project.pk:
        return False
    return subscription.department_id is None or subscription.department_id == project.department_id


def subscribers(*, category: str, type_: str, project: Project) -> dict:
    """user -> the channel names of their subscriptions to (category, type) whose scope holds `project`, for the
    users who may see the project."""
    found: dict = {}
    for subscription in Subscription.objects.filter(user__is_active=True).select_related("user"):
        if subscribed(subscription.events, category, type_) and in_scope(subscription, project):
            found.setdefault(subscription.user, set()).update(subscription.channels)
    return may_see(found, project)


def may_see(users: dict, project: Project) -> dict:
    """`users` (user -> channel names) less those who may not see the project."""
    return {user: names for user, names in users.items()
            if Project.objects.visible_to(user).filter(pk=project.pk).exists()}


def notify(*, users: dict, key: str, category: str, type_: str, title: str, message: str, details: dict,
           project: Project, workload_id=None) -> list[Notification]:
    """One notification per user (none where `key` was told already), a delivery per enabled channel of theirs,
    each sent by the deliver task once this commits."""
    made = []
    state = State.current()
    channels = {c.name: c for c in Channel.objects.all()}
    with transaction.atomic():
        for user, names in users.items():
            notification, created = Notification.objects.get_or_create(
                user=user, key=key[:200], defaults={"category": category, "type": type_, "title": title[:300],
                                                    "message": message, "details": details, "project": project,
                                                    "workload_id": workload_id})
            if not created:
                continue
            made.append(notification)
            for name in sorted(names):
                channel = channels.get(name)
                if channel is not None and type_enabled(state, channel.type):
                    delivery = Delivery.objects.create(notification=notification, channel=channel)
                    enqueue_on_commit("notifications.tasks.deliver", delivery.pk)
    return made


def workload_details(workload, *, category: str, type_: str, message: str, at: datetime) -> dict:
    """What the channels send of a workload: names, ids and its phase; never its spec (environment values,
    credentials)."""
    return {"category": category, "type": type_, "createdAt": at.isoformat(), "workload": {
        "id": str(workload.pk), "name": workload.name, "type": workload.kind, "projectId": str(workload.project_id),
        "projectName": workload.project.name, "clusterId": str(workload.cluster_id),
        "clusterName": workload.cluster.name, "phase": workload.actual_phase, "phaseMessage": message[:1000]}}


def workload_event_notify(*, workload, category: str, type_: str, message: str, at: datetime,
                          users: dict | None = None) -> list[Notification]:
    users = users if users is not None else subscribers(category=category, type_=type_, project=workload.project)
    if not users:
        return []
    title = f"{workload.name}: {type_}"
    return notify(users=users, key=f"workload:{workload.pk}:{type_}:{at.isoformat()}", category=category,
                  type_=type_, title=title, message=message[:1000], project=workload.project,
                  workload_id=workload.pk, details=workload_details(workload, category=category, type_=type_,
                                                                    message=message, at=at))


def stream_notify(*, session, type_: str, message: str) -> list[Notification]:
    users = subscribers(category=KIT, type_=type_, project=session.project)
    if not users:
        return []
    at = session.ended_at or timezone.now()
    details = {"category": KIT, "type": type_, "createdAt": at.isoformat(), "stream": {
        "id": str(session.pk), "application": session.application, "profile": session.profile,
        "projectId": str(session.project_id), "projectName": session.project.name}}
    return notify(users=users, key=f"stream:{session.pk}:{type_}", category=KIT, type_=type_,
                  title=f"Kit stream {session.application}: {type_}", message=message[:1000], details=details,
                  project=session.project)


# --- delivery -----------------------------------------------------------------------------------------------

def payload(notification: Notification) -> dict:
    return {"id": str(notification.pk), "title": notification.title, "message": notification.message,
            **notification.details}


def delivery_send(delivery_id: int, *, last_try: bool) -> None:
    """Send one delivery unless sent. `senders.Failed` is raised again for the task to retry (its error kept on
    the row, and the row failed on the last try); `senders.Refused` fails the row at once."""
    delivery = Delivery.objects.select_related("notification__user", "channel").filter(pk=delivery_id).first()
    if delivery is None or delivery.state != Delivery.State.PENDING:
        return
    channel, notification = delivery.channel, delivery.notification
    config, secrets = channel.config, _secrets_of(channel)
    attempts = delivery.attempts + 1
    try:
        body = payload(notification)
        if channel.type == Channel.Type.EMAIL:
            direct = config.get("directNotifications") is not False and notification.user.email
            to = list(dict.fromkeys([*([notification.user.email] if direct else []), *config.get("recipients", [])]))
            senders.send_email(config, secrets, body, to=to)
        elif channel.type == Channel.Type.SLACK:
            senders.send_slack(config, secrets, body, direct_to=notification.user.email or "")
        else:
            senders.send_webhook(config, secrets, body)
    except senders.Refused as exc:
        _delivery_end(delivery, attempts, Delivery.State.FAILED, str(exc))
        log.warning("notification %s not sent through channel %s: %s", notification.pk, channel.name, exc)
        return
    except senders.Failed as exc:
        _delivery_end(delivery, attempts, Delivery.State.FAILED if last_try else Delivery.State.PENDING, str(exc))
        log.warning("notification %s not sent through channel %s (try %d): %s", notification.pk, channel.name,
                    attempts, exc)
        raise
    _delivery_end(delivery, attempts, Delivery.State.SENT, "")


def _delivery_end(delivery: Delivery, attempts: int, state: str, error: str) -> None:
    Delivery.objects.filter(pk=delivery.pk).update(attempts=attempts, state=state, error=error[:1000],
                                                   sent_at=timezone.now() if state == Delivery.State.SENT else None)
