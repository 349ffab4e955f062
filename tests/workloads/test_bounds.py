"""Security round 4 (issue 37), the workload spec's side, through HTTP: what one member's workload may put on the
shared cluster. Pod counts are bounded by the secure default (a platform admin raises them with a policy), CPU and
memory over all the pods by the project's and department's limits, GPU portions have a granularity they are charged
at least, the grace period has a maximum, the preview checks every spec the submit checks, and pods get no
service-account token, chosen node port or ExternalName Service unless a policy allows it."""

import pytest

from kit.models import ApplicationProfile
from studio.models import NodePool
from tests.kit.conftest import kit  # noqa: F401  (the Kit catalogue, for a stream launch)
from workloads import manifests
from workloads.cluster.push import workload_ref
from workloads.models import Workload

pytestmark = pytest.mark.django_db
BOUND = "(policy: tenant default)"


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


@pytest.fixture
def member(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 8, 8
    org.a.save()
    return client_for(org.users.member)


def body(org, **spec):
    return {"name": "job", "projectId": str(org.a.id), "clusterId": str(org.cluster.id),
            "spec": {"image": "python:3.11", **spec}}


def distributed(org, **spec):
    return body(org, distributedFramework="PyTorch", **spec)


def post(api, path, request, query=""):
    return api.post(f"/api/v1/workloads/{path}{query}", request, format="json")


def refused(response) -> dict:
    assert response.status_code == 400, response.json()
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def apply(admin, policy_type, meta, rules):
    response = admin.put(f"/api/v2/policy/{policy_type}", {"meta": {"name": "p", **meta}, "policy": {"rules": rules}},
                         format="json")
    assert response.status_code == 200, response.json()


# --- finding 1: pods per workload ---------------------------------------------------------------------------------

@pytest.mark.parametrize("path, request_of, field", [
    ("distributed", lambda org: distributed(org, numWorkers=1_000_000), "spec.numWorkers"),
    ("distributed", lambda org: distributed(org, numWorkers=2, minReplicas=1, maxReplicas=100_000), "spec.maxReplicas"),
    ("distributed", lambda org: distributed(org, numWorkers=100_000, minReplicas=100_000), "spec.minReplicas"),
    ("trainings", lambda org: body(org, parallelism=100_000), "spec.parallelism"),
    ("trainings", lambda org: body(org, completions=100_000), "spec.completions"),
    ("inferences", lambda org: body(org, autoscaling={"minReplicas": 100_000, "maxReplicas": 100_000}),
     "spec.autoscaling.minReplicas"),
    ("inferences", lambda org: body(org, autoscaling={"minReplicas": 1, "maxReplicas": 100_000, "metric": "throughput",
                                                      "metricThreshold": 5}), "spec.autoscaling.maxReplicas"),
])
def test_a_huge_pod_count_is_a_400_naming_the_field_and_the_bound(member, org, path, request_of, field):
    errors = refused(post(member, path, request_of(org)))
    bound = 1000 if field == "spec.completions" else 100
    assert errors[field] == f"must be at most {bound} {BOUND}", errors
    assert not Workload.objects.exists()


def test_up_to_the_bound_is_accepted(member, org):
    assert post(member, "distributed", distributed(org, numWorkers=100)).status_code == 200
    ok = post(member, "trainings", {**body(org, parallelism=100, completions=1000), "name": "hpo"})
    assert ok.status_code == 200, ok.json()
    assert Workload.objects.get(pk=ok.json()["workloadId"]).requested_pods == 100


def test_a_platform_admin_raises_the_bound_for_a_project(admin, member, org):
    assert refused(post(member, "distributed", distributed(org, numWorkers=150)))["spec.numWorkers"]
    apply(admin, "trainings", {"scope": "project", "projectId": org.a.id}, {"numWorkers": {"max": 200}})
    assert post(member, "distributed", distributed(org, numWorkers=150)).status_code == 200
    assert refused(post(member, "distributed", {**distributed(org, numWorkers=201), "name": "more"})) == {
        "spec.numWorkers": "must be at most 200 (policy: project alpha)"}


def test_an_inference_update_is_held_to_the_bound(member, org):
    made = post(member, "inferences", body(org))
    assert made.status_code == 200, made.json()
    url = f"/api/v1/workloads/inferences/{made.json()['workloadId']}"
    update = {"spec": {"autoscaling": {"minReplicas": 100_000, "maxReplicas": 100_000}}}
    assert refused(member.patch(url, update, format="json")) == {
        "spec.autoscaling.minReplicas": f"must be at most 100 {BOUND}",
        "spec.autoscaling.maxReplicas": f"must be at most 100 {BOUND}"}
    assert Workload.objects.get(pk=made.json()["workloadId"]).requested_pods == 1


def test_initial_and_activation_replicas_stay_within_max_replicas(member, org):
    scaling = {"minReplicas": 1, "maxReplicas": 2, "metric": "concurrency", "metricThreshold": 5,
               "initialReplicas": 100_000, "activationReplicas": 100_000}
    errors = refused(post(member, "inferences", body(org, autoscaling=scaling)))
    assert errors == {"spec.autoscaling.initialReplicas": "Must be at most maxReplicas (2).",
                      "spec.autoscaling.activationReplicas": "Must be at most maxReplicas (2)."}


# --- finding 1: CPU and memory over all the pods, against the quotas ------------------------------------------

@pytest.fixture
def pool_quotas(org):
    """Project A's quota in pool-a: 8 cores and 16,000 MB at most; its department's: 6 cores there."""
    NodePool.objects.create(cluster=org.cluster, name="pool-a")
    org.a.node_pool_resources = [{"nodePool": {"name": "pool-a"}, "gpu": {"deserved": 8, "limit": 8},
                                  "cpu": {"deserved": 4000, "limit": 8000},
                                  "memory": {"deserved": 8000, "limit": 16000, "units": "MB"}}]
    org.a.save()
    org.department.node_pool_resources = [{"nodePool": {"name": "pool-a"}, "gpu": {"deserved": 8, "limit": 8},
                                           "cpu": {"deserved": 6000, "limit": 6000}}]
    org.department.save()
    return org


def test_cpu_only_workers_are_counted_against_the_cpu_limits(member, pool_quotas):
    org = pool_quotas
    errors = refused(post(member, "distributed", distributed(org, numWorkers=100, compute={"cpuCoreRequest": 1})))
    assert errors == {"spec.compute.cpuCoreRequest": (
        "It can never run: its pods ask for 101 CPU cores in all, more than project alpha's limit of 8 CPU cores in "
        "node pool pool-a.")}
    errors = refused(post(member, "trainings", body(org, parallelism=7, compute={"cpuCoreLimit": 1})))
    assert "more than department research's limit of 6 CPU cores in node pool pool-a" in \
        errors["spec.compute.cpuCoreRequest"]
    fits = post(member, "distributed", distributed(org, numWorkers=5, compute={"cpuCoreRequest": 1}))
    assert fits.status_code == 200, fits.json()  # 5 workers and the master: 6 cores


def test_memory_over_all_the_pods_is_counted_against_the_memory_limit(member, pool_quotas):
    org = pool_quotas
    errors = refused(post(member, "trainings", body(org, parallelism=10, compute={"cpuMemoryRequest": "2G"})))
    assert errors == {"spec.compute.cpuMemoryRequest": (
        "It can never run: its pods ask for 20000 MB of memory in all, more than project alpha's limit of 16000 MB "
        "of memory in node pool pool-a.")}
    assert post(member, "trainings", body(org, parallelism=8, compute={"cpuMemoryRequest": "2G"})).status_code == 200


def test_the_preview_answers_the_cpu_refusal_the_submit_gives(member, pool_quotas):
    request = distributed(pool_quotas, numWorkers=20, compute={"cpuCoreRequest": 1})
    preview = post(member, "distributed", request, "?dryRun=true")
    assert refused(preview) == refused(post(member, "distributed", request))


# --- finding 5: GPU portions ---------------------------------------------------------------------------------------

def test_a_gpu_portion_below_a_hundredth_is_refused(member, org):
    for value in (1e-9, 0.009):
        errors = refused(post(member, "trainings", body(org, compute={"gpuPortionRequest": value})))
        assert errors == {"spec.compute.gpuPortionRequest":
                          "Must be at least 0.01 (a GPU is shared in hundredths) and at most 1."}
    ok = post(member, "trainings", body(org, compute={"gpuPortionRequest": 0.01}))
    assert ok.status_code == 200, ok.json()
    assert float(Workload.objects.get(pk=ok.json()["workloadId"]).gpu_request) == 0.01


def test_many_tiny_portions_cannot_pass_the_gpu_quota(admin, member, org):
    """Even where a platform admin allowed huge jobs, 100,000 workers of a hundredth of a GPU are 1,000 GPUs."""
    apply(admin, "trainings", {"scope": "tenant"}, {"numWorkers": {"max": 1_000_000}})
    request = distributed(org, numWorkers=100_000, compute={"gpuPortionRequest": 0.01})
    errors = refused(post(member, "distributed", request))
    assert "limit is 8" in errors["spec.compute"], errors
    assert not Workload.objects.exists()


@pytest.mark.usefixtures("kit")
def test_a_portion_stored_before_the_check_is_charged_the_granularity(member, org):
    """A Kit profile saved before portions had a granularity still launches: its session is charged a hundredth."""
    ApplicationProfile.objects.filter(slug="default").update(
        compute={"gpuRequestType": "portion", "gpuPortionRequest": 1e-9})
    response = member.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json")
    assert response.status_code == 202, response.json()
    assert float(Workload.objects.get(pk=response.json()["id"]).gpu_request) == 0.01


# --- finding 10: the grace period ----------------------------------------------------------------------------------

@pytest.mark.parametrize("path, make", [("trainings", body), ("workspaces", body), ("distributed", distributed)])
def test_the_grace_period_has_a_maximum(member, org, path, make):
    errors = refused(post(member, path, make(org, terminationGracePeriodSeconds=2147483647)))
    assert errors == {"spec.terminationGracePeriodSeconds": f"must be at most 300 {BOUND}"}
    assert post(member, path, make(org, terminationGracePeriodSeconds=300)).status_code == 200


def test_the_masters_grace_period_too(member, org):
    request = {**distributed(org), "masterSpecSameAsWorker": False,
               "masterSpec": {"image": "python:3.11", "terminationGracePeriodSeconds": 2147483647}}
    assert refused(post(member, "distributed", request)) == {
        "masterSpec.terminationGracePeriodSeconds": f"must be at most 300 {BOUND}"}


# --- finding 11: the preview checks every spec -----------------------------------------------------------------------

def test_the_preview_holds_the_master_spec_to_the_policy_as_the_submit_does(member, org):
    request = {**distributed(org, numWorkers=1), "masterSpecSameAsWorker": False,
               "masterSpec": {"image": "python:3.11", "security": {"hostNetwork": True}}}
    preview = post(member, "distributed", request, "?dryRun=true")
    assert preview.status_code == 200, preview.json()
    assert preview.json()["policy"] == {"allowed": False, "violations": [
        {"field": "masterSpec.security.hostNetwork", "rule": "canEdit",
         "message": f"cannot be changed from its default (false) {BOUND}"}]}
    assert refused(post(member, "distributed", request)) == {
        "masterSpec.security.hostNetwork": f"cannot be changed from its default (false) {BOUND}"}
    assert not Workload.objects.exists()


def test_the_preview_shows_the_master_with_the_policys_defaults(member, org):
    request = {**distributed(org, numWorkers=1), "masterSpecSameAsWorker": False,
               "masterSpec": {"image": "python:3.12"}}
    preview = post(member, "distributed", request, "?dryRun=true")
    assert preview.status_code == 200 and preview.json()["policy"]["allowed"] is True, preview.json()
    job = preview.json()["objects"][-1]["manifest"]
    master = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]
    assert master["containers"][0]["image"] == "python:3.12" and master["hostNetwork"] is False


