"""Debian's kubectl (package kubernetes-client) works against the simulated cluster: discovery, JSON output
and server-side printed tables. kubectl sends bearer tokens only over TLS, so this cluster serves HTTPS with a
throwaway certificate, which the official client verifies too."""

import base64
import datetime
import ipaddress
import json
import os
import re
import subprocess

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from kubernetes import client

from studio.kubesim import KubeSim

from .conftest import FAST, TOKEN, job_manifest, wait_until

INSTALL = ("dpkg-divert --no-rename --package kubectl --divert /usr/bin/kubectl.debian --add /usr/bin/kubectl && "
           "apt-get update -q && apt-get install -y -q kubernetes-client")


def debian_kubectl() -> str:
    """The kubectl binary Debian's kubernetes-client installed, following a dpkg diversion if there is one."""
    try:
        listing = subprocess.run(["dpkg", "-L", "kubernetes-client"], capture_output=True, text=True, check=False)
    except FileNotFoundError:
        pytest.fail("dpkg is missing: this test needs Debian's kubernetes-client package")
    if listing.returncode != 0:
        pytest.fail(f"Debian's kubernetes-client package is not installed. Install it with:\n  {INSTALL}")
    lines = listing.stdout.splitlines()
    for i, line in enumerate(lines):
        if line == "/usr/bin/kubectl":
            diverted = re.match(r"diverted by \S+ to: (\S+)", lines[i + 1] if i + 1 < len(lines) else "")
            path = diverted.group(1) if diverted else line
            if not os.access(path, os.X_OK):
                pytest.fail(f"{path} from kubernetes-client is not executable")
            return path
    pytest.fail("kubernetes-client does not list /usr/bin/kubectl")


def self_signed(directory) -> tuple[str, str]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesim")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / "tls.crt", directory / "tls.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_path), str(key_path)


def test_debian_kubectl_reads_what_the_client_created(tmp_path):
    kubectl = debian_kubectl()
    cert, key = self_signed(tmp_path)
    with KubeSim(nodes=2, token=TOKEN, tls_cert=cert, tls_key=key, **FAST) as sim:
        assert sim.url.startswith("https://")
        config = client.Configuration(host=sim.url, api_key={"authorization": f"Bearer {TOKEN}"})
        config.ssl_ca_cert = cert
        with client.ApiClient(config) as k8s:
            core, batch = client.CoreV1Api(k8s), client.BatchV1Api(k8s)
            core.create_namespace({"metadata": {"name": "ml"}})
            batch.create_namespaced_job("ml", job_manifest("kjob", annotations={"kubesim.paas-studio/run-seconds": "60"}))
            pod = wait_until(lambda: [p for p in core.list_namespaced_pod("ml").items if p.status.phase == "Running"])[0]

        kubeconfig = {"apiVersion": "v1", "kind": "Config", "current-context": "sim",
                      "clusters": [{"name": "sim", "cluster": {
                          "server": sim.url,
                          "certificate-authority-data": base64.b64encode(open(cert, "rb").read()).decode()}}],
                      "users": [{"name": "tester", "user": {"token": TOKEN}}],
                      "contexts": [{"name": "sim", "context": {"cluster": "sim", "user": "tester"}}]}
        (tmp_path / "config").write_text(yaml.safe_dump(kubeconfig))
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
               "KUBECONFIG": str(tmp_path / "config")}

        def kubectl_run(*args) -> str:
            done = subprocess.run([kubectl, "--cache-dir", str(tmp_path / "cache"), *args], capture_output=True,
                                  text=True, env=env, timeout=30, check=False)
            assert done.returncode == 0, f"kubectl {' '.join(args)} failed: {done.stderr}"
            return done.stdout

        jobs = json.loads(kubectl_run("get", "jobs", "-n", "ml", "-o", "json"))
        assert [j["metadata"]["name"] for j in jobs["items"]] == ["kjob"]
        assert jobs["items"][0]["kind"] == "Job"
        assert jobs["items"][0]["spec"]["template"]["spec"]["restartPolicy"] == "Never"

        header, *rows = kubectl_run("get", "pods", "-A").splitlines()
        assert header.split() == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
        assert ["ml", pod.metadata.name, "1/1", "Running", "0"] in [row.split()[:5] for row in rows], rows
        assert sim.stats()[("list", "pods")] >= 1
