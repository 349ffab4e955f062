"""A real Kubernetes control plane on loopback, for `make e2e-real`: etcd, kube-apiserver and
kube-controller-manager of a current release (TLS, token auth, RBAC), each on a free port, in a throwaway folder.

    python -m scripts.realkube            # start one, print its admin kubeconfig, stop on Ctrl-C

The binaries are built from Go modules by scripts/kube/build_stack.sh (versions: scripts/kube/stack/versions.env)
into a cache outside the tree, once per set of versions; `ensure_stack()` runs it (a second of checking when it is
built). scripts/kube_stack.py starts the rest of the real cluster on top of this: KWOK's GPU nodes, KAI Scheduler,
the Kubeflow training operator.

What a bare control plane does not have: no kubelet and no scheduler (kubesim's node side or KWOK + KAI bind and
run pods), no Knative and no metrics-server (docs/real-cluster.md).
"""

import base64
import datetime
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD_STACK = ROOT / "scripts" / "kube" / "build_stack.sh"
_stack_folder: Path | None = None


def ensure_stack() -> Path:
    """The folder of the built stack (`bin/`, `manifests/`, `versions.json`): scripts/kube/build_stack.sh run once
    per process; it builds only what its cache lacks (a cold build takes tens of minutes on 2 cores; it says so)."""
    global _stack_folder
    if _stack_folder is None:
        done = subprocess.run(["bash", str(BUILD_STACK)], check=True, stdout=subprocess.PIPE, text=True)
        _stack_folder = Path(done.stdout.strip().splitlines()[-1])
    return _stack_folder


def versions() -> dict:
    """What the stack was built from: {"kubernetes": "v1.35.8", "etcd": ..., "kai-scheduler": ..., "go": ...}."""
    return json.loads((ensure_stack() / "versions.json").read_text())


