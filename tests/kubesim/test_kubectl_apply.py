"""kubectl on PATH against the simulated cluster exactly as `make run` starts it (scripts/run_dev.py's command, on
free ports): `kubectl apply -f` with kubectl's client-side validation (it downloads /openapi/v2 as protobuf) and
`kubectl apply --server-side` with its field-manager conflicts; `kubectl get configmaps` shows their DATA."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from scripts.run_dev import kubesim_command

from .test_kubectl import kubectl_on_path

JOB = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "trainer", "namespace": "ml"},
       "spec": {"template": {"spec": {"restartPolicy": "Never",
                                      "containers": [{"name": "main", "image": "busybox:1.36"}]}}}}
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ml"},
              "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                             "ports": [{"containerPort": 80}]}]}}}}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def make_run_cluster(tmp_path):
    """`make run`'s kubesim process; yields its kubeconfig."""
    port, tls_port, kubeconfig = free_port(), free_port(), tmp_path / "kubesim" / "kubeconfig"
    command = kubesim_command(str(port), str(tls_port), kubeconfig)
    assert command[:3] == [sys.executable, "-m", "kubesim"]
    process = subprocess.Popen(command, cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not kubeconfig.exists():
            assert process.poll() is None and time.monotonic() < deadline, process.stderr.read().decode()
            time.sleep(0.1)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as answer:
            assert answer.read() == b"ok"  # the product's plain-HTTP door stays open beside kubectl's
        yield kubeconfig
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_kubectl_apply_with_validation_and_server_side_apply(make_run_cluster, tmp_path):
    kubectl = kubectl_on_path()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "KUBECONFIG": str(make_run_cluster)}
    assert yaml.safe_load(make_run_cluster.read_text())["clusters"][0]["cluster"]["server"].startswith("https://")

    def run(*args, stdin: dict | None = None, ok: bool = True) -> subprocess.CompletedProcess:
        done = subprocess.run([kubectl, "--cache-dir", str(tmp_path / "cache"), *args], env=env, text=True,
                              input=json.dumps(stdin) if stdin is not None else None, capture_output=True,
                              timeout=60, check=False)
        assert (done.returncode == 0) == ok, f"kubectl {' '.join(args)}: {done.stdout}{done.stderr}"
        return done

    assert run("apply", "-f", "-", stdin={"apiVersion": "v1", "kind": "Namespace",
                                          "metadata": {"name": "ml"}}).stdout.strip() == "namespace/ml created"

    # Client-side apply with kubectl's validation on (the default): a manifest with a wrong type or an unknown
    # field is refused by kubectl itself, from the cluster's OpenAPI document, before anything is sent.
    bad = json.loads(json.dumps(JOB))
    bad["spec"]["completions"] = "two"
    bad["spec"]["parallelizm"] = 2
    refused = run("apply", "-f", "-", stdin=bad, ok=False)
    assert "error validating data" in refused.stderr, refused.stderr
    assert 'unknown field "parallelizm" in io.k8s.api.batch.v1.JobSpec' in refused.stderr
    assert "invalid type for io.k8s.api.batch.v1.JobSpec.completions: got \"string\", expected \"integer\"" \
        in refused.stderr
    assert run("get", "jobs", "-n", "ml", "-o", "name").stdout == ""
    assert run("apply", "-f", "-", stdin=JOB).stdout.strip() == "job.batch/trainer created"
    assert run("apply", "-f", "-", stdin=DEPLOYMENT).stdout.strip() == "deployment.apps/web created"
    changed = json.loads(json.dumps(DEPLOYMENT))
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    assert run("apply", "-f", "-", stdin=changed).stdout.strip() == "deployment.apps/web configured"
    image = run("get", "deployment", "web", "-n", "ml", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
    assert image.stdout == "nginx:1.28"

    # Server-side apply: the server merges, owns fields per manager, and refuses another manager's change.
    settings = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "ml"},
                "data": {"mode": "fast", "level": "3"}}
    assert run("apply", "--server-side", "-f", "-", stdin=settings).stdout.strip() == \
        "configmap/settings serverside-applied"
    other = {**settings, "data": {"mode": "slow"}}
    conflict = run("apply", "--server-side", "--field-manager", "tuner", "-f", "-", stdin=other, ok=False)
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .data.mode' in conflict.stderr, conflict.stderr
    run("apply", "--server-side", "--field-manager", "tuner", "--force-conflicts", "-f", "-", stdin=other)
    # kubectl >= 1.21 hides managedFields unless asked; 1.20 (Debian's) shows them and lacks the flag.
    shows = ["--show-managed-fields"] if "--show-managed-fields" in run("get", "--help").stdout else []
    applied = json.loads(run("get", "configmap", "settings", "-n", "ml", "-o", "json", *shows).stdout)
    assert applied["data"] == {"mode": "slow", "level": "3"}
    assert {(e["manager"], e["operation"]) for e in applied["metadata"]["managedFields"]} == {
        ("kubectl", "Apply"), ("tuner", "Apply")}
    # kubectl's own manager re-applies without `level`: the server removes the field it alone owned.
    run("apply", "--server-side", "-f", "-", stdin={**settings, "data": {"mode": "slow"}})
    assert json.loads(run("get", "configmap", "settings", "-n", "ml", "-o", "json").stdout)["data"] == {"mode": "slow"}

    header, *rows = run("get", "configmaps", "-n", "ml").stdout.splitlines()
    assert header.split() == ["NAME", "DATA", "AGE"] and ["settings", "1"] in [r.split()[:2] for r in rows], rows
