"""Bearer tokens (signed, expiring, revocable JWTs from djangorestframework-simplejwt) and access keys.

`POST /api/v1/token` grants: `client_credentials` (an access key's or a service account's clientId +
clientSecret); `password` (with a refresh token), single sign-on's and `refresh_token` are studio/iam/tokens.py's. A
token names its access key (`akid`), so deleting the key revokes its tokens; `POST /api/v1/token/revoke`
blacklists the presented token."""

import uuid
from functools import lru_cache

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, make_password
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef
from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import InvalidToken, TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken
from rest_framework_simplejwt.tokens import AccessToken, BlacklistMixin
from rest_framework_simplejwt.utils import aware_utcnow, get_md5_hash_password

from perf import keyed_rows
from studio.iam.models import AccessKey
from studio.iam.passwords import SESSION_KEY, TemporaryPassword, refuse_if_temporary

ISSUER_UNFAMILIAR = "Issuer is not familiar."


class StudioAccessToken(BlacklistMixin, AccessToken):
    """An access token that is recorded as outstanding and can be blacklisted (revoked)."""


class SessionAuthentication(authentication.SessionAuthentication):
    """DRF's session authentication (the portal's own API calls), with the same refusal of a temporary password
    (the session says so since login: studio.iam.passwords)."""

    def authenticate(self, request):
        result = super().authenticate(request)
        if result is not None:
            refuse_if_temporary(request, bool(request._request.session.get(SESSION_KEY)))
        return result


class UnfamiliarIssuer(exceptions.AuthenticationFailed):
    default_detail = ISSUER_UNFAMILIAR


class _SignedToken(StudioAccessToken):
    """Signature, expiry and type verified; the blacklist is read by BearerTokenAuthentication.get_user, in the
    query that reads the user (one query a request where there were two or three)."""

    def check_blacklist(self) -> None:
        pass


class BearerTokenAuthentication(JWTAuthentication):
    www_authenticate_realm = "api"

    def authenticate(self, request):
        """simplejwt's, then a temporary password refused (403 naming why) outside the password change."""
        result = super().authenticate(request)
        if result is not None:
            refuse_if_temporary(request, getattr(result[0], "_temporary", False))
        return result

    def get_validated_token(self, raw_token):
        try:
            token = _verified(raw_token)
            token.check_exp(current_time=aware_utcnow())  # the one check that moves with the clock
        except (TokenError, InvalidToken) as exc:
            raise UnfamiliarIssuer() from exc
        return token

    def get_user(self, validated_token):
        """The token's user, in one query that also says whether the token is blacklisted and whether its access
        key (`akid`) still exists; then simplejwt's checks (active user, password unchanged)."""
        user_id, jti = validated_token.get(api_settings.USER_ID_CLAIM), validated_token.get(api_settings.JTI_CLAIM)
        if user_id is None or jti is None:
            raise UnfamiliarIssuer()
        access_key_id = validated_token.get("akid")
        try:
            user_id = self.user_model._meta.get_field(api_settings.USER_ID_FIELD).to_python(user_id)
            key_id = uuid.UUID(str(access_key_id)) if access_key_id else None
        except (ValidationError, ValueError, TypeError):  # a claim of the wrong shape (our signature: never)
            raise UnfamiliarIssuer() from None
        # compiled once (perf.keyed_rows): compiling it cost 0.35 ms of a cached list's 2.5 on every request
        user = next(iter(keyed_rows.instances_once_compiled(_token_user, user_id=user_id, jti=str(jti),
                                                            key_id=key_id)), None)
        if user is None or user._token_revoked or (access_key_id and not user._key_exists):
            raise UnfamiliarIssuer()
        if api_settings.CHECK_USER_IS_ACTIVE and not user.is_active:
            raise UnfamiliarIssuer()
        if api_settings.CHECK_REVOKE_TOKEN and (
                validated_token.get(api_settings.REVOKE_TOKEN_CLAIM) != get_md5_hash_password(user.password)):
            raise UnfamiliarIssuer()
        return user