# --- build point 5: service-account tokens, node ports, ExternalName, Secret names ---------------------------------

def _pod_specs(objects: list[dict]) -> list[dict]:
    found = []
    for obj in objects:
        spec = obj["manifest"].get("spec") or {}
        if "template" in spec:
            found.append(spec["template"]["spec"])
        for role in (v for k, v in spec.items() if k.endswith("ReplicaSpecs")):
            found += [replica["template"]["spec"] for replica in role.values()]
    return found


@pytest.mark.parametrize("path, make", [("trainings", body), ("workspaces", body), ("inferences", body),
                                        ("distributed", distributed)])
def test_no_pod_mounts_a_service_account_token_by_default(member, org, path, make):
    request = make(org)
    if path == "distributed":
        request.update(masterSpecSameAsWorker=False, masterSpec={"image": "python:3.12"})
    preview = post(member, path, request, "?dryRun=true")
    assert preview.status_code == 200, preview.json()
    pods = _pod_specs(preview.json()["objects"])
    assert len(pods) == (2 if path == "distributed" else 1)
    assert all(pod["automountServiceAccountToken"] is False for pod in pods)


def test_a_token_only_where_the_spec_asks_and_the_policy_allows(admin, member, org):
    asks = body(org, security={"automountServiceAccountToken": True})
    assert refused(post(member, "workspaces", asks)) == {
        "spec.security.automountServiceAccountToken": f"cannot be set {BOUND}"}
    apply(admin, "workspaces", {"scope": "project", "projectId": org.a.id},
          {"security": {"automountServiceAccountToken": {"canEdit": True}}})
    preview = post(member, "workspaces", asks, "?dryRun=true")
    assert preview.status_code == 200, preview.json()
    assert _pod_specs(preview.json()["objects"])[0]["automountServiceAccountToken"] is True


