"""Security round 4, finding 4: every URL the server fetches passes the network rules of cluster URLs each time it
is used. An identity provider's discovery document that names endpoints on refused addresses (here 0.0.0.0,
which Linux connects to the local host) is refused when set and when read again later, so that anonymous token
requests never make the server send its client secret there; redirects are checked as the URLs are; and a name
that resolves one way for the check and another for the connection (DNS rebinding) reaches nothing.

The provider is a small HTTP server on loopback (allowed in the tests, as CLUSTER_ALLOWED_NETWORKS says) that
serves whatever document a test gives it and records every request it gets."""

import base64
import http.server
import json
import socket
import threading

import pytest
from rest_framework.test import APIClient

from studio.clusters import kube
from studio.iam import providers
from tests.factories import ClusterFactory
from tests.notifications.servers import SmtpServer
from workloads.cluster.sync import cluster_sync

pytestmark = pytest.mark.django_db
SECRET = "the-client-secret-of-the-provider"


class Recorder(http.server.BaseHTTPRequestHandler):
    """Answers `routes[path]` = (status, headers, body) and records (method, path, Authorization) of each request."""

    def _answer(self):
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        server.seen.append((self.command, self.path.split("?")[0], self.headers.get("Authorization") or "",
                            body.decode(errors="replace")))
        status, headers, content = server.routes.get(self.path.split("?")[0], (404, {}, b"{}"))
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.end_headers()
        self.wfile.write(content)

    do_GET = do_POST = _answer

    def log_message(self, *args):
        pass


class Provider:
    def __init__(self):
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
        self.server.routes, self.server.seen = {}, []
        self.port = self.server.server_address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.refused = f"http://0.0.0.0:{self.port}"  # the same server, at an address the rules never allow
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def serve(self, path: str, body, *, status: int = 200, headers: dict | None = None):
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.server.routes[path] = (status, {"Content-Type": "application/json", **(headers or {})}, content)

    def document(self, **endpoints) -> dict:
        """A discovery document at /.well-known/openid-configuration, its endpoints here unless given."""
        document = {"issuer": self.base, "authorization_endpoint": self.base + "/auth",
                    "token_endpoint": self.base + "/token", "jwks_uri": self.base + "/jwks",
                    "userinfo_endpoint": self.base + "/userinfo", **endpoints}
        self.serve("/.well-known/openid-configuration", document)
        return document

    @property
    def discovery_url(self) -> str:
        return self.base + "/.well-known/openid-configuration"

    def paths(self) -> list[str]:
        return [path for _method, path, _auth, _body in self.server.seen]

    def secrets_seen(self) -> list[str]:
        """Requests that carried the client secret, in Basic auth or in the body."""
        return [path for _method, path, auth, body in self.server.seen
                if SECRET in body or (auth.startswith("Basic ") and SECRET in base64.b64decode(auth[6:]).decode())]


@pytest.fixture
def idp():
    provider = Provider()
    yield provider
    provider.server.shutdown()


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


def idp_body(provider: Provider) -> dict:
    return {"type": "oidc", "name": "Corp", "mappers": {},
            "oidcData": {"clientId": "paas-studio", "clientSecret": SECRET, "discoverDocumentUrl": provider.discovery_url,
                         "scopes": ["openid"]}}


def exchange(**body):
    return APIClient().post("/api/v1/token", body, format="json")


def unsigned_id_token() -> str:
    """Shaped like an ID token (RS256, a kid): enough for the server to fetch the provider's keys to check it."""
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
    return f"{part({'alg': 'RS256', 'kid': 'k1', 'typ': 'JWT'})}.{part({'sub': 'x'})}.c2ln"


@pytest.mark.parametrize("endpoint", ["token_endpoint", "jwks_uri", "userinfo_endpoint"])
def test_a_discovery_document_naming_a_refused_endpoint_is_refused_when_set(admin, idp, endpoint):
    idp.document(**{endpoint: idp.refused + "/steal"})
    refused = admin.post("/api/v1/idps", idp_body(idp), format="json")
    assert refused.status_code == 400, refused.json()
    [problem] = refused.json()["errors"]
    assert problem["field"] == "oidcData.discoverDocumentUrl" and endpoint in problem["message"]
    assert "never allowed" in problem["message"]
    assert admin.get("/api/v1/idps").json() == []


def test_a_discovery_url_that_redirects_to_a_refused_address_is_refused_when_set(admin, idp):
    idp.serve("/moved/.well-known/openid-configuration", b"", status=302, headers={"Location": idp.refused + "/.well-known/openid-configuration"})
    idp.document()
    body = idp_body(idp)
    body["oidcData"]["discoverDocumentUrl"] = idp.base + "/moved"  # an issuer's URL: the document is under it
    refused = admin.post("/api/v1/idps", body, format="json")
    assert refused.status_code == 400, refused.json()
    assert [e["field"] for e in refused.json()["errors"]] == ["oidcData.discoverDocumentUrl"]
    assert idp.paths() == ["/moved/.well-known/openid-configuration"]  # the redirect was not followed


@pytest.mark.parametrize("grant", [
    {"grantType": "exchange_token", "code": "a-code", "redirectUri": "http://127.0.0.1:9/cb"},
    {"grantType": "external_token_exchange", "externalToken": unsigned_id_token()},
])
def test_a_provider_repointed_later_gets_no_request_and_no_secret(admin, idp, monkeypatch, grant):
    idp.document()
    assert admin.post("/api/v1/idps", idp_body(idp), format="json").status_code == 201
    # The provider's document now names refused addresses; the server reads it again when its copy is old.
    idp.document(token_endpoint=idp.refused + "/token", jwks_uri=idp.refused + "/jwks",
                 userinfo_endpoint=idp.refused + "/userinfo")
    monkeypatch.setattr(providers, "DISCOVERY_SECONDS", 0)
    idp.server.seen.clear()
    answer = exchange(**grant)
    assert answer.status_code == 503, answer.json()
    assert answer.json()["message"] and SECRET not in str(answer.json())
    assert idp.paths() == ["/.well-known/openid-configuration"] and idp.secrets_seen() == []


