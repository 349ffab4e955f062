"""Credentials made into Kubernetes Secrets on kubesim, through the Celery tasks (a real worker): in the namespaces
of the scope each serves, following projects made and deleted, removed with the credential; a registry
credential's Secret in the pods' `imagePullSecrets`. The same registry scenario runs on the real API server in
tests/real/test_pull_secrets_real.py."""

import uuid

import pytest
from kubernetes import client

from studio.services import model_delete, project_create
from tests.assets.secrets_support import decoded, read_secret, registry_credential_reaches_the_pods
from tests.conftest import bearer_client
from tests.factories import DepartmentFactory, UserFactory
from tests.workloads.cluster_support import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_registry_credential_becomes_a_dockerconfigjson_secret_and_the_pods_pull_secret(worker, sim_org):
    registry_credential_reaches_the_pods(sim_org)


def test_secrets_follow_the_scope_projects_made_and_deleted_and_the_credential(worker, sim_org):
    root = UserFactory(username=f"root-{sim_org.project.name}", platform_admin=True)
    admin = bearer_client(root)
    made = admin.post("/api/v1/asset/credentials/generic-secret", {
        "meta": {"name": "tokens", "scope": "cluster", "clusterId": str(sim_org.cluster.pk)},
        "spec": {"keyValuePairs": [{"key": "TOKEN", "value": "s3cr3t-token"}, {"key": "EMPTY"}]}}, format="json")
    assert made.status_code == 202, made.json()
    keys = admin.post("/api/v1/asset/credentials/access-key", {
        "meta": {"name": "keys", "scope": "department", "departmentId": str(sim_org.project.department_id)},
        "spec": {"accessKeyId": "AKIAEXAMPLE", "secretAccessKey": "s3cr3t-key"}}, format="json")
    assert keys.status_code == 202, keys.json()
    existing = admin.post("/api/v1/asset/credentials/password", {
        "meta": {"name": "theirs", "scope": "project", "projectId": sim_org.project.pk},
        "spec": {"existingSecretName": "made-by-someone"}}, format="json")
    assert existing.status_code == 202, existing.json()
    generic = f"studio-credential-{made.json()['meta']['id']}"
    access = f"studio-credential-{keys.json()['meta']['id']}"

    found = wait_for(lambda: read_secret(sim_org, generic), timeout=60, what="the generic secret")
    assert found.type == "Opaque"
    assert {k: decoded(found, k) for k in found.data} == {"TOKEN": "s3cr3t-token", "EMPTY": ""}
    found = wait_for(lambda: read_secret(sim_org, access), timeout=60, what="the access key")
    assert {k: decoded(found, k) for k in found.data} == {  # the S3 CSI driver's keys too
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE", "AWS_SECRET_ACCESS_KEY": "s3cr3t-key",
        "s3-access-key-id": "AKIAEXAMPLE", "s3-secret-access-key": "s3cr3t-key"}

    # A new project of the cluster, in another department: the cluster's credential, not the department's.
    other = project_create(actor=root, name=f"n{uuid.uuid4().hex[:8]}", department=DepartmentFactory(),
                           cluster=sim_org.cluster)
    try:
        wait_for(lambda: read_secret(sim_org, generic, other.namespace), timeout=60, what="the secret in the new project")
        assert read_secret(sim_org, access, other.namespace) is None
        model_delete(other, actor=root)
        wait_for(lambda: read_secret(sim_org, generic, other.namespace) is None, timeout=60,
                 what="the deleted project's secret removed")
    finally:
        try:
            client.CoreV1Api(sim_org.k8s).delete_namespace(other.namespace)
        except client.ApiException as exc:
            if exc.status != 404:
                raise

    assert admin.delete(f"/api/v1/asset/credentials/generic-secret/{made.json()['meta']['id']}").status_code == 204
    wait_for(lambda: read_secret(sim_org, generic) is None, timeout=60, what="the generic secret removed")
    assert read_secret(sim_org, access) is not None  # the others stay
    names = [s.metadata.name for s in client.CoreV1Api(sim_org.k8s).list_namespaced_secret(
        sim_org.namespace, label_selector="paas-studio/credential-id").items]
    assert names == [access]  # none for the credential that names an existing Secret


def test_beats_resync_brings_back_a_secret_deleted_by_hand(worker, sim_org):
    from assets.tasks import clusters_credentials_sync

    root = UserFactory(username=f"root-{sim_org.project.name}", platform_admin=True)
    made = bearer_client(root).post("/api/v1/asset/credentials/generic-secret", {
        "meta": {"name": "tokens", "scope": "project", "projectId": sim_org.project.pk},
        "spec": {"keyValuePairs": [{"key": "TOKEN", "value": "s3cr3t-token"}]}}, format="json")
    assert made.status_code == 202, made.json()
    name = f"studio-credential-{made.json()['meta']['id']}"
    wait_for(lambda: read_secret(sim_org, name), timeout=60, what="the secret")
    client.CoreV1Api(sim_org.k8s).delete_namespaced_secret(name, sim_org.namespace)  # by hand: no event says it
    assert read_secret(sim_org, name) is None
    clusters_credentials_sync.delay()  # what beat sends every CREDENTIALS_RESYNC_SECONDS
    back = wait_for(lambda: read_secret(sim_org, name), timeout=60, what="the secret made again")
    assert decoded(back, "TOKEN") == "s3cr3t-token"
