"""Throttling of credential checks: `POST /api/v1/token` and `POST /login`, per client (its IP address) and per
account (the identity the request's grant checks: a username, a client id, a refresh token's user), so neither guessing one account from many addresses nor many
accounts from one address goes unbounded, and a flood cannot buy a password hash per request.

DRF's throttles (SimpleRateThrottle: a sliding window of request times kept in Django's cache) do the
counting; the cache is Redis when REDIS_URL is set, else a file cache under var/ that the processes of
`make run` share. The API answers 429 with Retry-After and the error body (studio/errors.py); the login page
answers 429 with its form and the same header. Rates: LOGIN_RATE_PER_CLIENT, LOGIN_RATE_PER_ACCOUNT."""

import hashlib

from rest_framework.throttling import SimpleRateThrottle
from rest_framework_simplejwt.exceptions import TokenBackendError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.state import token_backend

# A client id's spellings on `POST /api/v1/token`, in the order its serializer takes them (the first one given).
CLIENT_ID_FIELDS = ("clientId", "clientID", "appID", "AppId")
# The fields that name the identity each grant checks, on /api/v1/token (grantType) and /api/v2/token
# (grant_type). Only these count: a `username` beside a client id is not what the grant checks, and must not move
# its guesses to a fresh counter (security round 4, finding 6). The single sign-on grants check nothing of ours
# (the provider checks its code or ID token): the per-client counter alone bounds them.
ACCOUNT_FIELDS = {
    "grantType": {"password": ("username",), "client_credentials": CLIENT_ID_FIELDS, "app_token": CLIENT_ID_FIELDS,
                  "refresh_token": ("refreshToken",)},
    "grant_type": {"password": ("username",), "client_credentials": ("client_id",),
                   "refresh_token": ("refresh_token",)},
}
REFRESH_GRANT = "refresh_token"


class LoginClientThrottle(SimpleRateThrottle):
    scope = "login-client"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class LoginAccountThrottle(SimpleRateThrottle):
    scope = "login-account"

    def get_cache_key(self, request, view):
        account = account_of(request)
        if not account:
            return None  # nothing of ours to guess at: the per-client counter still counts it
        # A digest: any text the client sends makes a valid key for every cache backend (memcached refuses
        # spaces and control characters), and the accounts tried are not kept in the cache in clear.
        digest = hashlib.sha256(account.strip().lower().encode("utf-8", "surrogatepass")).hexdigest()
        return self.cache_format % {"scope": self.scope, "ident": digest}


def account_of(request) -> str:
    """The identity a credential check is about: the login form's username; on the token endpoints, the field
    the request's grant checks (a refresh token: its user)."""
    data = getattr(request, "data", None)  # a DRF request: the parsed body
    if data is None:
        return str(request.POST.get("username") or "")  # the login form
    if not hasattr(data, "get"):
        return ""
    for grant_field, grants in ACCOUNT_FIELDS.items():
        grant = data.get(grant_field)
        if isinstance(grant, str) and grant in grants:
            value = next((data.get(name) for name in grants[grant] if data.get(name)), None)
            if value is None:
                return ""
            return refresh_token_user(value) if grant == REFRESH_GRANT else str(value)
    return ""


def refresh_token_user(raw) -> str:
    """`user:<id>` of a refresh token we signed; "" for anything else (refused anyway, and never guessable)."""
    try:
        payload = token_backend.decode(str(raw), verify=True)
    except TokenBackendError:
        return ""
    user_id = payload.get(api_settings.USER_ID_CLAIM)
    return f"user:{user_id}" if user_id is not None else ""


LOGIN_THROTTLES = (LoginClientThrottle, LoginAccountThrottle)


def login_wait(request) -> float | None:
    """Seconds to wait when a login form post is over a rate (every throttle counts it), else None."""
    waits = []
    for throttle_class in LOGIN_THROTTLES:
        throttle = throttle_class()
        if not throttle.allow_request(request, None):
            waits.append(throttle.wait() or 1)
    return max(waits) if waits else None
