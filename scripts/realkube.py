"""A real Kubernetes control plane on loopback, for `make e2e-real`: Debian's etcd, kube-apiserver and
kube-controller-manager v1.20.2 (TLS, token auth, RBAC), each on a free port, in a throwaway folder.

    python -m scripts.realkube            # start one, print its admin kubeconfig, stop on Ctrl-C

kube-controller-manager comes from `../shared/kube/*.xz` (built from Debian's `kubernetes` source package),
unpacked once into a cache outside the tree (`~/.cache/paas-studio/kube/v1.20.2`, or `$PAAS_KUBE_CACHE`); when the
shared folder has none, its `build-from-debian-source.sh` builds them once into that cache (~20 minutes).
kube-apiserver is the same source rebuilt with reflect2 1.0.2 by scripts/kube/build_apiserver.sh, once, into
`~/.cache/paas-studio/kube/v1.20.2-reflect2-1.0.2` (or `$PAAS_KUBE_APISERVER_CACHE`): the shared one crashes at the
first custom resource. etcd comes from
Debian (`scripts/system_deps.sh e2e-real` installs `etcd-server` when it is missing).

What a real control plane does not have: no kubelet and no scheduler (kubesim's node side binds and runs pods),
no Knative and no metrics-server, nothing newer than 1.20 (docs/real-cluster.md).
"""

import base64
import datetime
import hashlib
import ipaddress
import json
import lzma
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
KUBE_VERSION = "v1.20.2"


def _shared_folder() -> Path:
    """`../shared/kube` beside the checkout (or beside a folder above it, for git worktrees)."""
    if os.environ.get("PAAS_KUBE_SHARED"):
        return Path(os.environ["PAAS_KUBE_SHARED"])
    for parent in ROOT.parents:
        if (parent / "shared" / "kube").is_dir():
            return parent / "shared" / "kube"
    return ROOT.parent / "shared" / "kube"


SHARED = _shared_folder()
CACHE = Path(os.environ.get("PAAS_KUBE_CACHE", Path.home() / ".cache" / "paas-studio" / "kube" / KUBE_VERSION))
BINARIES = {  # sha256 of the unpacked binaries, as ../shared/kube/README.md lists them
    "kube-apiserver": "21369f4a12774dbd5bd4dfdac4134d689f3ff9f7e64ddd7cc7c35b79eb53e365",
    "kube-controller-manager": "fa836fdcd7d8c565646a6354dde18cadc7745067d9907057f6034d6ccdfa7da2",
}
# The shared kube-apiserver dies (SIGSEGV in json-iterator's map encoding) at the first custom resource written:
# it was built with Go 1.19 against the reflect2 1.0.1 that 1.20.2 vendors. The one `make e2e-real` runs is the
# same source rebuilt with reflect2 1.0.2 (scripts/kube/build_apiserver.sh), once, into a cache of its own.
APISERVER_KEY = f"{KUBE_VERSION}-reflect2-1.0.2"
APISERVER_CACHE = Path(os.environ.get("PAAS_KUBE_APISERVER_CACHE",
                                      Path.home() / ".cache" / "paas-studio" / "kube" / APISERVER_KEY))
APISERVER_SHA256 = "7e715fbbd1df7f0bb65a59b04b66d6e61f3f85b6fbd5ca5327d4a8c7d0b3691a"  # as built here (-trimpath)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def ensure_binaries() -> dict[str, Path]:
    """kube-apiserver (rebuilt with reflect2 1.0.2) and kube-controller-manager (shared), built or unpacked on
    first use: name -> path."""
    return {"kube-apiserver": ensure_apiserver(),
            "kube-controller-manager": ensure_shared_binaries() / "kube-controller-manager"}


