"""Fields that reach a pod, held to the secure default on every workload type and path (security round 3):
GPUs only through the fields the quota counts (S01), node pools only through `nodePools` (S02), Run:ai's
priority classes (S03), no hostPath for inferences either (S04), no security-relevant annotation (S05).
Each is a member's request through the API, answered with a 400 that names the field; nothing is created."""

import pytest

from studio.models import NodePool
from workloads.models import Workload

pytestmark = pytest.mark.django_db

# The create paths of the workloads API, each with the smallest spec of its kind.
KINDS = {
    "training": ("trainings", {}),
    "workspace": ("workspaces", {}),
    "inference": ("inferences", {}),
    "distributed": ("distributed", {"distributedFramework": "PyTorch", "numWorkers": 1}),
}


@pytest.fixture
def member(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 4, 4
    org.a.save()
    return client_for(org.users.member)


def create(api, org, kind, spec, name="w"):
    path, extra = KINDS[kind]
    body = {"name": name, "projectId": org.a.id, "clusterId": str(org.cluster.id),
            "spec": {"image": "python:3.11", **extra, **spec}}
    return api.post(f"/api/v1/workloads/{path}", body, format="json")


def errors_of(response) -> dict:
    assert response.status_code == 400, (response.status_code, response.content[:500])
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def patch_inference(api, org, spec_changes):
    created = create(api, org, "inference", {})
    assert created.status_code in (200, 202), created.json()
    return api.patch(f"/api/v1/workloads/inferences/{created.json()['workloadId']}", {"spec": spec_changes},
                     format="json")


# --- S01: GPUs outside the quota --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("resource", ["nvidia.com/gpu", "nvidia.com/mig-3g.20gb", "nvidia.com/gpu.shared",
                                      "amd.com/gpu", "gpu.intel.com/i915", "cpu", "memory"])
def test_gpus_and_core_resources_cannot_come_in_as_extended_resources(member, org, kind, resource):
    spec = {"compute": {"extendedResources": [{"resource": resource, "quantity": 8}]}}
    errors = errors_of(create(member, org, kind, spec))
    assert list(errors) == ["spec.compute.extendedResources[0].resource"], errors
    assert Workload.objects.count() == 0


def test_an_inference_update_cannot_add_gpus_as_an_extended_resource(member, org):
    response = patch_inference(member, org, {"compute": {"extendedResources": [
        {"resource": "nvidia.com/gpu", "quantity": 8}]}})
    assert "spec.compute.extendedResources[0].resource" in errors_of(response)


def test_a_vendor_resource_still_reaches_the_pod_as_before(member, org):
    spec = {"compute": {"extendedResources": [{"resource": "hardware-vendor.example/foo", "quantity": 2}]}}
    response = create(member, org, "training", spec)
    assert response.status_code == 200, response.json()


def test_a_kit_profile_cannot_hold_gpus_as_an_extended_resource(client_for, org):
    admin = client_for(org.users.platform_admin)
    body = {"id": "gpus", "name": "GPUs", "supportedApplications": [{"name": "*", "versions": ["*"]}],
            "compute": {"extendedResources": [{"resource": "nvidia.com/gpu", "quantity": 8}]}}
    response = admin.post("/cfg/profiles", body, format="json")
    assert response.status_code == 422  # Kit's status for a request that does not validate
    assert [e["field"] for e in response.json()["errors"]] == ["compute.extendedResources[0].resource"]


