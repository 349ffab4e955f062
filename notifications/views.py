"""Pages of the notifications app: the bell in the top bar (the user's unread notifications, marked read from it),
the notifications page, the user's own subscriptions and, for platform admins, the channels. Every write goes
through the services the API uses, so the same rules and errors apply."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import ValidationError

from notifications import selectors, services
from notifications.catalogue import TYPES
from notifications.models import Channel, State
from studio.errors import Conflict
from studio.models import Department, Project, is_platform_admin

BELL_SIZE = 8
PAGE_SIZE = 50


def _bell_context(user) -> dict:
    unread = selectors.notifications_of(user, unread=True)
    return {"unread": list(unread[:BELL_SIZE]), "count": unread.count()}


@login_required
def bell(request):
    """The bell: its button and unread count (?part=count: the count only, polled), or its menu (?part=menu)."""
    part = request.GET.get("part", "")
    if part == "count":
        return render(request, "notifications/_bell_count.html",
                      {"count": selectors.notifications_of(request.user, unread=True).count()})
    if part == "menu":
        return render(request, "notifications/_bell_menu.html", _bell_context(request.user))
    return render(request, "notifications/_bell.html",
                  {"count": selectors.notifications_of(request.user, unread=True).count()})


def _own(request, pk):
    notification = selectors.notifications_of(request.user).filter(pk=pk).first()
    if notification is None:
        raise Http404
    return notification


@login_required
@require_POST
def mark_read(request, pk):
    """Mark one of the user's notifications read; from the bell (htmx) its menu again, else back to the page."""
    services.notification_mark(notification=_own(request, pk), read=True)
    if request.htmx:
        return render(request, "notifications/_bell_menu.html", {**_bell_context(request.user), "oob": True})
    return HttpResponseRedirect(reverse("notifications"))


@login_required
@require_POST
def mark_all_read(request):
    for notification in selectors.notifications_of(request.user, unread=True):
        services.notification_mark(notification=notification, read=True)
    if request.htmx:
        return render(request, "notifications/_bell_menu.html", {**_bell_context(request.user), "oob": True})
    messages.success(request, "Every notification is marked read.")
    return HttpResponseRedirect(reverse("notifications"))


def _scope_choices(user) -> list[tuple[str, str]]:
    return ([("", "Every workload I may see")]
            + [(f"project:{pk}", f"Project {name}") for pk, name in
               Project.objects.visible_to(user).order_by("name").values_list("pk", "name")]
            + [(f"department:{pk}", f"Department {name}") for pk, name in
               Department.objects.visible_to(user).order_by("name").values_list("pk", "name")])


def _subscription_body(post) -> tuple[dict, dict]:
    """The services' arguments from the form, and the form's own errors (each named)."""
    errors: dict[str, list[str]] = {}
    events: dict[str, list[str]] = {}
    for value in post.getlist("events"):
        category, _, type_ = value.partition("|")
        events.setdefault(category, []).append(type_)
    if not events:
        errors["events"] = ["Choose at least one event."]
    scope = None
    raw_scope = post.get("scope", "")
    if raw_scope:
        kind, _, pk = raw_scope.partition(":")
        if kind in ("project", "department") and pk.isdigit():
            scope = {f"{kind}Id": int(pk)}
        else:
            errors["scope"] = [f"{raw_scope!r} is not a project or a department."]
    minutes = post.get("pending_minutes", "").strip()
    pending = None
    if minutes:
        if minutes.isdigit() and 1 <= int(minutes) <= 10080:
            pending = int(minutes)
        else:
            errors["pending_minutes"] = ["Minutes pending: a whole number from 1 to 10080 (a week)."]
    return {"events": [{"category": c, "types": t} for c, t in events.items()], "channels": post.getlist("channels"),
            "scope": scope, "pending_minutes": pending}, errors


def _problems(exc: ValidationError) -> dict:
    detail = exc.detail if isinstance(exc.detail, dict) else {"": exc.detail}
    return {field: [str(p) for p in (problems if isinstance(problems, list) else [problems])]
            for field, problems in detail.items()}


