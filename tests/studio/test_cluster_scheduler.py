"""A cluster's GPU scheduler in the API and on the clusters page: what is set, what is in force, and a change of
it enqueues the queues' task."""

import pytest

from studio.models import Cluster
from tests.conftest import bearer_client
from tests.factories import ClusterFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin():
    return bearer_client(UserFactory(platform_admin=True))


def test_the_api_says_which_scheduler_is_in_force(admin):
    cluster = ClusterFactory(kai_detected=True, gpu_capacity={"total": 16, "largestNode": 8})
    answer = admin.get(f"/api/v1/clusters/{cluster.pk}").json()
    assert answer["gpuScheduler"] == "auto"
    assert answer["scheduler"] == {"name": "kai", "kaiDetected": True, "gpuCapacity": {"total": 16, "largestNode": 8}}
    changed = admin.patch(f"/api/v1/clusters/{cluster.pk}", {"gpuScheduler": "none"}, format="json")
    assert changed.status_code == 200, changed.json()
    assert changed.json()["scheduler"]["name"] == "default"
    assert Cluster.objects.get(pk=cluster.pk).gpu_scheduler == "none"
    refused = admin.patch(f"/api/v1/clusters/{cluster.pk}", {"gpuScheduler": "volcano"}, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "gpuScheduler"


def test_a_new_cluster_takes_gpu_scheduler_from_the_setting(settings, admin):
    settings.GPU_SCHEDULER = "kai"
    created = admin.post("/api/v1/clusters", {"name": "forced", "apiServerUrl": "https://10.0.0.1:6443",
                                              "token": "t"}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["gpuScheduler"] == "kai" and created.json()["scheduler"]["name"] == "kai"


def test_a_change_of_scheduler_enqueues_the_queues_task(admin, django_capture_on_commit_callbacks, monkeypatch):
    sent = []
    monkeypatch.setattr("studio.queue.app.send_task", lambda name, args: sent.append((name, args)))
    cluster = ClusterFactory()
    with django_capture_on_commit_callbacks(execute=True):
        admin.patch(f"/api/v1/clusters/{cluster.pk}", {"gpuScheduler": "kai"}, format="json")
    assert ("studio.tasks.cluster_queues_sync", [str(cluster.pk)]) in sent


def test_the_clusters_page_shows_the_scheduler(client):
    user = UserFactory(platform_admin=True)
    client.force_login(user)
    ClusterFactory(name="with-kai", gpu_scheduler="kai")
    ClusterFactory(name="plain", gpu_scheduler="none")
    page = client.get("/org/clusters").content.decode()
    assert "KAI Scheduler (project queues)" in page and "Kubernetes (quotas checked at submission)" in page


def test_the_edit_page_sets_the_scheduler_and_leaving_it_out_keeps_it(client):
    client.force_login(UserFactory(platform_admin=True))
    cluster = ClusterFactory(name="edited", gpu_scheduler="auto")
    form = {"name": "edited", "api_server_url": "http://127.0.0.1:9", "token": "", "kubeconfig": "",
            "verify_tls": "on", "prometheus_url": ""}
    assert client.post(f"/org/clusters/{cluster.pk}/edit", {**form, "gpu_scheduler": "none"}).status_code == 302
    assert Cluster.objects.get(pk=cluster.pk).gpu_scheduler == "none"
    assert client.post(f"/org/clusters/{cluster.pk}/edit", form).status_code == 302
    assert Cluster.objects.get(pk=cluster.pk).gpu_scheduler == "none"


def test_a_new_project_has_its_namespace_made_and_labelled_by_the_policies(admin, django_capture_on_commit_callbacks,
                                                                             monkeypatch):
    """studio makes the namespace; the policies app, to its right, hears of the new project (studio's signal) and
    enqueues its own task for the Pod Security labels."""
    sent = []
    monkeypatch.setattr("studio.queue.app.send_task", lambda name, args: sent.append((name, args)))
    cluster = ClusterFactory()
    department = admin.post("/api/v1/org-unit/departments", {"name": "d1", "clusterId": str(cluster.pk)},
                            format="json")
    assert department.status_code in (200, 201), department.json()
    with django_capture_on_commit_callbacks(execute=True):
        created = admin.post("/api/v1/org-unit/projects", {"name": "p1", "clusterId": str(cluster.pk),
                                                           "parentId": department.json()["id"]}, format="json")
    assert created.status_code in (200, 201), created.json()
    project_id = int(created.json()["id"])
    assert ("studio.tasks.project_namespace_ensure", [project_id]) in sent
    assert ("policies.tasks.project_namespace_security", [project_id]) in sent
