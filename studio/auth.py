"""Bearer tokens (signed, expiring, revocable JWTs from djangorestframework-simplejwt) and access keys.

`POST /api/v1/token` grants: `password` (username + password) and `client_credentials` (an access key's
clientId + clientSecret). A token names its access key (`akid`), so deleting the key revokes its tokens;
`POST /api/v1/token/revoke` blacklists the presented token."""

from django.contrib.auth import authenticate
from django.contrib.auth.hashers import make_password
from django.utils import timezone
from rest_framework import exceptions
from rest_framework_simplejwt.authentication import JWTAuthentication
from rest_framework_simplejwt.exceptions import InvalidToken, TokenError
from rest_framework_simplejwt.tokens import AccessToken, BlacklistMixin

from studio.models import AccessKey

ISSUER_UNFAMILIAR = "Issuer is not familiar."


class StudioAccessToken(BlacklistMixin, AccessToken):
    """An access token that is recorded as outstanding and can be blacklisted (revoked)."""


class UnfamiliarIssuer(exceptions.AuthenticationFailed):
    default_detail = ISSUER_UNFAMILIAR


class BearerTokenAuthentication(JWTAuthentication):
    www_authenticate_realm = "api"

    def get_validated_token(self, raw_token):
        try:
            token = StudioAccessToken(raw_token)  # verifies signature, expiry and the blacklist
        except (TokenError, InvalidToken) as exc:
            raise UnfamiliarIssuer() from exc
        return token

    def get_user(self, validated_token):
        try:
            user = super().get_user(validated_token)
        except (InvalidToken, exceptions.AuthenticationFailed) as exc:
            raise UnfamiliarIssuer() from exc
        access_key_id = validated_token.get("akid")
        if access_key_id and not AccessKey.objects.filter(id=access_key_id, user=user).exists():
            raise UnfamiliarIssuer()
        return user


def issue_token(*, user, access_key: AccessKey | None = None) -> dict:
    token = StudioAccessToken.for_user(user)
    if access_key is not None:
        token["akid"] = str(access_key.id)
    return {
        "accessToken": str(token),
        "tokenType": "Bearer",
        "expiresIn": int(token.lifetime.total_seconds()),
    }


def grant_password(*, username: str, password: str) -> dict:
    user = authenticate(username=username, password=password)
    if user is None or not user.is_active:
        raise exceptions.AuthenticationFailed("Invalid username or password.")
    return issue_token(user=user)


def grant_client_credentials(*, client_id: str, client_secret: str) -> dict:
    key = AccessKey.objects.select_related("user").filter(client_id=client_id).first()
    if key is None:
        # Hash anyway, as a known key's check does: an unknown client id must not answer faster (as Django's
        # ModelBackend does for an unknown username).
        make_password(client_secret)
    if key is None or not key.user.is_active or not key.check_secret(client_secret):
        raise exceptions.AuthenticationFailed("Invalid client credentials.")
    AccessKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
    return issue_token(user=key.user, access_key=key)


def revoke(raw_token: str) -> None:
    StudioAccessToken(raw_token).blacklist()
