"""A real container registry for the tests: the CNCF distribution registry (built from its Go module by
scripts/registry/build.sh), on a loopback port, with filesystem storage in a temporary folder, with or without
htpasswd authentication; and a tiny OCI image pushed to it over plain HTTP (blob uploads and a manifest PUT, as
any client does: no docker needed)."""

import hashlib
import json
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urljoin

import bcrypt
import requests
import yaml

ROOT = Path(__file__).resolve().parents[2]
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"


def registry_binary() -> str:
    """The pinned registry, built once into a cache outside the tree (a few minutes the first time)."""
    built = subprocess.run(["bash", str(ROOT / "scripts" / "registry" / "build.sh")], check=True,
                           capture_output=True, text=True)
    return built.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Registry:
    def __init__(self, binary: str, *, users: dict[str, str] | None = None):
        self.binary, self.users = binary, dict(users or {})
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.folder = Path(tempfile.mkdtemp(prefix="registry-"))
        self.process: subprocess.Popen | None = None

    @property
    def auth(self) -> tuple[str, str] | None:
        return next(iter(self.users.items()), None)

    def config(self) -> dict:
        config = {"version": 0.1, "log": {"level": "warn", "accesslog": {"disabled": True}},
                  "storage": {"filesystem": {"rootdirectory": str(self.folder / "data")}},
                  "http": {"addr": f"127.0.0.1:{self.port}", "secret": "registry-http-secret-for-tests"}}
        if self.users:
            htpasswd = self.folder / "htpasswd"
            htpasswd.write_text("".join(f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(5)).decode()}\n"
                                        for user, password in self.users.items()))
            config["auth"] = {"htpasswd": {"realm": "paas-studio-tests", "path": str(htpasswd)}}
        return config

    def start(self) -> "Registry":
        path = self.folder / "config.yml"
        path.write_text(yaml.safe_dump(self.config()))
        log = (self.folder / "registry.log").open("ab")
        self.process = subprocess.Popen([self.binary, "serve", str(path)], stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the registry exited ({self.process.returncode}): {self.log()[-2000:]}")
            try:
                if requests.get(self.url + "/v2/", timeout=1).status_code in (200, 401):
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the registry did not answer in 30 s: {self.log()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        shutil.rmtree(self.folder, ignore_errors=True)

    def log(self) -> str:
        path = self.folder / "registry.log"
        return path.read_text(errors="replace") if path.exists() else ""

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
