"""Distributed trainings (Run:ai tag Distributed) through HTTP: create/get/delete and suspend/resume in Run:ai's
shapes (checked against its schemas), every bad input a 400 naming its field, quotas counting master and
workers, and the Kubeflow jobs the manifests render (pure)."""

import pytest

from tests.runai_spec import assert_matches_spec
from workloads import manifests
from workloads.manifests.distributed import REPLICA_TYPE_LABEL, build
from workloads.models import Workload
from workloads.specs import validate_workload_request, workload_gpus

pytestmark = pytest.mark.django_db
PATH = "/api/v1/workloads/distributed"


def body(org, name="dist", master=None, **spec):
    request = {"name": name, "projectId": str(org.a.id), "clusterId": str(org.cluster.id),
               "spec": {"image": "python:3.11", "distributedFramework": "PyTorch", "numWorkers": 2, **spec}}
    if master is not None:
        request.update(masterSpecSameAsWorker=False, masterSpec=master)
    return request


@pytest.fixture
def member(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 4, 8
    org.a.save()
    return client_for(org.users.member)


def test_create_get_suspend_resume_delete_in_run_ai_shapes(member, org):
    created = member.post(PATH, body(org, master={"image": "python:3.12", "compute": {"gpuDevicesRequest": 1}},
                                     compute={"gpuDevicesRequest": 1}), format="json")
    assert created.status_code == 200, created.json()
    assert_matches_spec(created, "post", PATH)
    answer = created.json()
    assert answer["spec"]["distributedFramework"] == "PyTorch" and answer["spec"]["numWorkers"] == 2
    assert answer["masterSpecSameAsWorker"] is False and answer["masterSpec"]["image"] == "python:3.12"
    workload_id = answer["workloadId"]
    item = f"{PATH}/{workload_id}"
    got = member.get(item)
    assert_matches_spec(got, "get", f"{PATH}/{{workloadId}}")
    assert got.json() == answer
    row = Workload.objects.get(pk=workload_id)
    assert (row.kind, row.gpu_request, row.requested_pods) == ("distributed", 3, 3)  # master + 2 workers

    listed = member.get("/api/v1/workloads?filterBy=distributedFramework==PyTorch").json()["workloads"]
    assert [(w["id"], w["type"], w["distributedFramework"]) for w in listed] == [(workload_id, "distributed",
                                                                                  "PyTorch")]
    assert listed[0]["actionsSupport"]["suspend"] is True
    assert member.get("/api/v1/workloads?filterBy=type==distributed").json()["workloads"][0]["id"] == workload_id

    for verb in ("suspend", "resume"):
        answer = member.post(f"{item}/{verb}")
        assert answer.status_code == 202, answer.json()
        assert_matches_spec(answer, "post", f"{PATH}/{{workloadId}}/{verb}")
    deleted = member.delete(item)
    assert deleted.status_code == 204
    assert_matches_spec(deleted, "delete", f"{PATH}/{{workloadId}}")
    assert member.get(item).status_code == 404


def test_master_same_as_worker_is_the_default(member, org):
    answer = member.post(PATH, body(org, numWorkers=3), format="json").json()
    assert answer["masterSpecSameAsWorker"] is True and answer["masterSpec"] is None
    assert Workload.objects.get(pk=answer["workloadId"]).requested_pods == 4


@pytest.mark.parametrize("change,field,words", [
    ({"spec": {"image": "x", "numWorkers": 0, "distributedFramework": "PyTorch"}}, "spec.numWorkers", "at least 1"),
    ({"spec": {"image": "x", "distributedFramework": "Horovod"}}, "spec.distributedFramework",
     "Must be one of: PyTorch, TF, MPI, XGBoost, JAX"),
    ({"spec": {"image": "x"}}, "spec.distributedFramework", "required"),
    ({"spec": {"image": "x", "distributedFramework": "TF", "minReplicas": 1}}, "spec.minReplicas", "PyTorch only"),
    ({"spec": {"image": "x", "distributedFramework": "PyTorch", "slotsPerWorker": 2}}, "spec.slotsPerWorker",
     "MPI only"),
    ({"spec": {"image": "x", "distributedFramework": "PyTorch", "numWorkers": 3, "minReplicas": 3,
               "maxReplicas": 2}},
     "spec.maxReplicas", "at least minReplicas"),
    ({"spec": {"image": "x", "distributedFramework": "PyTorch", "numWorkers": 5, "maxReplicas": 4}},
     "spec.numWorkers", "at most maxReplicas"),
    ({"spec": {"image": "x", "distributedFramework": "PyTorch", "cleanPodPolicy": "Sometimes"}},
     "spec.cleanPodPolicy", "Must be one of"),
    ({"masterSpecSameAsWorker": True, "masterSpec": {"image": "x"}}, "masterSpec", "Must be absent"),
    ({"masterSpecSameAsWorker": False}, "masterSpec", "Required when"),
    ({"masterSpec": {"image": "x", "completions": 2}}, "masterSpec.completions", "Unknown field"),
    ({"masterSpec": {"image": "x", "restartPolicy": "Sometimes"}}, "masterSpec.restartPolicy", "Must be one of"),
    ({"spec": {"image": "x", "distributedFramework": "JAX"}, "masterSpec": {"image": "y"}}, "masterSpec", "JAX"),
    ({"spec": {"image": "x", "distributedFramework": "PyTorch", "parallelism": 2}}, "spec.parallelism",
     "Unknown field"),
])
def test_bad_input_is_a_400_naming_the_field(member, org, change, field, words):
    request = body(org)
    if "spec" in change:
        request["spec"] = change["spec"]
    request.update({k: v for k, v in change.items() if k != "spec"})
    response = member.post(PATH, request, format="json")
    assert response.status_code == 400, response.json()
    problems = response.json()
    assert {e["field"] for e in problems["errors"]} == {field}, problems
    assert words in problems["details"], problems
    assert not Workload.objects.exists()


def test_the_quota_counts_the_master_and_every_worker(member, org):
    too_many = body(org, numWorkers=8, compute={"gpuDevicesRequest": 1})  # 9 GPUs over a limit of 8
    response = member.post(PATH, too_many, format="json")
    assert response.status_code == 400 and "limit is 8" in str(response.json()), response.json()
    elastic = body(org, numWorkers=2, minReplicas=1, maxReplicas=7, compute={"gpuDevicesRequest": 1})
    response = member.post(PATH, elastic, format="json")  # room held for 7 workers + the master
    assert response.status_code == 200, response.json()
    assert Workload.objects.get(pk=response.json()["workloadId"]).gpu_request == 8


def test_viewers_may_not_create_and_others_do_not_see_it(client_for, member, org):
    viewer = client_for(org.users.viewer)
    assert viewer.post(PATH, body(org), format="json").status_code == 403
    workload_id = member.post(PATH, body(org), format="json").json()["workloadId"]
    assert client_for(org.users.other).get(f"{PATH}/{workload_id}").status_code == 404
    assert client_for(org.users.other).delete(f"{PATH}/{workload_id}").status_code == 404


# --- manifests (pure) --------------------------------------------------------------------------------------

REF = manifests.WorkloadRef("6f1d2f7a-0000-4000-8000-000000000001", "dist", "distributed", "alpha", "studio-alpha")


def rendered(framework, *, master=True, gang=None, **spec):
    request = validate_workload_request("distributed", {
        "name": "dist", "projectId": "1", "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
        "spec": {"image": "python:3.11", "distributedFramework": framework, "numWorkers": 2, **spec},
        **({"masterSpecSameAsWorker": False, "masterSpec": {"image": "python:3.12"}} if master else {})})
    from workloads.specs.distributed import master_spec_of

    return build(REF, request["spec"], master=master_spec_of(request), gang=gang), request


@pytest.mark.parametrize("framework,kind,field,master_type,container", [
    ("PyTorch", "PyTorchJob", "pytorchReplicaSpecs", "Master", "pytorch"),
    ("TF", "TFJob", "tfReplicaSpecs", "Chief", "tensorflow"),
    ("MPI", "MPIJob", "mpiReplicaSpecs", "Launcher", "mpi"),
    ("XGBoost", "XGBoostJob", "xgbReplicaSpecs", "Master", "xgboost"),
])
def test_each_framework_is_its_training_operator_job_with_a_master_and_workers(framework, kind, field, master_type,
                                                                                container):
    objects, _ = rendered(framework, cleanPodPolicy="Running", backoffLimit=3,
                          autoDeletionTimeAfterCompletionSeconds=60)
    job = objects[-1]
    assert (job["apiVersion"], job["kind"]) == ("kubeflow.org/v1", kind)
    assert job["metadata"]["name"] == manifests.object_name(REF)
    assert job["metadata"]["labels"][manifests.WORKLOAD_ID_LABEL] == REF.id
    replicas = job["spec"][field]
    assert list(replicas) == [master_type, "Worker"]
    assert replicas[master_type]["replicas"] == 1 and replicas["Worker"]["replicas"] == 2
    assert replicas[master_type]["template"]["spec"]["containers"][0]["image"] == "python:3.12"
    assert replicas["Worker"]["template"]["spec"]["containers"][0] | {} == {
        **replicas["Worker"]["template"]["spec"]["containers"][0], "name": container, "image": "python:3.11"}
    assert job["spec"]["runPolicy"] == {"suspend": False, "cleanPodPolicy": "Running", "backoffLimit": 3,
                                        "ttlSecondsAfterFinished": 60}
    assert "schedulingPolicy" not in job["spec"]["runPolicy"]  # no gang scheduler: no PodGroup either
    assert [o["kind"] for o in objects] == [kind]


def test_pytorch_elastic_policy_and_mpi_slots():
    job = rendered("PyTorch", minReplicas=1, maxReplicas=4)[0][-1]
    assert job["spec"]["elasticPolicy"] == {"rdzvBackend": "c10d", "minReplicas": 1, "maxReplicas": 4}
    job = rendered("MPI", slotsPerWorker=4, sshAuthMountPath="/home/mpi/.ssh")[0][-1]
    assert job["spec"]["slotsPerWorker"] == 4
    assert job["metadata"]["annotations"]["paas-studio/mpi-ssh-auth-mount-path"] == "/home/mpi/.ssh"


def test_jax_has_workers_only():
    objects, request = rendered("JAX", master=False, numWorkers=3)
    assert list(objects[-1]["spec"]["jaxReplicaSpecs"]) == ["Worker"]
    assert objects[-1]["spec"]["jaxReplicaSpecs"]["Worker"]["replicas"] == 3
    assert workload_gpus("distributed", request) == 0


@pytest.mark.parametrize("gang,api_version,scheduler", [
    ("scheduling.x-k8s.io", "scheduling.x-k8s.io/v1alpha1", "scheduler-plugins-scheduler"),
    ("scheduling.volcano.sh", "scheduling.volcano.sh/v1beta1", "volcano"),
])
def test_gang_scheduling_is_a_pod_group_of_master_and_workers(gang, api_version, scheduler):
    objects, _ = rendered("PyTorch", gang=gang, minReplicas=2, maxReplicas=3)
    group, job = objects
    assert (group["apiVersion"], group["kind"], group["spec"]) == (api_version, "PodGroup", {"minMember": 3})
    assert group["metadata"]["name"] == job["metadata"]["name"]
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 3}
    for replica in job["spec"]["pytorchReplicaSpecs"].values():
        template = replica["template"]
        assert template["spec"]["schedulerName"] == scheduler
        joined = {**template["metadata"]["labels"], **template["metadata"].get("annotations", {})}
        assert group["metadata"]["name"] in joined.values()