@login_required
def notifications_page(request):
    """The user's notifications, their subscriptions (a form to add one) and, for platform admins, the channels."""
    user = request.user
    admin = is_platform_admin(user)
    sub_errors: dict = {}
    channel_errors: dict = {}
    if request.method == "POST":
        form = request.POST.get("form")
        if form == "subscription":
            body, sub_errors = _subscription_body(request.POST)
            if not sub_errors:
                try:
                    services.subscription_create(user=user, **body)
                except ValidationError as exc:
                    sub_errors = _problems(exc)
                else:
                    messages.success(request, "Subscription added.")
                    return HttpResponseRedirect(reverse("notifications"))
        elif form == "state" and admin:
            services.state_update(actor=user, email={"enabled": request.POST.get("email_enabled") == "on"},
                                  slack={"enabled": request.POST.get("slack_enabled") == "on"})
            messages.success(request, "Channel types saved.")
            return HttpResponseRedirect(reverse("notifications"))
        elif form == "channel" and admin:
            channel_errors = _channel_create(request)
            if not channel_errors:
                messages.success(request, f"Channel {request.POST.get('name', '')} added.")
                return HttpResponseRedirect(reverse("notifications"))
        else:
            raise PermissionDenied
    notifications = list(selectors.notifications_of(user)[:PAGE_SIZE])
    subscriptions = list(selectors.subscriptions_of(user).select_related("project", "department"))
    channels = list(Channel.objects.order_by("name").values("name", "type"))
    return render(request, "notifications/page.html", {
        "notifications": notifications, "subscriptions": subscriptions, "channels": channels, "admin": admin,
        "types": TYPES, "scopes": _scope_choices(user), "sub_errors": sub_errors, "channel_errors": channel_errors,
        "posted": request.POST if request.method == "POST" else None,
        "channel_types": Channel.Type.choices,
        **_switches(admin),
    }, status=400 if sub_errors or channel_errors else 200)


def _switches(admin: bool) -> dict:
    """Run:ai's Notification State: whether e-mail and Slack channels send (platform admins set it)."""
    if not admin:
        return {}
    state = State.current()
    return {"email_on": services.type_enabled(state, "email"), "slack_on": services.type_enabled(state, "slack")}


def _channel_create(request) -> dict:
    name = request.POST.get("name", "").strip()
    kind = request.POST.get("type", "")
    errors: dict[str, list[str]] = {}
    if not name:
        errors["name"] = ["A channel needs a name."]
    if kind not in Channel.Type.values:
        errors["type"] = [f"Type: one of {', '.join(Channel.Type.values)}."]
    try:
        config = json.loads(request.POST.get("config") or "{}")
        if not isinstance(config, dict):
            raise ValueError
    except ValueError:
        errors["config"] = ["The configuration is a JSON object, e.g. {\"url\": \"https://…\", \"secret\": \"…\"}."]
        config = {}
    if errors:
        return errors
    try:
        services.channel_create(actor=request.user, name=name, kind=kind, config=config)
    except ValidationError as exc:
        return {k if k.startswith("config") else f"config.{k}" if k else "config": v
                for k, v in _problems(exc).items()}
    except Conflict as exc:
        return {"name": [str(exc.detail)]}
    return {}


@login_required
@require_POST
def subscription_delete(request, pk):
    subscription = selectors.subscriptions_of(request.user).filter(pk=pk).first()
    if subscription is None:
        raise Http404
    services.subscription_delete(user=request.user, subscription=subscription)
    messages.success(request, "Subscription deleted.")
    return HttpResponseRedirect(reverse("notifications"))


@login_required
@require_POST
def channel_delete(request, name):
    if not is_platform_admin(request.user):
        raise PermissionDenied
    channel = Channel.objects.filter(name=name).first()
    if channel is None:
        raise Http404
    services.channel_delete(actor=request.user, channel=channel)
    messages.success(request, f"Channel {name} deleted.")
    return HttpResponseRedirect(reverse("notifications"))
