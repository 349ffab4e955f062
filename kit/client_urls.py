"""Client URLs: a base URL, `<origin>/kit-client/<token>`, that a Kit client which sends no token header (NVIDIA's
web-viewer-sample: Kit App Streaming leaves authentication to a gateway) takes as its app server and its stream
server. It reaches the Kit APIs only (`/cfg` to read, `/streaming` to run streams), in one project, acting for the
user who made it while that user may still launch there; it expires, and its maker, an admin of its project or a
platform admin revokes it. The token is shown once and kept as its SHA-256 digest; logs show it redacted.

What a credential gave ends with it: a client URL records what it was made with and stops when that goes — the
access key whose token made it (deleted), the maker's password (changed; a service account's new secret replaces
its user's password, so it counts the same), the maker (deactivated or deleted). `origin_problem` says which."""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.crypto import constant_time_compare, salted_hmac
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
DIGEST_SALT = "kit.client_urls.credential_digest"
Origin = ClientUrl.Origin


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


def credential_digest(user, secret: str | None = None) -> str:
    """A keyed digest of the user's password hash, which a new password (or a service account's new secret)
    changes; keyed, so that the column tells nothing of the hash."""
    return salted_hmac(DIGEST_SALT, user.password, secret=secret, algorithm="sha256").hexdigest()


def origin_problem(link: ClientUrl) -> str | None:
    """Why the credential the client URL was made with is gone (its access key, its maker's password or
    service account secret), or None. Reads the maker's row: load `created_by` with the link."""
    if link.origin == Origin.ACCESS_KEY and link.access_key_id is None:
        return "the access key it was made with was deleted"
    secrets_now = (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS)  # a rotated SECRET_KEY keeps it
    if not any(constant_time_compare(link.credential_digest, credential_digest(link.created_by, secret))
               for secret in secrets_now):
        changed = "service account's secret" if link.origin == Origin.SERVICE_ACCOUNT else "password"
        return f"its maker's {changed} changed after it was made"
    return None


def is_active(link: ClientUrl, now=None) -> bool:
    return link.revoked_at is None and link.expires_at > (now or timezone.now()) and origin_problem(link) is None


# --- writes --------------------------------------------------------------------------------------------

def client_url_create(*, user, project: Project, name: str, lifetime: timedelta = DEFAULT_LIFETIME,
                      origin: str = Origin.LOGIN, access_key_id=None) -> tuple[ClientUrl, str]:
    """(the client URL, its token: shown once). Only a member or admin of the project may make one. `origin` and
    `access_key_id` say what the request's credential was (studio.iam.auth.token_credential): the URL ends
    with it."""
    if not has_project_role(user, project, Level.MEMBER):
        raise errors.forbidden(errors.LAUNCH_FORBIDDEN)
    if not timedelta(minutes=1) <= lifetime <= MAX_LIFETIME:
        raise ValidationError({"expiresInSeconds": [f"Must be from 60 to {int(MAX_LIFETIME.total_seconds())}."]})
    token = PREFIX + secrets.token_urlsafe(32)
    if origin == Origin.ACCESS_KEY and access_key_id is None:
        raise ValueError("A client URL made with an access key names the key.")
    link = ClientUrl.objects.create(name=name, project=project, created_by=user, token_digest=digest(token),
                                    hint=token[: len(PREFIX) + 4], expires_at=timezone.now() + lifetime,
                                    origin=origin, access_key_id=access_key_id if origin == Origin.ACCESS_KEY else None,
                                    credential_digest=credential_digest(user))
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
        if link is None or not (link.revoked_at is None and link.expires_at > now):
            raise exceptions.AuthenticationFailed(INVALID)
        problem = origin_problem(link)
        if problem:
            raise exceptions.AuthenticationFailed(f"This client URL is not valid: {problem}.")
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