def test_a_redirect_from_an_endpoint_to_a_refused_address_is_not_followed(admin, idp):
    idp.document()
    idp.serve("/jwks", b"", status=302, headers={"Location": idp.refused + "/stolen-keys"})
    assert admin.post("/api/v1/idps", idp_body(idp), format="json").status_code == 201
    answer = exchange(grantType="external_token_exchange", externalToken=unsigned_id_token())
    assert answer.status_code == 503, answer.json()
    assert "/stolen-keys" not in idp.paths() and "/jwks" in idp.paths()


def test_the_token_endpoint_gets_the_secret_where_it_is_allowed(admin, idp):
    """The same provider, its endpoints allowed: the code exchange reaches its token endpoint (which refuses the
    code here), so the refusals above are the rules', not a provider that is never called."""
    idp.document()
    idp.serve("/token", {"error": "invalid_grant"}, status=400)
    assert admin.post("/api/v1/idps", idp_body(idp), format="json").status_code == 201
    answer = exchange(grantType="exchange_token", code="a-code", redirectUri="http://127.0.0.1:9/cb")
    assert answer.status_code == 401 and "refused the code" in answer.json()["message"]
    assert idp.secrets_seen() == ["/token"]


# --- a name that resolves elsewhere for the connection than for the check ----------------------------------

@pytest.fixture
def rebinding(monkeypatch, settings):
    """Every name resolves to a public address when the rules check it (getaddrinfo(host, port)) and to 127.0.0.1
    when a connection is opened (getaddrinfo(host, port, family, SOCK_STREAM)); loopback is not allowed."""
    real = socket.getaddrinfo

    def resolve(host, port, family=0, type=0, proto=0, flags=0):
        if host in ("localhost", "127.0.0.1"):
            return real(host, port, family, type, proto, flags)
        if type == socket.SOCK_STREAM:
            return real("127.0.0.1", port, family, type, proto, flags)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port or 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    settings.CLUSTER_ALLOWED_NETWORKS = ["10.0.0.0/8"]


def test_a_discovery_document_at_a_rebinding_name_is_never_asked(admin, idp, rebinding, settings):
    settings.DEBUG = True  # a plain-http provider off loopback is taken only in development: this one is plain
    idp.document()
    body = idp_body(idp)
    body["oidcData"]["discoverDocumentUrl"] = f"http://idp.rebind.test:{idp.port}/.well-known/openid-configuration"
    refused = admin.post("/api/v1/idps", body, format="json")
    assert refused.status_code == 400, refused.json()
    [problem] = refused.json()["errors"]
    assert problem["field"] == "oidcData.discoverDocumentUrl" and "127.0.0.1" in problem["message"]
    assert idp.paths() == []  # refused once connected, before a byte of the request


def test_a_prometheus_at_a_rebinding_name_is_never_asked(idp, rebinding):
    idp.serve("/api/v1/query", {"status": "success", "data": {"result": []}})
    cluster = ClusterFactory(name="far", api_server_url="https://k8s.rebind.test:6443")
    with pytest.raises(kube.PermanentClusterError, match="127.0.0.1"):
        kube.prometheus_query(kube.connect(cluster), f"http://prometheus.rebind.test:{idp.port}", "up")
    assert idp.paths() == []


def test_a_cluster_at_a_rebinding_name_gets_no_request_and_no_token(admin, idp, rebinding):
    created = admin.post("/api/v1/clusters", {"name": "far", "apiServerUrl": f"http://k8s.rebind.test:{idp.port}",
                                              "token": "the-clusters-token"}, format="json")
    assert created.status_code == 201, created.json()  # its name resolved to a public address when saved
    cluster_sync(created.json()["clusterId"])
    message = admin.get(f"/api/v1/clusters/{created.json()['clusterId']}").json()["statusMessage"]
    assert "address cannot be used: k8s.rebind.test may not be used: 127.0.0.1" in message, message
    assert idp.paths() == []


def test_an_smtp_server_at_a_rebinding_name_gets_no_login_and_no_mail(admin, rebinding):
    """A notification channel's SMTP host is checked when it is saved or used, and its connection again at the
    address reached: a name that resolves elsewhere for the connection gets nothing, neither the login nor a
    message."""
    from notifications.senders import Refused, send_email

    with SmtpServer() as smtp:
        config = {"smtpHost": "mail.rebind.test", "smtpPort": smtp.port, "from": "studio@example.com",
                  "username": "mailer", "authType": "auth_login", "smtpTlsEnabled": False,
                  "recipients": ["ops@example.com"]}
        answer = admin.post("/api/v1/validate-notification-channel",
                            {"type": "email", "config": {**config, "password": smtp.password}}, format="json")
        assert (answer.status_code, answer.json()) == (200, False)
        payload = {"category": "Workload", "type": "Failed", "title": "Workload train failed", "message": "",
                   "createdAt": "2026-11-29T23:00:00Z"}
        with pytest.raises(Refused, match="config.smtpHost: mail.rebind.test may not be used: 127.0.0.1"):
            send_email(config, {"password": smtp.password}, payload, to=["ops@example.com"])
        assert smtp.logins == [] and smtp.messages == []
