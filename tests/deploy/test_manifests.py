"""The manifests that run PaaS Studio itself on Kubernetes (deploy/paas-studio), read as a reviewer would: every
pod unprivileged with probes and requests, the names they reference existing, one beat, and every setting they
give documented in docs/configuration.md. The real API server's verdict on them is tests/real/test_deploy_dry_run.py."""

import re

from tests.deploy.manifests import ROOT, by_kind, rendered


def pod_specs(docs):
    for doc in docs:
        if doc["kind"] in ("Deployment", "Job"):
            yield doc["kind"], doc["metadata"]["name"], doc["spec"]["template"]


def test_the_folder_holds_what_the_product_needs():
    docs = rendered()
    assert {doc["metadata"].get("namespace") for doc in docs if doc["kind"] != "Namespace"} == {"paas-studio"}
    assert set(by_kind(docs, "Deployment")) == {"paas-studio-web", "paas-studio-worker", "paas-studio-beat",
                                                "paas-studio-watcher", "paas-studio-streams"}
    assert set(by_kind(docs, "Job")) == {"paas-studio-migrate"}
    assert set(by_kind(docs, "HorizontalPodAutoscaler")) == {"paas-studio-web", "paas-studio-worker"}
    assert set(by_kind(docs, "PodDisruptionBudget")) == {"paas-studio-web", "paas-studio-worker",
                                                         "paas-studio-watcher", "paas-studio-streams"}
    assert set(by_kind(docs, "Service")) == {"paas-studio-web", "paas-studio-streams"}
    assert set(by_kind(docs, "Ingress")) == {"paas-studio", "paas-studio-streams"}


def test_the_sessions_paths_go_to_the_asgi_pods():
    """exec, attach and port-forward (WebSockets) reach uvicorn's ASGI application; the rest gunicorn's WSGI."""
    docs = rendered()
    streams = by_kind(docs, "Deployment")["paas-studio-streams"]["spec"]["template"]["spec"]["containers"][0]
    assert streams["command"][:2] == ["uvicorn", "config.asgi:application"]
    paths = by_kind(docs, "Ingress")["paas-studio-streams"]["spec"]["rules"][0]["http"]["paths"]
    pattern = re.compile(paths[0]["path"])
    assert paths[0]["backend"]["service"]["name"] == "paas-studio-streams"
    for path in ("/api/v1/workloads/0b6e/exec", "/api/v1/workloads/0b6e/attach", "/api/v1/workloads/0b6e/portforward"):
        assert pattern.match(path), path
    assert not pattern.match("/api/v1/workloads/0b6e/pods") and not pattern.match("/api/v1/workloads/0b6e/execs")


def test_every_pod_runs_unprivileged_with_requests_and_no_cluster_token():
    docs = rendered()
    accounts = by_kind(docs, "ServiceAccount")
    for kind, name, template in pod_specs(docs):
        spec = template["spec"]
        assert accounts[spec["serviceAccountName"]]["automountServiceAccountToken"] is False, name
        assert spec["securityContext"]["runAsNonRoot"] is True and spec["securityContext"]["runAsUser"] != 0, name
        for container in spec.get("initContainers", []) + spec["containers"]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False, (name, container["name"])
            assert context["capabilities"]["drop"] == ["ALL"] and context["readOnlyRootFilesystem"] is True
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), (kind, name)
            assert container["image"].startswith("registry.example.com/paas-studio:"), container["image"]


def test_web_probes_its_health_and_readiness_endpoints_and_waits_for_migrations():
    web = by_kind(rendered(), "Deployment")["paas-studio-web"]["spec"]["template"]["spec"]
    container = web["containers"][0]
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["command"][:2] == ["gunicorn", "config.wsgi:application"]
    assert container["command"][container["command"].index("--worker-class") + 1] == "gevent"
    assert "migrate --check" in " ".join(web["initContainers"][0]["command"])


def test_one_beat_replaced_not_overlapped():
    beat = by_kind(rendered(), "Deployment")["paas-studio-beat"]["spec"]
    assert beat["replicas"] == 1 and beat["strategy"] == {"type": "Recreate"}
    assert beat["template"]["spec"]["containers"][0]["command"][:4] == ["celery", "-A", "config", "beat"]


def test_the_watcher_runs_a_standby_and_proves_it_is_alive():
    watcher = by_kind(rendered(), "Deployment")["paas-studio-watcher"]["spec"]
    container = watcher["template"]["spec"]["containers"][0]
    assert watcher["replicas"] == 2  # each cluster followed by its lease's holder; the other takes over
    assert container["command"][:3] == ["python", "manage.py", "cluster_watch"]
    alive = container["command"][container["command"].index("--alive-file") + 1]
    assert alive in container["livenessProbe"]["exec"]["command"][-1]
    assert any(m["mountPath"] == "/tmp" for m in container["volumeMounts"]) and alive.startswith("/tmp/")


def test_references_point_at_what_exists():
    docs = rendered()
    deployments = by_kind(docs, "Deployment")
    labels = {name: d["spec"]["template"]["metadata"]["labels"] for name, d in deployments.items()}
    for hpa in by_kind(docs, "HorizontalPodAutoscaler").values():
        assert hpa["spec"]["scaleTargetRef"]["name"] in deployments
    for pdb in by_kind(docs, "PodDisruptionBudget").values():
        wanted = pdb["spec"]["selector"]["matchLabels"]
        assert [n for n, pod in labels.items() if wanted.items() <= pod.items()] == [pdb["metadata"]["name"]]
    service = by_kind(docs, "Service")["paas-studio-web"]
    assert service["spec"]["selector"].items() <= labels["paas-studio-web"].items()
    backend = by_kind(docs, "Ingress")["paas-studio"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]
    assert backend["service"]["name"] == "paas-studio-web"
    config = set(by_kind(docs, "ConfigMap"))
    for _, name, template in pod_specs(docs):
        for container in template["spec"].get("initContainers", []) + template["spec"]["containers"]:
            refs = container["envFrom"]
            assert {r["configMapRef"]["name"] for r in refs if "configMapRef" in r} <= config, name
            assert {r["secretRef"]["name"] for r in refs if "secretRef" in r} == {"paas-studio-secrets"}


def test_every_setting_given_is_one_the_configuration_page_documents():
    table = (ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z0-9_]+)`", table, re.MULTILINE))
    documented |= {name for row in re.findall(r"^\| (`[A-Z0-9_]+`(?:, `[A-Z0-9_]+`)+)", table, re.MULTILINE)
                   for name in re.findall(r"`(\w+)`", row)}
    config = by_kind(rendered(), "ConfigMap")["paas-studio-config"]["data"]
    secrets_comment = (ROOT / "deploy" / "paas-studio" / "configmap.yaml").read_text()
    secret_keys = set(re.findall(r"--from-literal=([A-Z_]+)=", secrets_comment))
    assert secret_keys == {"SECRET_KEY", "FIELD_ENCRYPTION_KEY", "DATABASE_URL", "REDIS_URL", "METRICS_TOKEN"}
    assert set(config) | secret_keys <= documented, (set(config) | secret_keys) - documented