# Found again while attacking every field: each pod's GPUs counted once, whatever the number of pods.
@pytest.mark.parametrize(("kind", "spec"), [
    ("training", {"parallelism": 8, "completions": 8}),
    ("inference", {"autoscaling": {"minReplicas": 8, "maxReplicas": 8}}),
    ("inference", {"autoscaling": {"minReplicas": 1, "maxReplicas": 8, "metric": "concurrency",
                                   "metricThreshold": 4}}),
], ids=["training-parallelism", "inference-replicas", "inference-scaling-to"])
def test_gpus_count_once_per_pod_the_workload_may_run(member, org, kind, spec):
    """Project alpha may use 4 GPUs: eight pods of one GPU each are eight, not one."""
    answer = create(member, org, kind, {**spec, "compute": {"gpuDevicesRequest": 1}})
    assert answer.status_code == 400, answer.content
    assert "spec.compute" in errors_of(answer) and "8 GPUs requested" in errors_of(answer)["spec.compute"]
    fits = create(member, org, kind, {**spec, "compute": {"gpuDevicesRequest": 1, "gpuRequestType": "portion",
                                                          "gpuPortionRequest": 0.5}}, name="half")
    assert fits.status_code in (200, 202), fits.json()
    assert member.get(f"/api/v1/workloads/{fits.json()['workloadId']}").json()["requestedGpus"] == 4.0


def test_an_inference_update_cannot_scale_past_the_quota(member, org):
    errors = errors_of(patch_inference(member, org, {"compute": {"gpuDevicesRequest": 1},
                                                     "autoscaling": {"minReplicas": 1, "maxReplicas": 8,
                                                                     "metric": "concurrency", "metricThreshold": 4}}))
    assert "spec.compute" in errors


# --- S02: node pools only through nodePools ---------------------------------------------------------------

@pytest.fixture
def pools(org):
    """Pools a and b on the cluster; project A has quota in pool a only."""
    for name in ("pool-a", "pool-b"):
        NodePool.objects.create(cluster=org.cluster, name=name)
    org.a.node_pool_resources = [{"nodePool": {"name": "pool-a"}, "gpu": {"deserved": 4, "limit": 4}}]
    org.a.save()


@pytest.mark.parametrize("kind", KINDS)
def test_node_affinity_on_the_node_pool_label_is_refused(member, org, pools, kind):
    affinity = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "run.ai/node-pool", "operator": "In", "values": ["pool-b"]}]}]}
    errors = errors_of(create(member, org, kind, {"nodeAffinityRequired": affinity}))
    assert list(errors) == ["spec.nodeAffinityRequired.nodeSelectorTerms[0].matchExpressions[0].key"], errors


@pytest.mark.parametrize("kind", KINDS)
def test_a_catch_all_toleration_is_refused(member, org, kind):
    errors = errors_of(create(member, org, kind, {"tolerations": [{"operator": "Exists"}]}))
    assert list(errors) == ["spec.tolerations[0].key"], errors


