"""The catalog launch's preview (`POST /api/v1/service-profiles/{id}/launch?dryRun=true`) on kubesim over
HTTP: the launch Secret listed with its values masked, each object with the cluster's verdict, nothing
created (no workload, no LaunchSecret row, nothing on the cluster)."""

from io import StringIO

import pytest
from django.core.management import call_command
from kubernetes import client

from profiles.models import LaunchSecret, ServiceProfile
from workloads.models import Workload, WorkloadEvent

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_catalog_preview_masks_the_secret_and_creates_nothing(sim_org):
    call_command("system_profiles", stdout=StringIO())
    client.CoreV1Api(sim_org.k8s).create_namespace({"metadata": {"name": sim_org.namespace}})
    profile = ServiceProfile.objects.get(name="jupyter-notebook")
    response = sim_org.api.post(f"/api/v1/service-profiles/{profile.id}/launch?dryRun=true",
                                {"projectId": sim_org.project.id, "name": "demo", "inputs": {}}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    kinds = [o["kind"] for o in body["objects"]]
    assert kinds[0] == "Secret" and "Deployment" in kinds
    secret = body["objects"][0]
    assert secret["manifest"]["data"] and set(secret["manifest"]["data"].values()) == {"***"}
    assert all(o["verdict"]["allowed"] is True for o in body["objects"]), body["objects"]
    assert body["policy"]["allowed"] is True and body["quota"]["allowed"] is True
    assert (Workload.objects.count(), WorkloadEvent.objects.count(), LaunchSecret.objects.count()) == (0, 0, 0)
    assert client.CoreV1Api(sim_org.k8s).list_namespaced_secret(sim_org.namespace).items == []
    assert client.AppsV1Api(sim_org.k8s).list_namespaced_deployment(sim_org.namespace).items == []


def test_a_viewer_may_not_preview_a_launch(sim_org, client_for):
    from studio.models import Level
    from tests.factories import MembershipFactory, UserFactory

    call_command("system_profiles", stdout=StringIO())
    viewer = UserFactory(username="viewer-launch-preview")
    MembershipFactory(user=viewer, project=sim_org.project, role=Level.VIEWER)
    profile = ServiceProfile.objects.get(name="jupyter-notebook")
    response = client_for(viewer).post(f"/api/v1/service-profiles/{profile.id}/launch?dryRun=true",
                                       {"projectId": sim_org.project.id, "name": "demo", "inputs": {}},
                                       format="json")
    assert response.status_code == 403, response.json()
