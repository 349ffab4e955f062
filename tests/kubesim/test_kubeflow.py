"""kubesim's Kubeflow Training Operator, through the official client: kubeflow.org/v1 jobs make a pod per replica
and index, labelled by role; the job succeeds with its master (or, for JAX, its workers), fails with a pod,
suspends and resumes, cleans pods by cleanPodPolicy; a gang scheduler's PodGroup is served only when asked for.
The jobs' tests run on kubesim and, in `make e2e-real`, on the real cluster with the real Kubeflow training
operator (v1.9.3), its pods run by kubesim's node side over HTTP (kubesim/node/remote.py)."""

import functools
import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubesim import KubeSim

from .conftest import FAST, TOKEN, api_client, wait_until

GROUP, VERSION = "kubeflow.org", "v1"


@pytest.fixture(params=["kubesim", pytest.param("real", marks=pytest.mark.real)])
def server(request):
    """The official client on kubesim, or on the real server (as its admin), and how long its steps may take
    (the real one runs pods for 4 s, kubesim's module cluster for 0.3 s)."""
    if request.param == "kubesim":
        return request.getfixturevalue("k8s"), 5.0
    return request.getfixturevalue("real_cluster").api, 30.0


@pytest.fixture
def custom(server):
    return client.CustomObjectsApi(server[0])


@pytest.fixture
def core(server):
    return client.CoreV1Api(server[0])


@pytest.fixture
def wait(server):
    return functools.partial(wait_until, timeout=server[1], interval=0.1)


@pytest.fixture
def ns(core, wait):
    name = f"kf-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    wait(lambda: core.list_namespaced_service_account(name).items)  # the real operator's pods need `default`
    yield name
    core.delete_namespace(name)


def template(image="python:3.11", name="pytorch", run_seconds=None):
    meta = {"annotations": {"kubesim.paas-studio/run-seconds": str(run_seconds)}} if run_seconds is not None else {}
    return {"metadata": meta, "spec": {"containers": [{"name": name, "image": image}]}}


def job(kind, field, replicas: dict, name="j", **run_policy):
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": kind, "metadata": {"name": name},
            "spec": {"runPolicy": run_policy, field: replicas}}


def conditions(custom, ns, plural, name="j") -> dict:
    obj = custom.get_namespaced_custom_object(GROUP, VERSION, ns, plural, name)
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def counts(status: dict) -> dict:
    """`replicaStatuses` without the real operator's `selector` (a label selector string per role)."""
    return {role: {k: v for k, v in s.items() if k != "selector"} for role, s in status["replicaStatuses"].items()}


def pods(core, ns) -> dict:
    return {p.metadata.name: p for p in core.list_namespaced_pod(ns).items}


def test_a_pytorch_job_runs_a_pod_per_replica_and_succeeds_with_its_master(custom, core, ns, wait):
    body = job("PyTorchJob", "pytorchReplicaSpecs", {"Master": {"replicas": 1, "template": template()},
                                                     "Worker": {"replicas": 2, "template": template()}},
               cleanPodPolicy="All")
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "pytorchjobs", body)
    running = wait(lambda: (lambda c: c if c.get("Running", {}).get("status") == "True" else None)(
        conditions(custom, ns, "pytorchjobs")))
    assert running["Created"]["reason"] == "PyTorchJobCreated"
    seen = pods(core, ns)
    assert sorted(seen) == ["j-master-0", "j-worker-0", "j-worker-1"]
    labels = seen["j-worker-1"].metadata.labels
    assert (labels["training.kubeflow.org/replica-type"], labels["training.kubeflow.org/replica-index"],
            labels["training.kubeflow.org/job-name"]) == ("worker", "1", "j")
    assert seen["j-master-0"].metadata.labels["training.kubeflow.org/job-role"] == "master"
    assert seen["j-master-0"].metadata.owner_references[0].kind == "PyTorchJob"
    env = {e.name: e.value for e in seen["j-worker-1"].spec.containers[0].env}
    assert (env["RANK"], env["WORLD_SIZE"], env["MASTER_ADDR"]) == ("2", "3", "j-master-0")
    done = wait(lambda: conditions(custom, ns, "pytorchjobs").get("Succeeded"))
    assert (done["status"], done["message"]) == ("True", "PyTorchJob j is successfully completed.")
    obj = custom.get_namespaced_custom_object(GROUP, VERSION, ns, "pytorchjobs", "j")
    assert obj["status"]["completionTime"] and obj["status"]["startTime"]
    wait(lambda: not pods(core, ns))  # cleanPodPolicy All


def test_a_jax_job_succeeds_when_its_workers_have(custom, core, ns, wait):
    body = job("JAXJob", "jaxReplicaSpecs", {"Worker": {"replicas": 2, "template": template(name="jax")}})
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "jaxjobs", body)
    wait(lambda: conditions(custom, ns, "jaxjobs").get("Succeeded"))
    status = custom.get_namespaced_custom_object(GROUP, VERSION, ns, "jaxjobs", "j")["status"]
    assert counts(status) == {"Worker": {"succeeded": 2}}
    assert {p.status.phase for p in pods(core, ns).values()} == {"Succeeded"}  # cleanPodPolicy None


