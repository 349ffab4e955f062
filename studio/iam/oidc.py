"""The OpenID Connect relying party, on mozilla-django-oidc: which provider, its discovery document, and the
verification of its ID tokens.

One provider at a time, as Run:ai has: the environment's (`OIDC_DISCOVERY_URL`, `OIDC_CLIENT_ID`,
`OIDC_CLIENT_SECRET`, ...) when set, else the one `POST /api/v1/idps` stored. mozilla-django-oidc reads its
endpoints from Django settings; `ProviderBackend` and the views in studio/iam/sso_views.py answer them from the
provider instead (its `get_settings` hook), so that a provider set through the API needs no restart.

The library's own requests (token, keys, userinfo) are replaced by studio.outbound's: each endpoint passes the
network rules of cluster URLs every time it is called, and so does every redirect it answers.
"""

import jwt
import requests
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import SuspiciousOperation
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.utils import import_from_settings
from requests.auth import HTTPBasicAuth

from studio import outbound
from studio.iam.claims import ClaimProblem
from studio.iam.providers import (
    SIGNING_ALGORITHMS,
    Provider,
    configured_provider,
    discovery,
    token_endpoint_basic_auth,
)
from studio.iam.sso_services import external_login


class ProviderBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend on the configured provider: the authorization code flow of the portal's
    login, and the code or ID token a CLI brings to the token grants (studio/iam/tokens.py).

    What it changes: the provider's settings come from `configured_provider()`; ID tokens are checked for
    issuer and audience too; claims are the ID token's, with the userinfo endpoint's over them; a user is
    found by (issuer, subject), never by email (a provider account must not become a local user of the same
    email); and the user is created or updated by `studio.iam.sso_services.external_login`."""

    def __init__(self, *args, provider: Provider | None = None, **kwargs):
        self.UserModel = get_user_model()
        self.provider = provider
        self.document: dict = {}
        self.token_info: dict = {}
        self.problem = ""

    def get_settings(self, attr, *args):
        values = getattr(self, "_values", {})
        if attr in values:
            return values[attr]
        return import_from_settings(attr, *args)

    def configure(self, provider: Provider | None = None) -> bool:
        """Point the backend at the provider (False: there is none)."""
        self.provider = provider or self.provider or configured_provider()
        if self.provider is None:
            return False
        self.document = discovery(self.provider)
        algorithms = [a for a in self.document.get("id_token_signing_alg_values_supported") or ["RS256"]
                      if a in SIGNING_ALGORITHMS]
        self.OIDC_OP_TOKEN_ENDPOINT = self.document["token_endpoint"]
        self.OIDC_OP_USER_ENDPOINT = self.document.get("userinfo_endpoint")
        self.OIDC_OP_JWKS_ENDPOINT = self.document["jwks_uri"]
        self.OIDC_RP_CLIENT_ID = self.provider.client_id
        self.OIDC_RP_CLIENT_SECRET = self.provider.client_secret
        self.OIDC_RP_SIGN_ALGO = algorithms[0] if algorithms else "RS256"
        self.OIDC_RP_IDP_SIGN_KEY = None
        self.algorithms = algorithms or ["RS256"]
        self._values = {"OIDC_TOKEN_USE_BASIC_AUTH": token_endpoint_basic_auth(self.document),
                        "OIDC_AUTHENTICATION_CALLBACK_URL": "sso-callback", "OIDC_CREATE_USER": True}
        return True

    # -- the portal's login: the callback view calls authenticate(request, nonce=..., code_verifier=...) --------

    def authenticate(self, request, nonce=None, code_verifier=None, **kwargs):
        if request is None or nonce is None:  # a username and password (or another backend's call): not ours
            return None
        if not self.configure():
            return None
        return super().authenticate(request, nonce=nonce, code_verifier=code_verifier)

    def _fetch(self, method: str, endpoint: str, url: str, **kwargs) -> requests.Response:
        return outbound.fetch(method, url, field=endpoint, timeout=settings.OIDC_TIMEOUT,
                              verify=self.get_settings("OIDC_VERIFY_SSL", True), **kwargs)

    def get_token(self, payload):
        """The provider's tokens: the library's request, through studio.outbound."""
        auth = None
        if self.get_settings("OIDC_TOKEN_USE_BASIC_AUTH", False):  # the secret in the header, not the body
            auth = HTTPBasicAuth(payload.get("client_id"), payload.pop("client_secret", None))
        response = self._fetch("POST", "token_endpoint", self.OIDC_OP_TOKEN_ENDPOINT, data=payload, auth=auth)
        self.raise_token_response_error(response)
        self.token_info = response.json()
        return self.token_info

    def retrieve_matching_jwk(self, token):
        """The provider's key that signed the token (its `kid`, and its `alg` where the key names one)."""
        response = self._fetch("GET", "jwks_uri", self.OIDC_OP_JWKS_ENDPOINT)
        response.raise_for_status()
        body = response.json()
        header = jwt.get_unverified_header(token)
        for key in (body.get("keys") if isinstance(body, dict) else None) or ():
            if isinstance(key, dict) and key.get("kid") == header.get("kid") \
                    and key.get("alg", header.get("alg")) == header.get("alg"):
                try:
                    return jwt.PyJWK(key)
                except jwt.PyJWTError as exc:
                    raise SuspiciousOperation("The identity provider's key cannot be used.") from exc
        raise SuspiciousOperation("Could not find a valid JWKS.")

    def _userinfo(self, access_token) -> dict:
        response = self._fetch("GET", "userinfo_endpoint", self.OIDC_OP_USER_ENDPOINT,
                                headers={"Authorization": f"Bearer {access_token}"})
        response.raise_for_status()
        if response.headers.get("content-type", "").lower().startswith("application/jwt"):
            return self.verify_token(response.text)  # claims may come as a signed JWT
        return response.json()

    def verify_token(self, token, **kwargs):
        """Signature (the provider's keys), expiry, issuer, audience (our client id) and, for the portal's
        login, the nonce the login sent."""
        if not isinstance(token, str) or token.count(".") != 2:
            raise SuspiciousOperation("The identity provider sent no ID token.")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise SuspiciousOperation("The ID token is not a JWT.") from exc
        if header.get("alg") not in self.algorithms:
            raise SuspiciousOperation(f"The ID token is signed with {header.get('alg')!r}, which is not accepted.")
        key = self.retrieve_matching_jwk(token)
        try:
            payload = jwt.decode(token, key, algorithms=self.algorithms, audience=self.provider.client_id,
                                 issuer=self.document["issuer"], leeway=30,
                                 options={"require": ["exp", "iat", "iss", "aud", "sub"]})
        except jwt.PyJWTError as exc:
            raise SuspiciousOperation(f"The ID token was refused: {exc}.") from exc
        if "nonce" in kwargs and kwargs["nonce"] != payload.get("nonce"):
            raise SuspiciousOperation("The ID token's nonce is not the one this login sent.")
        return payload

    def get_userinfo(self, access_token, id_token, payload):
        """The ID token's claims, with the userinfo endpoint's over them where the provider has one (some put
        groups in one, some in the other); a userinfo answer about another subject is refused."""
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT and access_token:
            try:
                info = self._userinfo(access_token)
            except requests.RequestException:
                info = {}
            if isinstance(info, dict) and info.get("sub") == payload.get("sub"):
                claims.update(info)
        return claims

    def get_or_create_user(self, access_token, id_token, payload):
        claims = self.get_userinfo(access_token, id_token, payload)
        try:
            return external_login(provider=self.provider, issuer=self.document["issuer"], claims=claims,
                                  refresh_token=self.token_info.get("refresh_token") or "")
        except ClaimProblem as exc:
            self.problem = str(exc)
            if getattr(self, "request", None) is not None:
                self.request.session["sso_problem"] = self.problem
            return None

    def get_user(self, user_id):
        """The session's user while active (mozilla-django-oidc's would keep a deactivated user's session)."""
        user = super().get_user(user_id)
        return user if user is not None and user.is_active else None

    # -- the token grants (a CLI's code, or an ID token the client got itself) ---------------------------------

    def exchange_code(self, *, code: str, redirect_uri: str, code_verifier: str = "") -> dict:
        """The provider's tokens for an authorization code that was issued to our client id."""
        payload = {"client_id": self.OIDC_RP_CLIENT_ID, "client_secret": self.OIDC_RP_CLIENT_SECRET,
                   "grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        if code_verifier:
            payload["code_verifier"] = code_verifier
        return self.get_token(payload)

    def refresh(self, refresh_token: str) -> dict:
        return self.get_token({"client_id": self.OIDC_RP_CLIENT_ID, "client_secret": self.OIDC_RP_CLIENT_SECRET,
                               "grant_type": "refresh_token", "refresh_token": refresh_token})
