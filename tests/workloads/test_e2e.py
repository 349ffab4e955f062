"""The cluster path end to end: the workloads API -> a real Celery worker -> studio.clusters.kube -> kubesim over HTTP,
and back through sync rounds. The cluster is inspected with the official client, as kubectl would see it.
Sync rounds run in the test process (the beat task, applied), so each wait makes steady progress."""

from datetime import timedelta

import pytest
from django.utils import timezone
from kubernetes import client

from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import manifests, tasks
from workloads.cluster import phases
from workloads.models import MetricSample, Workload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def sync(org):
    tasks.cluster_sync.apply(args=[str(org.cluster.pk)])


def submit(org, path: str, body: dict) -> str:
    response = org.api.post(f"/api/v1/workloads/{path}", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()["workloadId"]


def workload(org, workload_id: str) -> dict:
    response = org.api.get(f"/api/v1/workloads/{workload_id}")
    assert response.status_code == 200, response.json()
    return response.json()


def wait_phase(org, workload_id: str, *wanted: str, timeout: float = 30.0) -> dict:
    return wait_for(lambda: (lambda w: w if w["phase"] in wanted else None)(workload(org, workload_id)),
                    step=lambda: sync(org), timeout=timeout, what=f"phase in {wanted}")


def phase_events(org, workload_id: str) -> list[str]:
    events = org.api.get(f"/api/v1/workloads/{workload_id}/events?limit=500").json()["events"]
    return [e["reason"] for e in reversed(events)]


def object_name(org, workload_id: str) -> str:
    row = Workload.objects.select_related("project").get(pk=workload_id)
    return manifests.object_name(manifests.WorkloadRef(str(row.pk), row.name, row.kind, org.project.name,
                                                       org.namespace))


def pods_of(org, workload_id: str) -> list:
    selector = f"{manifests.WORKLOAD_ID_LABEL}={workload_id}"
    return client.CoreV1Api(org.k8s).list_namespaced_pod(org.namespace, label_selector=selector).items


def test_a_training_is_created_then_runs_then_completes(worker, cluster_org):
    workload_id = submit(cluster_org, "trainings", training_body(cluster_org.project, "train"))
    done = wait_phase(cluster_org, workload_id, "Completed")
    assert done["completedAt"] and done["startedAt"]
    reasons = phase_events(cluster_org, workload_id)
    assert reasons[0] == "Submitted"
    seen = [r for r in reasons if r in ("Pending", "Initializing", "Running", "Completed")]
    assert seen.index("Running") < seen.index("Completed"), reasons
    job = client.BatchV1Api(cluster_org.k8s).read_namespaced_job(object_name(cluster_org, workload_id), cluster_org.namespace)
    assert job.metadata.labels[manifests.WORKLOAD_ID_LABEL] == workload_id
    assert job.status.succeeded == 1


def test_suspend_stops_the_job_and_its_pods_then_resume_runs_it_again(worker, cluster_org):
    body = training_body(cluster_org.project, "long", annotations=run_seconds(600))
    workload_id = submit(cluster_org, "trainings", body)
    wait_phase(cluster_org, workload_id, "Running")
    assert cluster_org.api.post(f"/api/v1/workloads/trainings/{workload_id}/suspend").status_code == 202

    stopped = wait_phase(cluster_org, workload_id, "Stopped")
    assert stopped["desiredPhase"] == "Stopped" and stopped["runningPods"] == 0
    job = client.BatchV1Api(cluster_org.k8s).read_namespaced_job(object_name(cluster_org, workload_id), cluster_org.namespace)
    assert job.spec.suspend is True
    wait_for(lambda: not pods_of(cluster_org, workload_id), what="the Job's pods to be gone")
    assert cluster_org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"] == []

    assert cluster_org.api.post(f"/api/v1/workloads/trainings/{workload_id}/resume").status_code == 202
    running = wait_phase(cluster_org, workload_id, "Running")
    assert running["runningPods"] == 1
    job = client.BatchV1Api(cluster_org.k8s).read_namespaced_job(object_name(cluster_org, workload_id), cluster_org.namespace)
    assert job.spec.suspend is False
    reasons = phase_events(cluster_org, workload_id)
    assert reasons.index("Suspend") < reasons.index("Stopped") < reasons.index("Resume")
    assert reasons[-1] == "Running", reasons


def test_delete_removes_every_object_and_the_workload(worker, cluster_org):
    body = training_body(cluster_org.project, "gone", annotations=run_seconds(600),
                         storage={"pvc": [{"claimName": "data", "path": "/data",
                                           "claimInfo": {"size": "1Gi", "accessModes": {"readWriteOnce": True}}}]})
    workload_id = submit(cluster_org, "trainings", body)
    wait_phase(cluster_org, workload_id, "Running")
    selector = f"{manifests.WORKLOAD_ID_LABEL}={workload_id}"
    claims = client.CoreV1Api(cluster_org.k8s).list_namespaced_persistent_volume_claim(
        cluster_org.namespace, label_selector=selector).items
    assert len(claims) == 1

    assert cluster_org.api.delete(f"/api/v1/workloads/trainings/{workload_id}").status_code == 204

    def deleted():
        listed = cluster_org.api.get("/api/v1/workloads?deleted=true").json()["workloads"]
        return [w for w in listed if w["id"] == workload_id and w["phase"] == "Deleted"]

    wait_for(deleted, step=lambda: sync(cluster_org), what="the workload to be Deleted")
    assert client.BatchV1Api(cluster_org.k8s).list_namespaced_job(cluster_org.namespace, label_selector=selector).items == []
    assert client.CoreV1Api(cluster_org.k8s).list_namespaced_persistent_volume_claim(
        cluster_org.namespace, label_selector=selector).items == []
    assert pods_of(cluster_org, workload_id) == []
    assert cluster_org.api.get(f"/api/v1/workloads/{workload_id}").status_code == 404


def inference_body(project, name: str) -> dict:
    return {
        "name": name, "projectId": project.id, "clusterId": str(project.cluster_id),
        "spec": {"image": "ghcr.io/example/serve:1", "servingPort": {"container": 8080, "protocol": "http"},
                 "autoscaling": {"minReplicas": 0, "maxReplicas": 3, "metric": "concurrency",
                                 "metricThreshold": 10, "scaleToZeroRetentionSeconds": 120}},
    }


def test_an_inference_scaling_to_zero_is_a_knative_service_with_its_autoscaling(worker, knative_org):
    org = knative_org  # kubesim, or the real server with Knative's CRD played by kubesim's node side
    workload_id = submit(org, "inferences", inference_body(org.project, "serve"))
    running = wait_phase(org, workload_id, "Running")
    service = client.CustomObjectsApi(org.k8s).get_namespaced_custom_object(
        "serving.knative.dev", "v1", org.namespace, "services", object_name(org, workload_id))
    annotations = service["spec"]["template"]["metadata"]["annotations"]
    assert annotations["autoscaling.knative.dev/min-scale"] == "0"
    assert annotations["autoscaling.knative.dev/max-scale"] == "3"
    assert annotations["autoscaling.knative.dev/metric"] == "concurrency"
    assert annotations["autoscaling.knative.dev/target"] == "10"
    assert annotations["autoscaling.knative.dev/scale-to-zero-pod-retention-period"] == "120s"
    name, revision = object_name(org, workload_id), f"{object_name(org, workload_id)}-00001"
    assert service["status"]["url"] == f"http://{name}.{org.namespace}.example.com"
    assert service["status"]["traffic"] == [{"revisionName": revision, "latestRevision": True, "percent": 100}]
    assert {c["type"]: c["status"] for c in service["status"]["conditions"]} == {
        "ConfigurationsReady": "True", "Ready": "True", "RoutesReady": "True"}
    endpoints = Workload.objects.get(pk=workload_id).endpoints
    assert endpoints["url"] == service["status"]["url"] and endpoints["serviceType"] == "Knative"
    assert running["runningPods"] == 1
    pods = pods_of(org, workload_id)
    assert [p.metadata.labels["serving.knative.dev/revision"] for p in pods] == [revision]
    assert pods[0].metadata.owner_references[0].kind == "Service" and pods[0].spec.node_name
    selector = f"{manifests.WORKLOAD_ID_LABEL}={workload_id}"
    hpas = org.k8s.call_api(f"/apis/autoscaling/v2/namespaces/{org.namespace}/horizontalpodautoscalers",
                            "GET", query_params=[("labelSelector", selector)], auth_settings=["BearerToken"],
                            response_type="object", _return_http_data_only=True)["items"]
    assert hpas == []


def hpa_of(k8s, namespace: str, name: str) -> dict:
    """The HPA as served (autoscaling/v2)."""
    return k8s.call_api(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/{name}", "GET",
                        auth_settings=["BearerToken"], response_type="object", _return_http_data_only=True)


def test_without_knative_an_inference_is_a_deployment_a_service_and_an_hpa(worker, cluster_org, start_kubesim):
    org, k8s = cluster_org, cluster_org.k8s
    if org.kind == "kubesim":  # the real server has no Knative; kubesim's session cluster has, so another one
        plain = start_kubesim(knative=False)
        org.cluster.api_server_url, org.cluster.prometheus_url = plain.url, plain.url + "/prometheus"
        org.cluster.save()
        from tests.conftest import official_client

        k8s = official_client(plain)
    workload_id = submit(org, "inferences", inference_body(org.project, "serve"))
    wait_phase(org, workload_id, "Running")
    name, selector = object_name(org, workload_id), f"{manifests.WORKLOAD_ID_LABEL}={workload_id}"
    deployment = client.AppsV1Api(k8s).read_namespaced_deployment(name, org.namespace)
    assert deployment.spec.replicas == 1  # an HPA cannot scale to zero
    service = client.CoreV1Api(k8s).read_namespaced_service(name, org.namespace)
    assert [p.target_port for p in service.spec.ports] == [8080]
    hpa = hpa_of(k8s, org.namespace, name)
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 3)
    assert hpa["spec"]["scaleTargetRef"]["name"] == name
    # A round lists the Services before the pods: one that began as the push made the Service can see the pod
    # Running and no Service yet. The address then comes with the next round, as a user sees it.
    row = wait_for(lambda: (lambda w: w if w.endpoints else None)(Workload.objects.get(pk=workload_id)),
                   step=lambda: sync(org), what="the workload's endpoints")
    assert row.cluster.has_knative is False
    assert row.endpoints["serviceAddress"] == service.spec.cluster_ip
    assert row.endpoints["ports"] == [{"name": "port-8080", "port": 8080}]
    assert client.CoreV1Api(k8s).list_namespaced_pod(org.namespace, label_selector=selector).items
    if k8s is not org.k8s:
        k8s.close()


