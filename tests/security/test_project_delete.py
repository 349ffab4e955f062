"""A project whose workloads are all deleted (and gone from the cluster) can be deleted (security round 3, S18): the
deleted rows, their history and their launch Secrets' values go with it. A workload still live, or still being
removed from the cluster, keeps the project: a 409 that names it."""

import json

import pytest
from django.utils import timezone

from profiles.models import LaunchSecret
from studio.models import Project
from tests.workloads.cluster_support import make_workload
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


@pytest.mark.parametrize("state", ["live", "still being removed"])
def test_a_project_with_a_live_or_leaving_workload_is_kept_with_a_409_naming_it(root, org, state):
    deleted(org.b, "old-job")
    if state == "live":
        make_workload(org.b, "running-job")
    else:
        deleted(org.b, "running-job", phase="Deleting")
    answer = root.delete(f"/api/v1/org-unit/projects/{org.b.pk}")
    assert answer.status_code == 409, answer.content
    assert "running-job" in answer.json()["message"]
    assert root.get(f"/api/v1/org-unit/projects/{org.b.pk}").status_code == 200
    assert Workload.objects.filter(project=org.b).count() == 2  # nothing went


def test_the_portal_deletes_such_a_project_too(client, org):
    deleted(org.b, "old-job")
    client.force_login(org.users.platform_admin)
    assert client.post(f"/org/projects/{org.b.pk}/delete").status_code == 302
    assert not Workload.objects.filter(name="old-job").exists()
    assert not Project.objects.filter(pk=org.b.pk).exists()
