"""The token grants of single sign-on and refresh, for `/api/v1/token` (Run:ai's grantType spellings) and
`/api/v2/token` (OAuth2's):

- `refresh_token`: a refresh token we issued, used once, for a new access token and a new refresh token. For a
  user of the identity provider whose login gave us the provider's refresh token, the provider is asked again
  first: a user removed there is refused, and one removed from a group loses the group's roles at once.
- `exchange_token` (v1) / `authorization_code` (v2): an authorization code a CLI obtained from the provider for
  our client id (its browser login, with its own redirect URI), exchanged with our client secret.
- `external_token_exchange` (v1): an ID token the client obtained from the provider for our client id.

The last two log the user in as the portal's login does (created at the first, groups applied at each)."""

from django.contrib.auth import authenticate, get_user_model
from django.core.exceptions import SuspiciousOperation
from django.db import IntegrityError, transaction
from requests import RequestException
from rest_framework import exceptions
from rest_framework_simplejwt.exceptions import TokenError
from rest_framework_simplejwt.settings import api_settings
from rest_framework_simplejwt.token_blacklist.models import BlacklistedToken, OutstandingToken
from rest_framework_simplejwt.tokens import RefreshToken
from rest_framework_simplejwt.utils import aware_utcnow, datetime_from_epoch, get_md5_hash_password

from studio.iam.auth import StudioAccessToken, issue_token
from studio.iam.backends import LOCAL_LOGIN_OFF, local_login_enabled
from studio.iam.claims import ClaimProblem
from studio.iam.models import ExternalIdentity
from studio.iam.oidc import ProviderBackend
from studio.iam.providers import ProviderError
from studio.iam.sso_services import external_login, identity_forget_session


class GrantRefused(Exception):
    """A grant that gives no token: `error` is OAuth2's code, `status` the HTTP status, the message why."""

    def __init__(self, message: str, *, error: str = "invalid_grant", status: int = 401):
        super().__init__(message)
        self.error, self.status = error, status


class StudioRefreshToken(RefreshToken):  # recorded as outstanding, blacklisted when used
    access_token_class = StudioAccessToken


def issue_tokens(*, user, refresh: bool = True) -> dict:
    """An access token and, unless `refresh` is off, a refresh token (Run:ai's TokenResponse)."""
    tokens = issue_token(user=user)
    if refresh:
        tokens["refreshToken"] = str(StudioRefreshToken.for_user(user))
    return tokens


def grant_password(*, username: str, password: str) -> dict:
    """A local user's token, and a refresh token (`refresh_token` grant). Local login off: a ValidationError."""
    if not local_login_enabled():
        raise exceptions.ValidationError({"grantType": [LOCAL_LOGIN_OFF]})
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        raise exceptions.AuthenticationFailed("Invalid username or password.")
    return issue_tokens(user=user)


def _backend() -> ProviderBackend:
    backend = ProviderBackend()
    try:
        configured = backend.configure()
    except ProviderError as exc:
        raise GrantRefused(str(exc), error="temporarily_unavailable", status=503) from None
    if not configured:
        raise GrantRefused("No identity provider is configured here.", error="unsupported_grant_type", status=400)
    return backend


def _login(backend: ProviderBackend, token_info: dict):
    id_token = token_info.get("id_token")
    try:
        payload = backend.verify_token(id_token)
        claims = backend.get_userinfo(token_info.get("access_token"), id_token, payload)
        return external_login(provider=backend.provider, issuer=backend.document["issuer"], claims=claims,
                              refresh_token=token_info.get("refresh_token") or "")
    except (SuspiciousOperation, ClaimProblem) as exc:
        raise GrantRefused(str(exc)) from None


def grant_authorization_code(*, code: str, redirect_uri: str, code_verifier: str = "") -> dict:
    backend = _backend()
    try:
        token_info = backend.exchange_code(code=code, redirect_uri=redirect_uri, code_verifier=code_verifier)
    except RequestException as exc:
        response = getattr(exc, "response", None)
        if response is not None and 400 <= response.status_code < 500:
            raise GrantRefused("The identity provider refused the code (used already, expired, or issued for "
                               "another redirect URI).") from None
        raise GrantRefused("The identity provider could not be reached.", error="temporarily_unavailable",
                           status=503) from None
    return issue_tokens(user=_login(backend, token_info))


def grant_external_token(*, external_token: str) -> dict:
    backend = _backend()
    try:
        return issue_tokens(user=_login(backend, {"id_token": external_token}))
    except RequestException:
        raise GrantRefused("The identity provider could not be reached.", error="temporarily_unavailable",
                           status=503) from None


def _use_once(token: StudioRefreshToken) -> None:
    """Blacklist the refresh token; a second use (or two at once) is refused."""
    outstanding, _ = OutstandingToken.objects.get_or_create(
        jti=token[api_settings.JTI_CLAIM],
        defaults={"token": str(token), "expires_at": datetime_from_epoch(token["exp"]), "created_at": aware_utcnow(),
                  "user_id": token.get(api_settings.USER_ID_CLAIM)})
    try:
        with transaction.atomic():
            BlacklistedToken.objects.create(token=outstanding)
    except IntegrityError:
        raise GrantRefused("This refresh token was used already.") from None


def grant_refresh(*, refresh_token: str) -> dict:
    try:
        token = StudioRefreshToken(refresh_token)
    except TokenError:
        raise GrantRefused("The refresh token is not valid: expired, revoked, used already or not ours.") from None
    user = get_user_model().objects.filter(**{api_settings.USER_ID_FIELD: token.get(api_settings.USER_ID_CLAIM)}).first()
    if user is None or not user.is_active or (
            api_settings.CHECK_REVOKE_TOKEN
            and token.get(api_settings.REVOKE_TOKEN_CLAIM) != get_md5_hash_password(user.password)):
        raise GrantRefused("The refresh token's user is gone, deactivated or has changed password.")
    _use_once(token)
    link = ExternalIdentity.objects.filter(user=user).first()
    if link is not None and link.refresh_token:
        backend = _backend()
        try:
            token_info = backend.refresh(link.refresh_token)
        except RequestException as exc:
            response = getattr(exc, "response", None)
            if response is None or response.status_code >= 500:
                raise GrantRefused("The identity provider could not be reached.", error="temporarily_unavailable",
                                   status=503) from None
            identity_forget_session(user)
            raise GrantRefused("The identity provider no longer accepts this session: log in again.") from None
        if not token_info.get("refresh_token"):
            token_info["refresh_token"] = link.refresh_token
        user = _login(backend, token_info)
    return issue_tokens(user=user)
