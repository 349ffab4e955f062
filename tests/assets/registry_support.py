"""A real container registry for the tests: the CNCF distribution registry (built from its Go module by
scripts/registry/build.sh), on a loopback port, with filesystem storage in a temporary folder, with or without
htpasswd authentication, or with token authentication (Docker's Bearer token flow: the registry trusts the
tokens a `TokenServer` signs, as Docker Hub's trust its auth service's); and a tiny OCI image pushed to it over
plain HTTP (blob uploads and a manifest PUT, as any client does: no docker needed)."""

import base64
import hashlib
import json
import shutil
import subprocess
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import bcrypt
import jwt
import requests
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.served_binary import ServedBinary, free_port

ROOT = Path(__file__).resolve().parents[2]
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def registry_binary() -> str:
    """The pinned registry, built once into a cache outside the tree (a few minutes the first time)."""
    built = subprocess.run(["bash", str(ROOT / "scripts" / "registry" / "build.sh")], check=True,
                           capture_output=True, text=True)
    return built.stdout.strip().splitlines()[-1]


class TokenServer:
    """A registry's token service on loopback: `GET /token?service=&scope=` with the right Basic login answers
    {"token": <RS256 JWT granting the scopes asked>}; anything else 401. Its key set is what the registry trusts."""

    SERVICE, ISSUER, KEY_ID = "paas-studio-test-registry", "paas-studio-test-token-server", "test-key"

    def __init__(self, users: dict[str, str]):
        self.users = dict(users)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802 — http.server's name
                query = parse_qs(urlsplit(self.path).query)
                given = self.headers.get("Authorization", "")
                login = base64.b64decode(given[6:]).decode() if given.startswith("Basic ") else ""
                server.requests.append({"query": query, "user": login.partition(":")[0]})
                user, _, password = login.partition(":")
                if not user or server.users.get(user) != password:
                    self.send_response(401)
                    self.end_headers()
                    return
                body = json.dumps({"token": server.token(user, query.get("scope", []))}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}/token"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def token(self, user: str, scopes: list[str]) -> str:
        access = []
        for scope in " ".join(scopes).split():
            kind, _, rest = scope.partition(":")
            name, _, actions = rest.rpartition(":")
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        claims = {"iss": self.ISSUER, "sub": user, "aud": self.SERVICE, "iat": now, "nbf": now - 5,
                  "exp": now + 300, "jti": uuid.uuid4().hex, "access": access}
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"kid": self.KEY_ID})

    def jwks(self) -> dict:
        key = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**key, "kid": self.KEY_ID, "alg": "RS256", "use": "sig"}]}

    def stop(self) -> None:
        self.http.shutdown()
        self.http.server_close()


class Registry(ServedBinary):
    name = "registry"

    def __init__(self, binary: str, *, users: dict[str, str] | None = None, token: TokenServer | None = None,
                 data: Path | None = None):
        """`users`: an htpasswd login; `token`: trust that token server instead; `data`: serve another registry's
        storage (its repositories, read as they are)."""
        super().__init__(binary)
        self.users, self.token = dict(users or {}), token
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = data or self.folder / "data"

    @property
    def auth(self) -> tuple[str, str] | None:
        return next(iter(self.users.items()), None)

    def config(self) -> dict:
        config = {"version": 0.1, "log": {"level": "warn", "accesslog": {"disabled": True}},
                  "storage": {"filesystem": {"rootdirectory": str(self.data)}},
                  "http": {"addr": f"127.0.0.1:{self.port}", "secret": "registry-http-secret-for-tests"}}
        if self.users:
            htpasswd = self.folder / "htpasswd"
            htpasswd.write_text("".join(f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(5)).decode()}\n"
                                        for user, password in self.users.items()))
            config["auth"] = {"htpasswd": {"realm": "paas-studio-tests", "path": str(htpasswd)}}
        if self.token:
            jwks = self.folder / "jwks.json"
            jwks.write_text(json.dumps(self.token.jwks()))
            config["auth"] = {"token": {"realm": self.token.url, "service": TokenServer.SERVICE,
                                        "issuer": TokenServer.ISSUER, "jwks": str(jwks),
                                        "signingalgorithms": ["RS256"]}}
        return config

    def start(self) -> "Registry":
        self.serve(self.config(), ready_url=self.url + "/v2/", ready_codes=(200, 401))
        return self

    def stop(self) -> None:
        super().stop()
        shutil.rmtree(self.folder, ignore_errors=True)


    # --- pushing a tiny image ------------------------------------------------------------------------------

    def _blob(self, repository: str, content: bytes) -> dict:
        digest = "sha256:" + hashlib.sha256(content).hexdigest()
        started = requests.post(f"{self.url}/v2/{repository}/blobs/uploads/", auth=self.auth, timeout=10)
        assert started.status_code == 202, (started.status_code, started.text)
        location = urljoin(self.url, started.headers["Location"])
        put = requests.put(location + ("&" if "?" in location else "?") + f"digest={digest}", data=content,
                           headers={"Content-Type": "application/octet-stream"}, auth=self.auth, timeout=10)
        assert put.status_code == 201, (put.status_code, put.text)
        return {"digest": digest, "size": len(content)}

    def push(self, repository: str, tag: str) -> str:
        """Push a one-layer OCI image as repository:tag; its manifest's digest."""
        layer = self._blob(repository, f"a layer of {repository}:{tag}".encode())
        config = self._blob(repository, json.dumps({"architecture": "amd64", "os": "linux", "rootfs": {
            "type": "layers", "diff_ids": [layer["digest"]]}}).encode())
        manifest = json.dumps({
            "schemaVersion": 2, "mediaType": OCI_MANIFEST,
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json", **config},
            "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar", **layer}]}).encode()
        put = requests.put(f"{self.url}/v2/{repository}/manifests/{tag}", data=manifest,
                           headers={"Content-Type": OCI_MANIFEST}, auth=self.auth, timeout=10)
        assert put.status_code == 201, (put.status_code, put.text)
        return put.headers["Docker-Content-Digest"]
