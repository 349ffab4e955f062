"""Run:ai's own Python SDK (`runapy`) as a client of a live test server, logged in with an app token.

runapy logs in by posting `{"grantType": "app_token", "AppId": <client id>, "AppSecret": <secret>}` to
`/api/v1/token` (runai.api_client.ApiClient._make_token_request) and sends the bearer token it gets on every
call; its API methods answer `ApiResponse` objects whose `.data` is the parsed JSON body."""

from runai.api_client import ApiClient
from runai.configuration import Configuration
from runai.runai_client import RunaiClient

from studio.models import AccessKey


def runapy_client(base_url: str, user) -> RunaiClient:
    """A RunaiClient for `user`, through a fresh access key (an application's id and secret)."""
    key, secret = AccessKey.issue(user=user, name="runapy")
    configuration = Configuration(client_id=key.client_id, client_secret=secret, runai_base_url=base_url,
                                  retry_enabled=False)
    return RunaiClient(ApiClient(configuration))


def runapy_for_service_account(base_url: str, client_id: str, client_secret: str) -> RunaiClient:
    """A RunaiClient that logs in as a service account (its client id and secret), as a CI pipeline does."""
    configuration = Configuration(client_id=client_id, client_secret=client_secret, runai_base_url=base_url,
                                  retry_enabled=False)
    return RunaiClient(ApiClient(configuration))