def test_an_image_that_cannot_be_pulled_fails_the_training_with_the_reason(worker, cluster_org, monkeypatch):
    # The pull grace (2 minutes on a real cluster) shrinks to nothing here: the sync runs in this process.
    monkeypatch.setattr(phases, "IMAGE_PULL_GRACE", phases.timedelta(0))
    body = training_body(cluster_org.project, "bad", image="registry.example.com/does-not-exist:1")
    workload_id = submit(cluster_org, "trainings", body)
    failed = wait_phase(cluster_org, workload_id, "Failed")
    assert failed["phaseMessage"].startswith(("ErrImagePull", "ImagePullBackOff")), failed["phaseMessage"]
    assert "does-not-exist" in failed["phaseMessage"]
    assert "Failed" in phase_events(cluster_org, workload_id)


def test_with_no_free_gpus_a_training_is_pending_with_the_schedulers_reason(worker, cluster_org):
    body = training_body(cluster_org.project, "huge", compute={"gpuDevicesRequest": 16})
    workload_id = submit(cluster_org, "trainings", body)
    pending = wait_phase(cluster_org, workload_id, "Pending")
    wait_for(lambda: "Insufficient nvidia.com/gpu" in workload(cluster_org, workload_id)["phaseMessage"],
             step=lambda: sync(cluster_org), what="the scheduler's reason")
    assert pending["runningPods"] == 0
    assert "0/4 nodes are available" in workload(cluster_org, workload_id)["phaseMessage"]
    events = cluster_org.api.get(f"/api/v1/workloads/{workload_id}/events").json()["events"]
    scheduling = [e for e in events if e["reason"] == "FailedScheduling"]
    assert len(scheduling) == 1 and "Insufficient nvidia.com/gpu" in scheduling[0]["message"]