def test_a_failed_pod_fails_the_job_and_suspend_deletes_the_pods(custom, core, ns, wait):
    # (the operator reads the exit code of the container named after the framework: `tensorflow`)
    body = job("TFJob", "tfReplicaSpecs", {"Chief": {"replicas": 1, "restartPolicy": "Never",
                                                     "template": template(name="tensorflow", run_seconds=600)},
                                           "Worker": {"replicas": 1, "restartPolicy": "Never",
                                                      "template": template("example/crashloop:1", "tensorflow")}})
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "tfjobs", body)
    failed = wait(lambda: conditions(custom, ns, "tfjobs").get("Failed"))
    assert failed["reason"] == "TFJobFailed" and "Worker replica(s) failed" in failed["message"]

    body = job("MPIJob", "mpiReplicaSpecs", {"Launcher": {"replicas": 1, "template": template(run_seconds=600)},
                                             "Worker": {"replicas": 2, "template": template(run_seconds=600)}},
               name="m")
    custom.create_namespaced_custom_object(GROUP, VERSION, ns, "mpijobs", body)
    selector = "training.kubeflow.org/job-name=m"

    def mpi_pods(phase=None):
        return [p for p in core.list_namespaced_pod(ns, label_selector=selector).items
                if phase is None or p.status.phase == phase]

    wait(lambda: len(mpi_pods("Running")) == 3)
    assert sorted(p.metadata.name for p in mpi_pods()) == ["m-launcher", "m-worker-0", "m-worker-1"]
    custom.patch_namespaced_custom_object(GROUP, VERSION, ns, "mpijobs", "m", {"spec": {"runPolicy": {"suspend": True}}})
    suspended = wait(lambda: conditions(custom, ns, "mpijobs", "m").get("Suspended"))
    assert suspended["status"] == "True"
    wait(lambda: not mpi_pods())
    custom.patch_namespaced_custom_object(GROUP, VERSION, ns, "mpijobs", "m", {"spec": {"runPolicy": {"suspend": False}}})
    wait(lambda: conditions(custom, ns, "mpijobs", "m")["Suspended"]["status"] == "False")
    wait(lambda: len(mpi_pods("Running")) == 3)


@pytest.mark.parametrize("gang,group,version", [("scheduler-plugins", "scheduling.x-k8s.io", "v1alpha1"),
                                                ("volcano", "scheduling.volcano.sh", "v1beta1")])
def test_pod_groups_are_served_only_with_their_gang_scheduler(gang, group, version):
    with KubeSim(nodes=1, token=TOKEN, gang=gang, **FAST) as sim, api_client(sim) as k8s:
        groups = {g.name for g in client.ApisApi(k8s).get_api_versions().groups}
        assert group in groups and {"scheduling.x-k8s.io", "scheduling.volcano.sh"} - {group} - groups
        client.CustomObjectsApi(k8s).create_namespaced_custom_object(
            group, version, "default", "podgroups",
            {"apiVersion": f"{group}/{version}", "kind": "PodGroup", "metadata": {"name": "g"}, "spec": {"minMember": 3}})
    with KubeSim(nodes=1, token=TOKEN, kubeflow=False, **FAST) as sim, api_client(sim) as k8s:
        groups = {g.name for g in client.ApisApi(k8s).get_api_versions().groups}
        assert not groups & {"kubeflow.org", "scheduling.x-k8s.io", "scheduling.volcano.sh"}
        with pytest.raises(ApiException) as exc:
            client.CustomObjectsApi(k8s).list_namespaced_custom_object(GROUP, VERSION, "default", "pytorchjobs")
        assert exc.value.status == 404


def test_a_gang_starts_all_its_members_or_none():
    """Volcano's PodGroup of minMember 3 on a node with 2 GPUs: none of three 1-GPU pods starts (each says why),
    while a pod outside the gang takes a GPU; once the group's minMember is 2, two of them start together."""
    with KubeSim(nodes=1, gpus_per_node=2, token=TOKEN, gang="volcano", **FAST) as sim, api_client(sim) as k8s:
        core, custom = client.CoreV1Api(k8s), client.CustomObjectsApi(k8s)
        group = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup", "metadata": {"name": "g"},
                 "spec": {"minMember": 3}}
        custom.create_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", "default", "podgroups", group)
        gpu = {"limits": {"nvidia.com/gpu": "1"}}

        def pod(name, gang=True):
            annotations = {"scheduling.k8s.io/group-name": "g"} if gang else {}
            return {"metadata": {"name": name, "annotations": annotations},
                    "spec": {"schedulerName": "volcano",
                             "containers": [{"name": "c", "image": "python:3.11", "resources": gpu}]}}

        for name in ("a", "b", "c"):
            core.create_namespaced_pod("default", pod(name))
        message = wait_until(lambda: next((c.message for c in core.read_namespaced_pod("c", "default").status.conditions
                                           or [] if c.type == "PodScheduled" and c.status == "False"), None))
        assert message.startswith("pod group g: 2/3 members fit; 0/1 nodes are available: 1 Insufficient nvidia.com/gpu")
        assert all(not core.read_namespaced_pod(n, "default").spec.node_name for n in ("a", "b", "c"))
        core.create_namespaced_pod("default", pod("solo", gang=False))
        wait_until(lambda: core.read_namespaced_pod("solo", "default").spec.node_name)
        core.delete_namespaced_pod("solo", "default", grace_period_seconds=0)
        core.delete_namespaced_pod("c", "default", grace_period_seconds=0)
        custom.patch_namespaced_custom_object("scheduling.volcano.sh", "v1beta1", "default", "podgroups", "g",
                                              {"spec": {"minMember": 2}})
        wait_until(lambda: all(core.read_namespaced_pod(n, "default").spec.node_name for n in ("a", "b")), timeout=10)