def ensure_apiserver() -> Path:
    """kube-apiserver v1.20.2 with reflect2 1.0.2, built once by scripts/kube/build_apiserver.sh (about 5 minutes on
    2 cores; one build at a time: a lock file beside the cache)."""
    target = APISERVER_CACHE / "kube-apiserver"
    if target.exists():
        return target
    APISERVER_CACHE.mkdir(parents=True, exist_ok=True)
    import fcntl

    with (APISERVER_CACHE.parent / f"{APISERVER_KEY}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second run waits for the first one's build
        if not target.exists():
            print(f"Building kube-apiserver {KUBE_VERSION} with reflect2 1.0.2 into {APISERVER_CACHE} "
                  "(about 5 minutes, once)…", file=sys.stderr, flush=True)
            subprocess.run(["bash", str(ROOT / "scripts" / "kube" / "build_apiserver.sh"), str(APISERVER_CACHE)],
                           check=True)
            digest = _sha256(target)
            if digest != APISERVER_SHA256:  # same recipe, another Go patch release: say so, it still works
                print(f"note: {target} has sha256 {digest}, not the {APISERVER_SHA256} of "
                      "scripts/realkube.py (another golang-1.19-go or source package?)", file=sys.stderr)
    return target


def ensure_shared_binaries() -> Path:
    """The folder holding the shared kube-apiserver and kube-controller-manager, unpacked or built on first use."""
    CACHE.mkdir(parents=True, exist_ok=True)
    for name in BINARIES:
        target = CACHE / name
        if target.exists():
            continue
        packed = SHARED / f"{name}.xz"
        if packed.exists():
            partial = target.with_suffix(f".partial-{os.getpid()}")  # two runs may unpack at once
            with lzma.open(packed) as source, partial.open("wb") as out:
                shutil.copyfileobj(source, out, 1 << 20)
            partial.chmod(0o755)
            if _sha256(partial) != BINARIES[name]:
                partial.unlink()
                raise RuntimeError(f"{packed} does not unpack to the {KUBE_VERSION} binary README.md names")
            partial.rename(target)
        else:
            recipe = SHARED / "build-from-debian-source.sh"
            if not recipe.exists():
                raise RuntimeError(f"Neither {packed} nor {recipe}: cannot get the {KUBE_VERSION} binaries")
            print(f"Building {KUBE_VERSION} from Debian's source package into {CACHE} (~20 minutes)…",
                  file=sys.stderr, flush=True)
            subprocess.run(["bash", str(recipe), str(CACHE)], check=True)
    return CACHE


def ensure_etcd() -> str:
    if not shutil.which("etcd"):
        subprocess.run([str(ROOT / "scripts" / "system_deps.sh"), "e2e-real"], check=True)
    path = shutil.which("etcd")
    if not path:
        raise RuntimeError("etcd is not installed (apt-get install etcd-server)")
    return path


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

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = (self.workdir / f"{name}.log").open("ab")  # appended to when a process is started again
        # A group of its own: stop() ends exactly these processes, and Ctrl-C in a terminal reaches us first.
        self.processes[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def start(self, timeout: float = 120) -> "RealKube":
        binaries, etcd = ensure_binaries(), ensure_etcd()
        pki = self.workdir / "pki"
        make_pki(pki)
        (self.workdir / "tokens.csv").write_text(f'{self.token},admin,admin,"system:masters"\n')
        self.etcd_port, peer, self.port = free_port(), free_port(), free_port()
        self._spawn("etcd", [
            etcd, "--data-dir", str(self.workdir / "etcd"), "--listen-client-urls", self.etcd_url,
            "--advertise-client-urls", self.etcd_url, "--listen-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
            "--initial-cluster", f"default=http://127.0.0.1:{peer}", "--log-level", "warn",
        ])
        self._wait(lambda: self._etcd("/health").get("health") == "true", timeout, "etcd")
        self._spawn("kube-apiserver", [
            str(binaries["kube-apiserver"]), f"--etcd-servers={self.etcd_url}", "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1", f"--secure-port={self.port}", "--insecure-port=0",
            f"--tls-cert-file={pki / 'server.crt'}", f"--tls-private-key-file={pki / 'server.key'}",
            f"--client-ca-file={pki / 'ca.crt'}", f"--token-auth-file={self.workdir / 'tokens.csv'}",
            "--authorization-mode=Node,RBAC", "--service-cluster-ip-range=10.0.0.0/24",
            f"--service-account-key-file={pki / 'sa.pub'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--cert-dir={self.workdir / 'certs'}",
        ])
        (self.workdir / "admin.kubeconfig").write_text(
            kubeconfig_text(server=self.url, ca_pem=self.ca_pem, token=self.token))
        self._wait(lambda: self.get("/readyz", raw=True) == b"ok", timeout, "kube-apiserver")
        self._spawn("kube-controller-manager", [
            str(binaries["kube-controller-manager"]), f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}", f"--authorization-kubeconfig={self.kubeconfig}",
            "--leader-elect=false", "--port=0", "--secure-port=0", f"--service-account-private-key-file={pki / 'sa.key'}",
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
    if sys.argv[1:] == ["--build"]:  # `make e2e-real` builds before pytest: no build runs under a test's timeout
        print("\n".join(f"{name}: {path}" for name, path in {**ensure_binaries(), "etcd": ensure_etcd()}.items()))
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
