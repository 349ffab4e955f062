"""Temporary passwords: a local user created by an admin, or whose password an admin reset, gets a temporary
password and must choose her own before anything else. The portal sends her to the password page; the API answers
403 naming why (except the password change itself, and the token endpoints that let her call it)."""

from django.conf import settings
from django.http import HttpResponseRedirect
from django.urls import reverse
from rest_framework.exceptions import PermissionDenied

from studio.iam.models import TemporaryPassword

SESSION_KEY = "password_temporary"
MUST_CHANGE = ("Your password is temporary: choose your own first (POST /api/v1/me/password with currentPassword "
               "and newPassword, or Account › Password in the portal), then get a new token.")


def mark_temporary(user) -> None:
    TemporaryPassword.objects.update_or_create(user=user)


def clear_temporary(user) -> None:
    TemporaryPassword.objects.filter(user=user).delete()


def is_temporary(user) -> bool:
    return bool(user and user.pk) and TemporaryPassword.objects.filter(user_id=user.pk).exists()


class PasswordChangeRequired(PermissionDenied):
    default_detail = MUST_CHANGE
    default_code = "password_change_required"


def _allowed_api_paths() -> set[str]:
    return {reverse("me-password")}


def refuse_if_temporary(request, temporary: bool) -> None:
    """The API's check, called by its authentication once the user is known (no query of its own)."""
    if temporary and request.path not in _allowed_api_paths():
        raise PasswordChangeRequired()


def remember_at_login(sender, request, user, **kwargs) -> None:
    """user_logged_in: the session says whether the password is temporary (read once, not on every page)."""
    if request is not None and hasattr(request, "session"):
        if is_temporary(user):
            request.session[SESSION_KEY] = True
        else:
            request.session.pop(SESSION_KEY, None)


class TemporaryPasswordMiddleware:
    """A portal page asked with a temporary password: the password page instead (htmx: HX-Redirect)."""

    OPEN = ("/account/password", "/logout", "/static/", "/favicon")
    API = ("/api/", "/cfg", "/streaming", "/kit-client/", "/v1/k8s/", "/metrics", "/healthz", "/readyz")

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # Portal pages only, and only with a well-formed session key: the APIs never load the session here, and a
        # malformed cookie (a NUL byte fails PostgreSQL's query) must reach the usual handling, not fail here.
        key = request.COOKIES.get(settings.SESSION_COOKIE_NAME, "")
        if request.path.startswith(self.API) or request.path.startswith(self.OPEN) or not key.isascii() \
                or not key.isalnum():
            return self.get_response(request)
        session = getattr(request, "session", None)
        if session is not None and session.get(SESSION_KEY) and request.user.is_authenticated:
            if not is_temporary(request.user):  # changed elsewhere (the API): stop asking
                session.pop(SESSION_KEY, None)
            else:
                target = reverse("account-password")
                response = HttpResponseRedirect(target)
                if request.headers.get("HX-Request") == "true":
                    response["HX-Redirect"] = target
                return response
        return self.get_response(request)