@lru_cache(maxsize=4096)
def _verified(raw_token: bytes) -> _SignedToken:
    """The token with its signature, type and claims verified, kept per process for its next requests (a client
    sends the same token until it expires): verifying cost ~50 µs of CPU on every API request. Only the expiry is
    checked again (get_validated_token); a refusal is not kept (an exception); what revokes a token (the blacklist,
    its access key, a password change, a disabled user) is read with the user on every request (get_user)."""
    return _SignedToken(raw_token)


def _token_user(user_id: int, jti: str, key_id: uuid.UUID | None):
    """The token's user, with whether the token is blacklisted, whether its access key (if any) is still the
    user's, and whether the user must change a temporary password: one query."""
    users = get_user_model()
    return users.objects.filter(**{api_settings.USER_ID_FIELD: user_id}).annotate(
        _token_revoked=Exists(BlacklistedToken.objects.filter(token__jti=jti)),
        _key_exists=Exists(AccessKey.objects.filter(pk=key_id, user=OuterRef("pk"))),
        _temporary=Exists(TemporaryPassword.objects.filter(user=OuterRef("pk"))))


CLIENT_CLAIM = "client"  # "access-key" or "service-account": the token came from a client's id and secret


def issue_token(*, user, access_key: AccessKey | None = None, client: str | None = None) -> dict:
    token = StudioAccessToken.for_user(user)
    if access_key is not None:
        token["akid"] = str(access_key.id)
        client = "access-key"
    if client:
        token[CLIENT_CLAIM] = client
    return {
        "accessToken": str(token),
        "tokenType": "Bearer",
        "expiresIn": int(token.lifetime.total_seconds()),
    }


def grant_client_credentials(*, client_id: str, client_secret: str) -> dict:
    """An access key's client id and secret, or a service account's (studio.iam.models.ServiceAccount)."""
    key = AccessKey.objects.select_related("user").filter(client_id=client_id).first()
    if key is None:
        return _grant_service_account(client_id=client_id, client_secret=client_secret)
    if not key.user.is_active or not key.check_secret(client_secret):
        raise exceptions.AuthenticationFailed("Invalid client credentials.")
    AccessKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    return issue_token(user=key.user, access_key=key)


def _grant_service_account(*, client_id: str, client_secret: str) -> dict:
    from studio.iam.models import ServiceAccount

    account = ServiceAccount.objects.select_related("user").filter(client_id=client_id).first()
    if account is None:
        # Hash anyway, as a known client's check does: an unknown client id must not answer faster (as Django's
        # ModelBackend does for an unknown username).
        make_password(client_secret)
    if account is None or not account.enabled or not account.user.is_active \
            or not check_password(client_secret, account.secret_hash):
        raise exceptions.AuthenticationFailed("Invalid client credentials.")
    ServiceAccount.objects.filter(pk=account.pk).update(last_login=timezone.now())
    return issue_token(user=account.user, client="service-account")


def token_credential(token) -> tuple[str, str | None]:
    """What a request's token was got with, for what it makes to end with that credential: ("access-key", the
    key's id), ("service-account", None), or ("login", None) for the user's own login (a password or single
    sign-on token; no token at all is the portal's session)."""
    if token is None or not hasattr(token, "get"):
        return "login", None
    if token.get("akid"):
        return "access-key", str(token["akid"])
    if token.get(CLIENT_CLAIM) == "service-account":
        return "service-account", None
    return "login", None


def from_client_credentials(token) -> bool:
    """Whether a request's validated token came from an access key's or a service account's id and secret."""
    return token is not None and hasattr(token, "get") and bool(token.get("akid") or token.get(CLIENT_CLAIM))


def revoke(raw_token: str) -> None:
    StudioAccessToken(raw_token).blacklist()