def test_suspend_patches_the_run_policy():
    assert manifests.suspend_patch(REF, suspended=True, spec={"distributedFramework": "TF"}) == (
        "kubeflow.org/v1", "TFJob", {"spec": {"runPolicy": {"suspend": True}}})
    assert REPLICA_TYPE_LABEL == "training.kubeflow.org/replica-type"


def test_the_master_is_held_to_the_policy_too(member, org):
    """The tenant's default training policy refuses root: in the master's spec as in the workers'."""
    root = {"uidGidSource": "custom", "runAsUid": 0}
    response = member.post(PATH, body(org, master={"image": "x", "security": root}), format="json")
    assert response.status_code == 400, response.json()
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"masterSpec.security.runAsUid"}, response.json()
    response = member.post(PATH, body(org, security=root), format="json")
    assert {e["field"] for e in response.json()["errors"]} == {"spec.security.runAsUid"}
    assert not Workload.objects.exists()


def test_a_dry_run_previews_the_job_and_the_quota_of_master_and_workers(member, org):
    response = member.post(f"{PATH}?dryRun=true", body(org, numWorkers=3, compute={"gpuDevicesRequest": 1}),
                           format="json")
    assert response.status_code == 200, response.json()
    preview = response.json()
    assert [(o["apiVersion"], o["kind"]) for o in preview["objects"]][-1] == ("kubeflow.org/v1", "PyTorchJob")
    job = preview["objects"][-1]["manifest"]
    assert job["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 3
    assert preview["quota"]["requested"] == 4.0  # the master and three workers, one GPU each
    assert not Workload.objects.exists()
