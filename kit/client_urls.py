"""Client URLs: a base URL, `<origin>/kit-client/<token>`, that a Kit client which sends no token header (NVIDIA's
web-viewer-sample: Kit App Streaming leaves authentication to a gateway) takes as its app server and its stream
server. It reaches the Kit APIs only (`/cfg` to read, `/streaming` to run streams), in one project, acting for the
user who made it while that user may still launch there; it expires, and its maker, an admin of its project or a
platform admin revokes it. The token is shown once and kept as its SHA-256 digest; logs show it redacted."""

import hashlib
import secrets
from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import ValidationError

from kit import errors
from kit.models import ClientUrl
from studio.audit import audit_record, snapshot
from studio.iam.permissions import has_project_role, projects_with_level
from studio.models import AuditEvent, Level, Project, is_platform_admin

PREFIX = "kcu_"  # studio.logs redacts what follows it
PATH = "kit-client"
DEFAULT_LIFETIME = timedelta(days=7)
MAX_LIFETIME = timedelta(days=90)
USE_NOTED_EVERY = timedelta(minutes=1)
INVALID = "This client URL is not valid: it is unknown, has expired or was revoked."


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def base_url(request, token: str) -> str:
    """The client URL as a Kit client takes it: no trailing slash (the client appends `/cfg/apps`)."""
    return request.build_absolute_uri(f"/{PATH}/{token}")


# --- reads ---------------------------------------------------------------------------------------------

def client_urls_visible(*, user) -> QuerySet[ClientUrl]:
    """Platform admins see every client URL; others their own and those of the projects they administer."""
    rows = ClientUrl.objects.select_related("project", "created_by")
    if is_platform_admin(user):
        return rows
    return rows.filter(Q(created_by=user) | Q(project_id__in=projects_with_level(user, Level.ADMIN)))


def client_url_get(*, user, client_url_id) -> ClientUrl:
    found = client_urls_visible(user=user).filter(pk=client_url_id).first()
    if found is None:
        raise exceptions.NotFound("The requested client URL was not found.")
    return found


def is_active(link: ClientUrl, now=None) -> bool:
    return link.revoked_at is None and link.expires_at > (now or timezone.now())


# --- writes --------------------------------------------------------------------------------------------

def client_url_create(*, user, project: Project, name: str,
                      lifetime: timedelta = DEFAULT_LIFETIME) -> tuple[ClientUrl, str]:
    """(the client URL, its token: shown once). Only a member or admin of the project may make one."""
    if not has_project_role(user, project, Level.MEMBER):
        raise errors.forbidden(errors.LAUNCH_FORBIDDEN)
    if not timedelta(minutes=1) <= lifetime <= MAX_LIFETIME:
        raise ValidationError({"expiresInSeconds": [f"Must be from 60 to {int(MAX_LIFETIME.total_seconds())}."]})
    token = PREFIX + secrets.token_urlsafe(32)
    link = ClientUrl.objects.create(name=name, project=project, created_by=user, token_digest=digest(token),
                                    hint=token[: len(PREFIX) + 4], expires_at=timezone.now() + lifetime)
    audit_record(actor=user, action=AuditEvent.Action.CREATE, instance=link)
    return link, token


def client_url_revoke(*, user, link: ClientUrl) -> ClientUrl:
    if link.created_by_id != user.pk and not has_project_role(user, link.project_id, Level.ADMIN):
        raise exceptions.PermissionDenied("Only its maker or an admin of its project may revoke a client URL.")
    if link.revoked_at is None:
        before = snapshot(link)
        link.revoked_at = timezone.now()
        link.save(update_fields=["revoked_at"])
        audit_record(actor=user, action=AuditEvent.Action.UPDATE, instance=link, before=before)
    return link


# --- authentication ------------------------------------------------------------------------------------

class ClientUrlAuthentication(BaseAuthentication):
    """A request under `/kit-client/<token>/`: (the maker, the ClientUrl) while the URL is active and its maker may
    still launch in its project; any other token is a 401. Requests elsewhere are left to the other classes."""

    def authenticate(self, request):
        view = request.parser_context.get("view") if request.parser_context else None
        token = getattr(view, "client_token", None)
        if token is None:
            return None
        now = timezone.now()
        link = ClientUrl.objects.select_related("project", "created_by").filter(token_digest=digest(token)).first()
        if link is None or not is_active(link, now):
            raise exceptions.AuthenticationFailed(INVALID)
        user = link.created_by
        if not user.is_active or not has_project_role(user, link.project_id, Level.MEMBER):
            raise exceptions.AuthenticationFailed(
                f"This client URL's maker may no longer launch streams in project {link.project.name}.")
        if link.last_used_at is None or now - link.last_used_at >= USE_NOTED_EVERY:
            ClientUrl.objects.filter(pk=link.pk).update(last_used_at=now)
        return user, link

    def authenticate_header(self, request):
        return 'ClientUrl realm="kit"'


def client_url_of(request) -> ClientUrl | None:
    return request.auth if isinstance(getattr(request, "auth", None), ClientUrl) else None