def test_metrics_collected_from_the_cluster_are_served_by_the_api(worker, knative_org):
    """On kubesim, and on the real server: metrics.k8s.io through its aggregation layer and Prometheus's DCGM
    and Knative series, both served by kubesim's node side from the pods it plays."""
    body = inference_body(knative_org.project, "gpu-serve")
    body["spec"]["autoscaling"] = {"minReplicas": 1, "maxReplicas": 1}
    body["spec"]["compute"] = {"gpuDevicesRequest": 1, "cpuCoreRequest": 0.5, "cpuMemoryRequest": "1G"}
    workload_id = submit(knative_org, "inferences", body)
    wait_phase(knative_org, workload_id, "Running")
    start = timezone.now()
    for _ in range(2):
        tasks.cluster_collect_metrics.apply(args=[str(knative_org.cluster.pk)])
    end = timezone.now()
    types = ["GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES", "CPU_USAGE_CORES", "CPU_REQUEST_CORES",
             "CPU_MEMORY_REQUEST_BYTES", "RUNNING_POD_COUNT", "ALLOCATED_GPU", "THROUGHPUT", "LATENCY"]
    query = {"metricType": types, "start": start.isoformat(), "end": end.isoformat(), "numberOfSamples": 0}
    response = knative_org.api.get(f"/api/v1/workloads/inferences/{workload_id}/metrics", query)
    assert response.status_code == 200, response.json()
    by_type = {m["type"]: m for m in response.json()["measurements"]}
    assert set(by_type) == set(types)
    for metric in types:
        assert len(by_type[metric]["values"]) == 2, (metric, by_type[metric])
    assert 0 <= float(by_type["GPU_UTILIZATION"]["values"][0]["value"]) <= 100
    assert float(by_type["CPU_USAGE_CORES"]["values"][0]["value"]) > 0
    assert float(by_type["CPU_REQUEST_CORES"]["values"][0]["value"]) == 0.5
    assert float(by_type["CPU_MEMORY_REQUEST_BYTES"]["values"][0]["value"]) == 1e9
    assert by_type["RUNNING_POD_COUNT"]["values"][0]["value"] == "1"
    assert by_type["ALLOCATED_GPU"]["values"][0]["value"] == "1"
    assert float(by_type["THROUGHPUT"]["values"][0]["value"]) > 0

    pod = knative_org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"][0]
    per_pod = knative_org.api.get(f"/api/v1/workloads/inferences/{workload_id}/pods/{pod['id']}/metrics",
                              {**query, "metricType": ["GPU_UTILIZATION", "LATENCY"]})
    assert per_pod.status_code == 200, per_pod.json()
    gpu = next(m for m in per_pod.json()["measurements"] if m["type"] == "GPU_UTILIZATION")
    assert gpu["labels"].get("gpu") is not None and len(gpu["values"]) == 2

    MetricSample.objects.filter(workload_id=workload_id).update(timestamp=timezone.now() - timedelta(days=30))
    tasks.metrics_purge.apply()
    assert not MetricSample.objects.filter(workload_id=workload_id).exists()