def binary(name: str) -> str:
    return str(ensure_stack() / "bin" / name)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def make_pki(folder: Path) -> None:
    """A throwaway CA, a serving certificate for 127.0.0.1 and the service-account signing key pair."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    def key_pem(key) -> bytes:
        return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                 serialization.NoEncryption())

    now = datetime.datetime.now(datetime.UTC)
    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "paas-studio-e2e-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=7))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    server_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    names = [x509.DNSName("localhost"), x509.DNSName("kubernetes"), x509.DNSName("kubernetes.default"),
             x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.IPAddress(ipaddress.ip_address("10.0.0.1"))]
    server = (x509.CertificateBuilder()
              .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
              .issuer_name(ca_name).public_key(server_key.public_key()).serial_number(x509.random_serial_number())
              .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=7))
              .add_extension(x509.SubjectAlternativeName(names), critical=False)
              .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
              .sign(ca_key, hashes.SHA256()))
    sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ca.crt").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (folder / "server.crt").write_bytes(server.public_bytes(serialization.Encoding.PEM))
    (folder / "server.key").write_bytes(key_pem(server_key))
    (folder / "sa.key").write_bytes(key_pem(sa_key))
    (folder / "sa.pub").write_bytes(sa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))


def kubeconfig_text(*, server: str, ca_pem: str, token: str, user: str = "admin") -> str:
    """A kubeconfig with everything inline (the product accepts only inline credentials)."""
    ca_data = base64.b64encode(ca_pem.encode()).decode()
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "real",
        "clusters": [{"name": "real", "cluster": {"server": server, "certificate-authority-data": ca_data}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": "real", "context": {"cluster": "real", "user": user}}],
    }, indent=2)


class RealKube:
    """One control plane: `start()`, then `.url`, `.token` (admin, system:masters), `.ca_file`, `.ca_pem`,
    `.kubeconfig` (a file, admin), `.etcd_url`; `compact()` compacts etcd's history; `stop()` ends it all."""

    def __init__(self, *, workdir: str | Path | None = None, controllers: str = "*"):
        self.owned = workdir is None  # a folder of our own making goes away with stop(); a given one stays
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="paas-real-kube-"))
        self.controllers = controllers
        self.token = secrets.token_hex(16)
        self.processes: dict[str, subprocess.Popen] = {}
        self.port = self.etcd_port = 0

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def ca_file(self) -> str:
        return str(self.workdir / "pki" / "ca.crt")

    @property
    def ca_pem(self) -> str:
        return (self.workdir / "pki" / "ca.crt").read_text()

    @property
    def kubeconfig(self) -> str:
        return str(self.workdir / "admin.kubeconfig")

    def _spawn(self, name: str, argv: list[str], env: dict | None = None) -> None:
        log = (self.workdir / f"{name}.log").open("ab")  # appended to when a process is started again
        # A group of its own: stop() ends exactly these processes, and Ctrl-C in a terminal reaches us first.
        self.processes[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                                env={**os.environ, **env} if env else None)

    def start(self, timeout: float = 120) -> "RealKube":
        pki = self.workdir / "pki"
        make_pki(pki)
        (self.workdir / "tokens.csv").write_text(f'{self.token},admin,admin,"system:masters"\n')
        self.etcd_port, peer, self.port = free_port(), free_port(), free_port()
        self._spawn("etcd", [
            binary("etcd"), "--data-dir", str(self.workdir / "etcd"), "--listen-client-urls", self.etcd_url,
            "--advertise-client-urls", self.etcd_url, "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"default=http://127.0.0.1:{peer}", "--log-level", "warn",
        ])
        self._wait(lambda: self._etcd("/health").get("health") == "true", timeout, "etcd")
        self._spawn("kube-apiserver", [
            binary("kube-apiserver"), f"--etcd-servers={self.etcd_url}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={self.port}",
            f"--tls-cert-file={pki / 'server.crt'}", f"--tls-private-key-file={pki / 'server.key'}",
            f"--client-ca-file={pki / 'ca.crt'}", f"--token-auth-file={self.workdir / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC", "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-key-file={pki / 'sa.pub'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--cert-dir={self.workdir / 'certs'}",
            # The `kubernetes` Service's endpoints would be 127.0.0.1, which 1.35 refuses (loopback); nothing in
            # this cluster runs in a pod that would call it.
            "--endpoint-reconciler-type=none",
            # Since 1.34 the watch cache serves a list's later pages from snapshots of its own, which outlive etcd's
            # compaction; this keeps them in etcd, so that compact() expires a continue token at once (410), as the
            # API server's own compaction does every 5 minutes on a cluster of this kind's defaults before 1.34.
            "--feature-gates=ListFromCacheSnapshot=false",
        ])
        (self.workdir / "admin.kubeconfig").write_text(
            kubeconfig_text(server=self.url, ca_pem=self.ca_pem, token=self.token))
        self._wait(lambda: self.get("/readyz", raw=True) == b"ok", timeout, "kube-apiserver")
        self._spawn("kube-controller-manager", [
            binary("kube-controller-manager"), f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}", f"--authorization-kubeconfig={self.kubeconfig}",
            "--leader-elect=false", "--secure-port=0", f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}", "--use-service-account-credentials=false",
            f"--controllers={self.controllers}",
            # Quick reactions, so that tests wait on seconds, not minutes.
            "--horizontal-pod-autoscaler-sync-period=5s", "--namespace-sync-period=10s",
        ])
        return self

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for name, process in self.processes.items():
                if process.poll() is not None:
                    raise RuntimeError(f"{name} exited ({process.returncode}); see {self.workdir / name}.log")
            try:
                if ready():
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.3)
        raise RuntimeError(f"{what} not ready after {timeout:.0f}s; see {self.workdir}")

    def get(self, path: str, *, token: str | None = None, raw: bool = False):
        """GET on the API server as admin (or with `token`): the JSON body, or the bytes when `raw`."""
        request = urllib.request.Request(self.url + path,
                                         headers={"Authorization": f"Bearer {token or self.token}"})
        context = ssl.create_default_context(cafile=self.ca_file)
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            body = response.read()
        return body if raw else json.loads(body)

    def call(self, method: str, path: str, body: dict | None = None, *, token: str | None = None,
             content_type: str = "application/json", ok_statuses: tuple = ()) -> dict:
        """A JSON request as admin (or with `token`); an HTTP error whose status is in `ok_statuses` (e.g. 409
        for create-if-missing) answers its Status body instead of raising."""
        request = urllib.request.Request(self.url + path, method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Authorization": f"Bearer {token or self.token}",
                                                  "Content-Type": content_type, "Accept": "application/json"})
        context = ssl.create_default_context(cafile=self.ca_file)
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as response:
                return json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            if exc.code in ok_statuses:
                return json.loads(exc.read() or b"{}")
            raise RuntimeError(f"{method} {path}: HTTP {exc.code} {exc.read()[:500]!r}") from None

    def _etcd(self, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.etcd_url + path, data=data, method="POST" if data else "GET")
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def compact(self) -> int:
        """Compact etcd's history up to now (what the API server does every 5 minutes): continue tokens and
        watch resourceVersions from before it answer 410 Expired. Through etcd's JSON gateway, no etcdctl."""
        revision = int(self._etcd("/v3/kv/range", {"key": base64.b64encode(b"/").decode()})["header"]["revision"])
        self._etcd("/v3/kv/compaction", {"revision": revision, "physical": True})
        return revision

    def stop_apiserver(self, grace: float = 10) -> None:
        """Stop kube-apiserver alone (SIGTERM, SIGKILL after `grace` seconds: its graceful shutdown may wait on
        open requests for a minute); etcd and the controller manager stay up."""
        process = self.processes["kube-apiserver"]
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

    def start_apiserver(self, timeout: float = 120) -> None:
        """Start kube-apiserver again with the same flags (port, certificates, etcd): back once it is ready."""
        self._spawn("kube-apiserver", list(self.processes["kube-apiserver"].args))
        self._wait(lambda: self.get("/readyz", raw=True) == b"ok", timeout, "kube-apiserver")

    def stop(self) -> None:
        for name in reversed(list(self.processes)):
            process = self.processes[name]
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
        self.processes.clear()
        if self.owned:
            shutil.rmtree(self.workdir, ignore_errors=True)


def main() -> int:
    if sys.argv[1:] == ["--build"]:  # build (or find built) before pytest: no build runs under a test's timeout
        print(ensure_stack())
        return 0
    kube = RealKube(workdir=sys.argv[1] if len(sys.argv) > 1 else None).start()
    info = kube.get("/version")
    print(f"kube-apiserver {info['gitVersion']} at {kube.url}\nadmin kubeconfig: {kube.kubeconfig}\n"
          f"export KUBECONFIG={kube.kubeconfig}   # Ctrl-C stops it", flush=True)
    try:
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        kube.stop()
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--build"]:
        sys.exit(main())
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.exit(main())
