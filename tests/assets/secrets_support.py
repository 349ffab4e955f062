"""Credentials made into Secrets on a cluster, one scenario for kubesim (tests/assets/test_credential_secrets.py)
and the real API server (tests/real/test_pull_secrets_real.py): a registry credential's Secret in the project's
namespace, and in a training's pods' `imagePullSecrets`; removed with the credential."""

import base64
import json

from kubernetes import client

from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.workloads.cluster_support import training_body, wait_for
from tests.workloads.test_e2e import pods_of, submit, sync

REGISTRY = "registry.example.com:5000"
PASSWORD = "s3cr3t-pull-password"


def read_secret(org, name: str, namespace: str | None = None):
    try:
        return client.CoreV1Api(org.k8s).read_namespaced_secret(name, namespace or org.namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def decoded(secret, key: str) -> str:
    return base64.b64decode(secret.data[key]).decode()


def registry_credential_reaches_the_pods(org) -> None:
    admin = bearer_client(UserFactory(username=f"credentials-admin-{org.project.name}", platform_admin=True))
    made = admin.post("/api/v1/asset/credentials/docker-registry", {
        "meta": {"name": "puller", "scope": "project", "projectId": org.project.pk},
        "spec": {"url": f"https://{REGISTRY}/", "user": "puller", "password": PASSWORD}}, format="json")
    assert made.status_code == 202, made.json()
    credential_id = made.json()["meta"]["id"]
    name = f"studio-credential-{credential_id}"

    secret = wait_for(lambda: read_secret(org, name), timeout=60, what=f"Secret {name}")
    assert secret.type == "kubernetes.io/dockerconfigjson"
    assert secret.metadata.labels == {"app.kubernetes.io/managed-by": "paas-studio",
                                      "paas-studio/credential-id": credential_id,
                                      "paas-studio/credential-kind": "dockerRegistry",
                                      "paas-studio/project": org.project.name}
    auth = base64.b64encode(f"puller:{PASSWORD}".encode()).decode()
    assert json.loads(decoded(secret, ".dockerconfigjson")) == {
        "auths": {REGISTRY: {"username": "puller", "password": PASSWORD, "auth": auth}}}
    assert PASSWORD not in json.dumps(made.json())

    workload_id = submit(org, "trainings", training_body(org.project, "pulls", imagePullSecrets=[{"name": "own"}]))
    pods = wait_for(lambda: pods_of(org, workload_id), step=lambda: sync(org), timeout=120, what="the training's pod")
    assert [s.name for s in pods[0].spec.image_pull_secrets] == ["own", name]

    assert admin.delete(f"/api/v1/asset/credentials/docker-registry/{credential_id}").status_code == 202
    wait_for(lambda: read_secret(org, name) is None, timeout=60, what=f"Secret {name} removed")
    assert org.api.delete(f"/api/v1/workloads/trainings/{workload_id}").status_code in (200, 202, 204)
