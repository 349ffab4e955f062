"""A streaming session end to end: `/streaming/stream` -> a real Celery worker -> studio.clusters.kube -> kubesim (or, in
make e2e-real, the real API server) over HTTP, and back through sync rounds; the cluster is inspected with the official client, as kubectl would."""

import pytest
from kubernetes import client

from tests.factories import ApplicationFactory, ApplicationProfileFactory, ApplicationVersionFactory
from tests.workloads.cluster_support import wait_for
from workloads import manifests, tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def sync(org):
    tasks.cluster_sync.apply(args=[str(org.cluster.pk)])


def session(org, session_id: str) -> dict:
    response = org.api.get(f"/streaming/stream/{session_id}")
    assert response.status_code in (200, 202), response.json()
    assert (response.status_code == 200) is response.json()["status"]["status"]  # 202 until ready
    return response.json()


def objects(org, session_id: str) -> dict:
    selector = f"{manifests.WORKLOAD_ID_LABEL}={session_id}"
    return {
        "deployments": client.AppsV1Api(org.k8s).list_namespaced_deployment(org.namespace, label_selector=selector).items,
        "services": client.CoreV1Api(org.k8s).list_namespaced_service(org.namespace, label_selector=selector).items,
        "pods": client.CoreV1Api(org.k8s).list_namespaced_pod(org.namespace, label_selector=selector).items,
    }


def test_a_session_runs_answers_its_routes_and_delete_removes_its_objects(worker, cluster_org):
    app = ApplicationFactory(id="usd-viewer")
    ApplicationVersionFactory(application=app, version="1.0.0", container="nvcr.io/nvidia/omniverse/usd-viewer",
                              container_version="1.0.0")
    ApplicationProfileFactory(
        slug="l40s", owner_project=cluster_org.project,
        compute={"cpuCoreRequest": 1, "cpuMemoryRequest": "2Gi", "gpuDevicesRequest": 1},
        tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        service_annotations={"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
    )
    launched = cluster_org.api.post("/streaming/stream", {"id": "usd-viewer", "profile": "l40s"}, format="json")
    assert launched.status_code == 202, launched.json()
    session_id = launched.json()["id"]
    assert launched.json()["status"]["status"] is False

    ready = wait_for(lambda: (lambda s: s if s["status"]["status"] else None)(session(cluster_org, session_id)),
                     step=lambda: sync(cluster_org), timeout=60, what="the session to be ready")
    assert ready["status"] == {"condition": "ready", "message": "Session is active", "status": True}

    found = objects(cluster_org, session_id)
    assert len(found["deployments"]) == 1 and len(found["services"]) == 1
    deployment, service = found["deployments"][0], found["services"][0]
    assert deployment.spec.template.spec.containers[0].image == "nvcr.io/nvidia/omniverse/usd-viewer:1.0.0"
    assert deployment.spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"] == "1"
    assert service.spec.type == "LoadBalancer"
    assert service.metadata.annotations["service.beta.kubernetes.io/aws-load-balancer-type"] == "nlb"
    address = service.status.load_balancer.ingress[0].ip
    assert [(p.port, p.protocol) for p in service.spec.ports] == [(49100, "TCP"), (47998, "UDP")]
    assert ready["routes"] == {address: {"routes": [
        {"description": "signaling", "destination_port": 49100, "protocol": "TCP", "source_port": 49100},
        {"description": "media", "destination_port": 47998, "protocol": "UDP", "source_port": 47998},
    ]}}
    listed = cluster_org.api.get("/streaming/stream").json()
    assert listed["count"] == 1 and listed["items"] == [ready]

    ended = cluster_org.api.delete("/streaming/stream", {"id": session_id}, format="json")
    assert ended.status_code == 204
    wait_for(lambda: not any(objects(cluster_org, session_id).values()), step=lambda: sync(cluster_org), timeout=60,
             what="the session's Deployment, Service and pods to be gone")
    assert cluster_org.api.get(f"/streaming/stream/{session_id}").status_code == 404
    assert cluster_org.api.get("/streaming/stream").json()["count"] == 0