def test_a_workload_naming_no_pool_is_kept_to_the_pools_of_its_quota(member, org, pools):
    """Any other node affinity (a node's host name in pool b) is ANDed with the project's pools."""
    affinity = {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-in-pool-b"]}]}]}
    response = create(member, org, "training", {"nodeAffinityRequired": affinity})
    assert response.status_code == 200, response.json()
    assert response.json()["spec"]["nodePools"] == ["pool-a"]


def test_an_inference_update_is_held_to_the_project_pools(member, org, pools):
    errors = errors_of(patch_inference(member, org, {"nodePools": ["pool-b"]}))
    assert "spec.nodePools[0]" in errors, errors


# --- S03: priority classes --------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_a_system_priority_class_is_refused(member, org, kind):
    errors = errors_of(create(member, org, kind, {"priorityClass": "system-node-critical"}))
    assert errors == {"spec.priorityClass": (
        "system-node-critical is not allowed: must be one of train, build, interactive-preemptible "
        "(policy: tenant default)")}


def test_a_runai_priority_class_is_taken_and_an_admin_may_narrow_the_list(client_for, member, org):
    assert create(member, org, "training", {"priorityClass": "build"}).status_code == 200
    admin = client_for(org.users.platform_admin)
    narrowed = admin.put("/api/v2/policy/trainings", {"meta": {"name": "p", "scope": "project", "projectId": org.a.id},
                                                       "policy": {"rules": {"priorityClass": {"options": [
                                                           {"value": "train"}]}}}}, format="json")
    assert narrowed.status_code == 200, narrowed.json()
    assert errors_of(create(member, org, "training", {"priorityClass": "build"}, name="w2")) == {
        "spec.priorityClass": "build is not allowed: must be one of train (policy: project alpha)"}
    assert create(member, org, "training", {"priorityClass": "train"}, name="w3").status_code == 200


def test_an_inference_update_cannot_raise_its_priority_class(member, org):
    errors = errors_of(patch_inference(member, org, {"priorityClass": "system-cluster-critical"}))
    assert "spec.priorityClass" in errors


# --- S04: hostPath in every workload type -----------------------------------------------------------------

ROOT = {"hostPath": [{"name": "root", "path": "/", "mountPath": "/host", "readOnly": False,
                      "mountPropagation": "Bidirectional"}]}


@pytest.mark.parametrize("kind", KINDS)
def test_host_path_is_refused_for_every_kind(member, org, kind):
    errors = errors_of(create(member, org, kind, {"storage": ROOT}))
    assert errors == {"spec.storage.hostPath": "no items may be added (policy: tenant default)"}


def test_host_path_is_refused_in_an_inference_update(member, org):
    errors = errors_of(patch_inference(member, org, {"storage": ROOT}))
    assert errors == {"spec.storage.hostPath": "no items may be added (policy: tenant default)"}


def test_host_path_is_refused_in_a_distributed_master(member, org):
    body = {"name": "d", "projectId": org.a.id, "clusterId": str(org.cluster.id), "masterSpecSameAsWorker": False,
            "spec": {"image": "python:3.11", "distributedFramework": "PyTorch", "numWorkers": 1},
            "masterSpec": {"image": "python:3.11", "storage": ROOT}}
    errors = errors_of(member.post("/api/v1/workloads/distributed", body, format="json"))
    assert errors == {"masterSpec.storage.hostPath": "no items may be added (policy: tenant default)"}


def test_an_admin_may_allow_host_path_for_inferences_of_one_project(client_for, member, org):
    admin = client_for(org.users.platform_admin)
    allowed = admin.put("/api/v2/policy/inferences", {"meta": {"name": "p", "scope": "project", "projectId": org.a.id},
                                                       "policy": {"rules": {"storage": {"hostPath": {
                                                           "instances": {"canAdd": True}}}}}}, format="json")
    assert allowed.status_code == 200, allowed.json()
    assert create(member, org, "inference", {"storage": ROOT}).status_code in (200, 202)


# --- S05: security-relevant annotations -------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("key", [
    "container.apparmor.security.beta.kubernetes.io/main",
    "seccomp.security.alpha.kubernetes.io/pod",
    "container.seccomp.security.alpha.kubernetes.io/main",
    "gpu-fraction",
    "gpu-memory",
    "paas-studio/exposed-url-access",
])
def test_security_relevant_annotations_are_refused(member, org, kind, key):
    spec = {"annotations": [{"name": key, "value": "unconfined"}]}
    errors = errors_of(create(member, org, kind, spec))
    assert list(errors) == ["spec.annotations[0].name"], errors


@pytest.mark.parametrize("key", ["kai.scheduler/queue", "priorityClassName", "kai.scheduler/preemptibility",
                                 "runai-gpu-group", "app.kubernetes.io/managed-by"])
def test_labels_the_scheduler_reads_are_refused(member, org, key):
    """KAI takes a pod's queue and priority class from its labels: another project's queue, a higher class."""
    errors = errors_of(create(member, org, "training", {"labels": [{"name": key, "value": "beta"}]}))
    assert list(errors) == ["spec.labels[0].name"], errors


def test_an_inference_update_cannot_add_an_apparmor_annotation(member, org):
    errors = errors_of(patch_inference(member, org, {"annotations": [
        {"name": "container.apparmor.security.beta.kubernetes.io/main", "value": "unconfined"}]}))
    assert list(errors) == ["spec.annotations[0].name"]


def test_ordinary_annotations_and_labels_still_reach_the_pod(member, org):
    response = create(member, org, "training", {"annotations": [{"name": "billing", "value": "team-a"}],
                                                 "labels": [{"name": "app.kubernetes.io/name", "value": "bert"}]})
    assert response.status_code == 200, response.json()
