"""A standard kubectl works against the simulated cluster: discovery, JSON output
and server-side printed tables. kubectl sends bearer tokens only over TLS, so this cluster serves HTTPS with a
throwaway certificate, which the official client verifies too."""

import base64
import json
import os
import shutil
import subprocess

import pytest
import yaml
from kubernetes import client

from kubesim import KubeSim
from kubesim.certs import self_signed

from .conftest import FAST, TOKEN, job_manifest, wait_until


def kubectl_on_path() -> str:
    """Any conformant kubectl on PATH (the machine's own, or Debian's kubernetes-client that `make test` installs
    when there is none): the test is that a standard client reads what the product wrote."""
    path = shutil.which("kubectl")
    if path is None:
        pytest.fail("No kubectl on PATH. Run `make system-deps` (as root; it installs Debian's kubernetes-client) "
                    "or install any kubectl.")
    return path


def test_kubectl_reads_what_the_client_created(tmp_path):
    kubectl = kubectl_on_path()
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
