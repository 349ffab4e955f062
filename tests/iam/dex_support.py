"""A real OpenID Connect provider for the tests: Dex (built from its Go module by scripts/dex/build.sh), on a
loopback port, with static users whose groups its config names, and in-memory storage.

`Dex.restart(users=...)` starts it again on the same port with other users or groups: what an administrator of
the provider does when someone leaves a group. Its memory storage does not survive a restart (its sessions and
refresh tokens are gone, as if revoked), and it signs with new keys."""

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import bcrypt
import requests

from tests.served_binary import ServedBinary, free_port

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "paas-studio"
CLIENT_SECRET = "dex-client-secret-for-tests"
CLI_REDIRECT = "http://127.0.0.1:9/cli-callback"  # a CLI's own redirect URI: never fetched by the tests
SCOPES = ["openid", "email", "profile", "groups", "offline_access"]


@dataclass
class DexUser:
    email: str
    password: str
    groups: list = field(default_factory=list)
    username: str = ""
    user_id: str = ""


def dex_binary() -> str:
    """The pinned Dex, built once into a cache outside the tree (a few minutes the first time)."""
    built = subprocess.run(["bash", str(ROOT / "scripts" / "dex" / "build.sh")], check=True, capture_output=True,
                           text=True)
    return built.stdout.strip().splitlines()[-1]


_hashes: dict[str, str] = {}


def _hash(password: str) -> str:
    if password not in _hashes:  # cost 10, Dex's least: a test user's password needs no more
        _hashes[password] = bcrypt.hashpw(password.encode(), bcrypt.gensalt(10)).decode()
    return _hashes[password]


class Dex(ServedBinary):
    name = "dex"

    def __init__(self, binary: str, *, redirect_uris: list[str], users: list[DexUser]):
        super().__init__(binary)
        self.redirect_uris, self.users = list(redirect_uris), list(users)
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}/dex"
        self.discovery_url = self.issuer + "/.well-known/openid-configuration"

    def config(self) -> dict:
        return {
            "issuer": self.issuer,
            "storage": {"type": "memory"},
            "web": {"http": f"127.0.0.1:{self.port}"},
            "logger": {"level": "info"},
            "oauth2": {"skipApprovalScreen": True, "passwordConnector": "local"},
            "enablePasswordDB": True,
            "staticClients": [{"id": CLIENT_ID, "secret": CLIENT_SECRET, "name": "PaaS Studio",
                               "redirectURIs": self.redirect_uris + [CLI_REDIRECT]}],
            "staticPasswords": [{"email": u.email, "hash": _hash(u.password), "username": u.username or u.email,
                                 "userID": u.user_id or u.email, "groups": list(u.groups)} for u in self.users],
        }

    def start(self) -> "Dex":
        self.serve(self.config(), ready_url=self.discovery_url, env={**os.environ, "HOME": str(self.folder)})
        return self

    def restart(self, *, users: list[DexUser]) -> None:
        self.stop()
        self.users = list(users)
        self.start()

    def idp_body(self, **mappers) -> dict:
        """Run:ai's IdpCreationRequest for this provider."""
        return {"type": "oidc", "name": "Dex",
                "oidcData": {"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET,
                             "discoverDocumentUrl": self.discovery_url, "scopes": SCOPES},
                "mappers": {"groups": "groups", "email": "email", **mappers}}

    def cli_login(self, email: str, password: str, *, redirect_uri: str = CLI_REDIRECT) -> str:
        """A CLI's login at the provider, by HTTP as a browser would post Dex's login form: the authorization
        code the provider sends to the CLI's redirect URI."""
        http = requests.Session()
        answer = http.get(self.issuer + "/auth", params={
            "client_id": CLIENT_ID, "redirect_uri": redirect_uri, "response_type": "code",
            "scope": " ".join(SCOPES), "state": "cli-state"}, timeout=10)
        answer.raise_for_status()
        posted = http.post(answer.url, data={"login": email, "password": password}, allow_redirects=False,
                           timeout=10)
        while posted.status_code in (302, 303) and not posted.headers["Location"].startswith(redirect_uri):
            posted = http.get(urljoin(posted.url, posted.headers["Location"]), allow_redirects=False, timeout=10)
        location = posted.headers.get("Location", "")
        assert location.startswith(redirect_uri), f"dex answered {posted.status_code}: {posted.text[:500]}"
        query = parse_qs(urlsplit(location).query)
        assert query.get("state") == ["cli-state"]
        return query["code"][0]

    def id_token(self, email: str, password: str) -> str:
        """An ID token for our client id, by the provider's password grant (what a script may get itself)."""
        answer = requests.post(self.issuer + "/token", data={
            "grant_type": "password", "username": email, "password": password, "scope": " ".join(SCOPES)},
            auth=(CLIENT_ID, CLIENT_SECRET), timeout=10)
        assert answer.status_code == 200, answer.text
        return answer.json()["id_token"]
