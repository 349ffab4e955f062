"""A project whose workloads are all deleted can be deleted (security round 3, S18): the deleted rows, their history
and their launch Secrets' values go with it. One whose removal the cluster has not confirmed yet goes too, at once,
once its delete is sent again (round 4, 13: it was a 409 until the next sync round). A live workload, or a deleted
one whose cluster cannot be reached, keeps the project: a 409 that names it."""

import json

import pytest
from django.utils import timezone
from kubernetes import client

from profiles.models import LaunchSecret
from studio.models import Project
from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.workloads.cluster_support import make_workload
from workloads.cluster import push
from workloads.models import Workload, WorkloadEvent

pytestmark = pytest.mark.django_db


def deleted(project, name, *, phase="Deleted"):
    workload = make_workload(project, name, desired="Deleted")
    Workload.objects.filter(pk=workload.pk).update(actual_phase=phase, deleted_at=timezone.now())
    WorkloadEvent.objects.create(workload=workload, at=timezone.now(), reason="Delete", message="by bob")
    LaunchSecret.objects.create(workload_id=workload.pk, name=f"{name}-in-0000",
                                data_json=json.dumps({"token": "s3cret"}))
    return workload


@pytest.fixture
def root(client_for, org):
    return client_for(org.users.platform_admin)


def test_a_project_that_only_ran_deleted_workloads_is_deleted_with_them(root, org):
    gone = [deleted(org.b, "old-job"), deleted(org.b, "old-notebook")]
    answer = root.delete(f"/api/v1/org-unit/projects/{org.b.pk}")
    assert answer.status_code == 204, answer.content
    assert root.get(f"/api/v1/org-unit/projects/{org.b.pk}").status_code == 404
    assert not Workload.objects.filter(pk__in=[w.pk for w in gone]).exists()
    assert not LaunchSecret.objects.filter(workload_id__in=[w.pk for w in gone]).exists()
    assert not WorkloadEvent.objects.filter(workload_id__in=[w.pk for w in gone]).exists()


@pytest.mark.parametrize("state", ["live", "leaving, its cluster unreachable"])
def test_a_project_with_a_live_or_unconfirmed_workload_is_kept_with_a_409_naming_it(root, org, state):
    deleted(org.b, "old-job")
    if state == "live":
        make_workload(org.b, "running-job")
    else:  # org's clusters are addresses nothing answers on
        deleted(org.b, "running-job", phase="Deleting")
    answer = root.delete(f"/api/v1/org-unit/projects/{org.b.pk}")
    assert answer.status_code == 409, answer.content
    assert "running-job" in answer.json()["message"]
    assert ("could not be reached" in answer.json()["message"]) == (state != "live")
    assert root.get(f"/api/v1/org-unit/projects/{org.b.pk}").status_code == 200
    assert Workload.objects.filter(project=org.b).count() == 2  # nothing went


def test_the_portal_deletes_such_a_project_too(client, org):
    deleted(org.b, "old-job")
    client.force_login(org.users.platform_admin)
    assert client.post(f"/org/projects/{org.b.pk}/delete").status_code == 302
    assert not Workload.objects.filter(name="old-job").exists()
    assert not Project.objects.filter(pk=org.b.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_a_project_whose_only_workload_was_just_deleted_is_deleted_at_once(sim_org):
    """On kubesim, with no worker: the member's delete leaves the workload Deleting with its objects on the cluster
    (the removal task queued); the admin's project delete right after sends the removal itself and succeeds."""
    workload = make_workload(sim_org.project, "only-job")
    push.workload_push(workload.pk)
    batch = client.BatchV1Api(sim_org.k8s)
    selector = f"paas-studio/workload-id={workload.pk}"
    assert batch.list_namespaced_job(sim_org.namespace, label_selector=selector).items
    assert sim_org.api.delete(f"/api/v1/workloads/trainings/{workload.pk}").status_code in (202, 204)
    assert Workload.objects.get(pk=workload.pk).actual_phase == "Deleting"

    root = bearer_client(UserFactory(username=f"root-{sim_org.project.name}", platform_admin=True))
    answer = root.delete(f"/api/v1/org-unit/projects/{sim_org.project.pk}")
    assert answer.status_code == 204, answer.content
    assert not Workload.objects.filter(pk=workload.pk).exists()
    left = batch.list_namespaced_job(sim_org.namespace, label_selector=selector).items
    assert all(job.metadata.deletion_timestamp for job in left)
