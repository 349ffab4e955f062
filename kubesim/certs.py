"""A throwaway self-signed certificate for 127.0.0.1, and a kubeconfig that trusts it: kubectl sends bearer
tokens only over TLS, so a simulated cluster that kubectl should reach serves HTTPS with one of these."""

import base64
import datetime
import ipaddress
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def self_signed(directory: str | Path, days: int = 30) -> tuple[str, str]:
    """tls.crt and tls.key in `directory` (created): an EC key and a CA-capable certificate for 127.0.0.1 and
    localhost, so that the certificate is its own trust anchor."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesim")])
    now = datetime.datetime.now(datetime.UTC)
    names = [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=days))
            .add_extension(x509.SubjectAlternativeName(names), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return str(cert_path), str(key_path)


def throwaway_ca_pem() -> str:
    """A certificate for clusters that serve plain HTTP, so that kube-root-ca.crt holds a well-formed one."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        cert, _ = self_signed(folder)
        return Path(cert).read_text()


def write_kubeconfig(path: str | Path, *, server: str, ca_file: str, token: str | None) -> str:
    """An admin kubeconfig for the simulated cluster, with the CA inline."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    ca = base64.b64encode(Path(ca_file).read_bytes()).decode()
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "kubesim",
              "clusters": [{"name": "kubesim", "cluster": {"server": server, "certificate-authority-data": ca}}],
              "users": [{"name": "kubesim-admin", "user": {"token": token} if token else {}}],
              "contexts": [{"name": "kubesim", "context": {"cluster": "kubesim", "user": "kubesim-admin"}}]}
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return str(path)
