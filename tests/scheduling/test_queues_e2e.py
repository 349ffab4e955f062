"""The projects' and departments' KAI queues follow the organisation, end to end: the API -> a real Celery worker
-> kubesim's KAI; a quota change reaches the queue on commit, deleting a project removes its queue (and its
department's once it has no project there), and a queue changed behind the product's back is put right by the sync."""

import uuid

import pytest
from kubernetes import client

from studio import services
from tests.conftest import SIM_TOKEN, bearer_client, official_client
from tests.factories import UserFactory
from tests.workloads.cluster_support import wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
QUEUES = ("scheduling.run.ai", "v2", "queues")


@pytest.fixture
def setting(worker, start_kubesim):
    sim = start_kubesim(nodes=1, gpus_per_node=8, kai=True)
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    cluster = services.cluster_create(actor=root, name=f"kai-{uuid.uuid4().hex[:6]}", api_server_url=sim.url,
                                      token=SIM_TOKEN, verify_tls=False)
    k8s = official_client(sim)
    yield cluster, bearer_client(root), client.CustomObjectsApi(k8s)
    k8s.close()


def queue(custom, name):
    try:
        return custom.get_cluster_custom_object(*QUEUES, name)
    except client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def test_queues_follow_projects_and_departments(setting):
    cluster, api, custom = setting
    dept = api.post("/api/v1/org-unit/departments", {"name": f"d-{uuid.uuid4().hex[:4]}", "clusterId": str(cluster.pk),
                    "resources": [{"nodePool": {"name": "default"}, "gpu": {"deserved": 6, "limit": 8}}]},
                    format="json").json()
    project = api.post("/api/v1/org-unit/projects", {
        "name": f"p-{uuid.uuid4().hex[:4]}", "clusterId": str(cluster.pk), "parentId": dept["id"],
        "resources": [{"nodePool": {"name": "default"}, "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 3},
                       "cpu": {"deserved": 1500}}]}, format="json").json()
    parent, child = f"{dept['name']}.department", project["name"]
    made = wait_for(lambda: queue(custom, child), what="the project's queue")
    assert made["spec"]["parentQueue"] == parent
    assert made["spec"]["resources"] == {"gpu": {"quota": 2, "limit": 4, "overQuotaWeight": 3},
                                         "cpu": {"quota": 1500, "limit": -1, "overQuotaWeight": 1},
                                         "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}
    assert queue(custom, parent)["spec"]["resources"]["gpu"] == {"quota": 6, "limit": 8, "overQuotaWeight": 1}

    # A quota change in the API (PUT …/resources) reaches the queue when it commits.
    changed = api.put(f"/api/v1/org-unit/projects/{project['id']}/resources",
                      [{"nodePool": {"name": "default"}, "gpu": {"deserved": 1, "limit": 2}}], format="json")
    assert changed.status_code == 200, changed.json()
    wait_for(lambda: queue(custom, child)["spec"]["resources"]["gpu"]["quota"] == 1, what="the queue's new quota")

    # Changed behind the product's back: the next sync round puts it right.
    custom.patch_cluster_custom_object(*QUEUES, child, {"spec": {"resources": {"gpu": {"quota": 7}}}})
    wait_for(lambda: queue(custom, child)["spec"]["resources"]["gpu"]["quota"] == 1,
             step=lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)]), what="the drift repaired")
    # The project's status says what the queue holds, as the next round reads it.
    status = wait_for(lambda: (s := api.get(f"/api/v1/org-unit/projects/{project['id']}").json()["status"])
                      ["additionalStatusData"]["scheduler"]["deserved"] == 1.0 and s,
                      step=lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)]), what="the status read again")
    assert status["additionalStatusData"]["scheduler"]["queue"] == child
    department = api.get(f"/api/v1/org-unit/departments/{dept['id']}").json()["status"]
    assert department["additionalStatusData"]["scheduler"] == {**department["additionalStatusData"]["scheduler"],
                                                              "queue": parent, "deserved": 6.0, "limit": 8.0}

    # Deleting the project removes its queue, and its department's: no project of it on the cluster now.
    assert api.delete(f"/api/v1/org-unit/projects/{project['id']}").status_code == 204
    wait_for(lambda: queue(custom, child) is None and queue(custom, parent) is None, what="both queues gone")
