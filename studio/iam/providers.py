"""Which OpenID Connect provider (the environment's, else the one `POST /api/v1/idps` stored), its discovery
document, and how its token endpoint takes the client's credentials. The relying party itself is studio/iam/oidc.py.

The document and the endpoints it names are reached through studio.outbound: each URL passes the network rules
of cluster URLs whenever it is used. A document that names an endpoint the rules refuse is refused whole when it
is read (at `POST /api/v1/idps`, and at each re-reading), so that a provider cannot be repointed there later."""

import time
from dataclasses import dataclass, field

import requests
from django.conf import settings

from studio import outbound

SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
DISCOVERY_SECONDS = 300  # how long a provider's discovery document is kept
WELL_KNOWN = "/.well-known/openid-configuration"
DISCOVERY_FIELD = "oidcData.discoverDocumentUrl"  # where the API names the discovery document's URL
# The endpoints the server itself calls (the authorization endpoint is the browser's to visit).
FETCHED_ENDPOINTS = ("token_endpoint", "jwks_uri", "userinfo_endpoint")


class ProviderError(Exception):
    """The provider could not be reached, or answered something unusable (the message says which)."""


@dataclass(frozen=True)
class Provider:
    alias: str
    discovery_url: str
    client_id: str
    client_secret: str = field(repr=False)
    scopes: tuple[str, ...] = ("openid", "email", "profile")
    name: str = ""
    mandatory_claim: dict | None = None
    mappers: dict | None = None
    from_environment: bool = False

    @property
    def label(self) -> str:
        return self.name or "single sign-on"


def environment_provider() -> Provider | None:
    if not settings.OIDC_DISCOVERY_URL:
        return None
    return Provider(alias=settings.OIDC_PROVIDER_ALIAS, discovery_url=settings.OIDC_DISCOVERY_URL,
                    client_id=settings.OIDC_CLIENT_ID, client_secret=settings.OIDC_CLIENT_SECRET,
                    scopes=tuple(settings.OIDC_SCOPES), name=settings.OIDC_PROVIDER_NAME,
                    mandatory_claim=settings.OIDC_MANDATORY_CLAIM or None, mappers=settings.OIDC_CLAIM_MAPPERS,
                    from_environment=True)


def provider_of(row) -> Provider:
    return Provider(alias=row.alias, discovery_url=row.discovery_url, client_id=row.client_id,
                    client_secret=row.client_secret, scopes=tuple(row.scopes or ("openid", "email", "profile")),
                    name=row.name, mandatory_claim=row.mandatory_claim, mappers=row.mappers)


def configured_provider() -> Provider | None:
    """The provider users log in with: the environment's, else the stored one, else None."""
    from studio.iam.models import IdentityProvider

    provider = environment_provider()
    if provider is not None:
        return provider
    row = IdentityProvider.objects.first()
    return provider_of(row) if row is not None else None


def discovery_url(url: str) -> str:
    """Run:ai asks for the discovery document's URL; an issuer URL is taken too (the document is under it)."""
    url = url.strip()
    return url if url.rstrip("/").endswith(WELL_KNOWN) else url.rstrip("/") + WELL_KNOWN


_documents: dict[str, tuple[float, dict]] = {}


def discovery(provider: Provider, *, fresh: bool = False) -> dict:
    """The provider's discovery document (issuer, endpoints, keys' URL), kept DISCOVERY_SECONDS."""
    url = discovery_url(provider.discovery_url)
    kept = _documents.get(url)
    if kept and not fresh and time.monotonic() - kept[0] < DISCOVERY_SECONDS:
        return kept[1]
    try:
        response = outbound.fetch("GET", url, field=DISCOVERY_FIELD, timeout=settings.OIDC_TIMEOUT,
                                  headers={"Accept": "application/json"})
        response.raise_for_status()
        document = response.json()
    except outbound.OutboundRefused as exc:
        raise ProviderError(f"The identity provider's discovery document ({url}) may not be read: "
                            f"{exc.reason}") from exc
    except (requests.RequestException, ValueError) as exc:
        raise ProviderError(f"The identity provider's discovery document ({url}) could not be read: "
                            f"{type(exc).__name__}.") from exc
    missing = [k for k in ("issuer", "authorization_endpoint", "token_endpoint", "jwks_uri")
               if not isinstance(document, dict) or not isinstance(document.get(k), str)]
    if missing:
        raise ProviderError(f"The discovery document at {url} has no {', '.join(missing)}.")
    for name in FETCHED_ENDPOINTS:
        if document.get(name) is None:  # only the userinfo endpoint may be left out
            continue
        if not isinstance(document[name], str):
            raise ProviderError(f"The discovery document at {url} has a {name} that is not a URL.")
        try:
            outbound.check(name, document[name])
        except outbound.OutboundRefused as exc:
            raise ProviderError(f"The discovery document at {url} names a {name} that may not be reached: "
                                f"{exc.reason}") from exc
    _documents[url] = (time.monotonic(), document)
    return document


def token_endpoint_basic_auth(document: dict) -> bool:
    """client_secret_basic unless the provider offers client_secret_post only (OpenID Connect's default)."""
    methods = document.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    return "client_secret_basic" in methods or "client_secret_post" not in methods
