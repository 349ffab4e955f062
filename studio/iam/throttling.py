"""Throttling of credential checks: `POST /api/v1/token` and `POST /login`, per client (its IP address) and per
account (the username or client id tried), so neither guessing one account from many addresses nor many
accounts from one address goes unbounded, and a flood cannot buy a password hash per request.

DRF's throttles (SimpleRateThrottle: a sliding window of request times kept in Django's cache) do the
counting; the cache is Redis when REDIS_URL is set, else a file cache under var/ that the processes of
`make run` share. The API answers 429 with Retry-After and the error body (studio/errors.py); the login page
answers 429 with its form and the same header. Rates: LOGIN_RATE_PER_CLIENT, LOGIN_RATE_PER_ACCOUNT."""

import hashlib

from rest_framework.throttling import SimpleRateThrottle

# Where a token request names its account, in every spelling the token endpoint accepts.
ACCOUNT_FIELDS = ("username", "clientId", "clientID", "appID", "AppId", "client_id")


class LoginClientThrottle(SimpleRateThrottle):
    scope = "login-client"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class LoginAccountThrottle(SimpleRateThrottle):
    scope = "login-account"

    def get_cache_key(self, request, view):
        account = account_of(request)
        if not account:
            return None  # nothing to guess at: the request is refused as invalid anyway
        # A digest: any text the client sends makes a valid key for every cache backend (memcached refuses
        # spaces and control characters), and the accounts tried are not kept in the cache in clear.
        digest = hashlib.sha256(account.strip().lower().encode("utf-8", "surrogatepass")).hexdigest()
        return self.cache_format % {"scope": self.scope, "ident": digest}


def account_of(request) -> str:
    data = getattr(request, "data", None)  # a DRF request: the parsed JSON body
    if data is None:
        data = request.POST  # the login form
    if not hasattr(data, "get"):
        return ""
    return next((str(data.get(name)) for name in ACCOUNT_FIELDS if data.get(name)), "")


LOGIN_THROTTLES = (LoginClientThrottle, LoginAccountThrottle)


def login_wait(request) -> float | None:
    """Seconds to wait when a login form post is over a rate (every throttle counts it), else None."""
    waits = []
    for throttle_class in LOGIN_THROTTLES:
        throttle = throttle_class()
        if not throttle.allow_request(request, None):
            waits.append(throttle.wait() or 1)
    return max(waits) if waits else None