def test_a_node_port_number_and_an_external_name_only_where_the_policy_allows(admin, member, org):
    ports = [{"container": 8080, "serviceType": "NodePort", "external": 30080},
             {"container": 9090, "serviceType": "ExternalName"}]
    assert refused(post(member, "workspaces", body(org, ports=ports))) == {
        "spec.ports[0].external": f"a NodePort number of your choosing cannot be set {BOUND}",
        "spec.ports[1].serviceType": f"ExternalName is not allowed: must be one of ClusterIP, NodePort, LoadBalancer "
                                     f"{BOUND}"}
    chosen_by_kubernetes = [{"container": 8080, "serviceType": "NodePort"},
                            {"container": 9090, "serviceType": "LoadBalancer", "external": 80}]
    assert post(member, "workspaces", body(org, ports=chosen_by_kubernetes)).status_code == 200
    apply(admin, "workspaces", {"scope": "project", "projectId": org.a.id},
          {"ports": {"attributes": {"customExternalPort": {"canEdit": True}}}})
    assert post(member, "workspaces", {**body(org, ports=ports[:1]), "name": "np"}).status_code == 200


@pytest.mark.parametrize("spec, field", [
    ({"storage": {"secretVolume": [{"secret": "../../kube-system/x", "mountPath": "/s"}]}},
     "spec.storage.secretVolume[0].secret"),
    ({"storage": {"git": [{"path": "/src", "passwordSecret": "Not A Name"}]}}, "spec.storage.git[0].passwordSecret"),
    ({"storage": {"git": [{"path": "/src", "secretRef": {"name": "a/b"}}]}}, "spec.storage.git[0].secretRef.name"),
    ({"storage": {"s3": [{"bucket": "b", "path": "/b", "accessKeySecret": "UPPER"}]}},
     "spec.storage.s3[0].accessKeySecret"),
    ({"environmentVariables": [{"name": "T", "secret": {"name": "a/b", "key": "k"}}]},
     "spec.environmentVariables[0].secret.name"),
    ({"environmentVariables": [{"name": "T", "userCredential": {"name": "x" * 254, "key": "k"}}]},
     "spec.environmentVariables[0].userCredential.name"),
])
def test_a_secret_name_that_is_no_dns_name_is_a_400_naming_the_field(member, org, spec, field):
    errors = refused(post(member, "trainings", body(org, **spec)))
    assert errors == {field: "Must be a Secret's name: lowercase letters, digits, '-' and '.', such as 'my-secret'."}


def test_the_published_examples_secret_name_is_still_accepted(member, org):
    env = [{"name": "HOME", "secret": {"name": "postgress_secret", "key": "POSTGRES_PASSWORD"}}]
    assert post(member, "trainings", body(org, environmentVariables=env)).status_code == 200


@pytest.mark.usefixtures("kit")
def test_a_kit_streams_pod_mounts_no_token_either(member, org):
    """A stream's spec is made by the product, not the API: the session launched over HTTP, its pod rendered from
    what was stored, as the push renders it."""
    response = member.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json")
    assert response.status_code == 202, response.json()
    session = Workload.objects.get(pk=response.json()["id"])
    objects = manifests.build_manifests(workload_ref(session), session.spec, knative=False)
    [deployment] = [o for o in objects if o["kind"] == "Deployment"]
    assert deployment["spec"]["template"]["spec"]["automountServiceAccountToken"] is False
