"""A data volume on the simulated cluster, end to end: a project's claim made a data volume through the API, shared
with another project, and mounted read-only by that project's training — checked on the cluster with the official
client, as kubectl would see it. The tasks run in this process (`.apply`), as the worker would run them."""

import uuid

import pytest
from kubernetes import client

from assets import tasks as asset_tasks
from studio.models import Level
from tests.conftest import bearer_client
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.workloads.cluster_support import training_body, wait_for
from workloads import tasks as workload_tasks

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def consumer(sim_org):
    """A second project on the same cluster and department, with its member; its namespace is removed after."""
    project = ProjectFactory(name=f"c{uuid.uuid4().hex[:8]}", cluster=sim_org.cluster,
                             department=sim_org.project.department, gpu_deserved=8, gpu_limit=8)
    member = UserFactory(username=f"member-{project.name}")
    MembershipFactory(user=member, project=project, role=Level.MEMBER)
    yield project, member
    core = client.CoreV1Api(sim_org.k8s)
    try:
        core.delete_namespace(project.namespace)
    except client.ApiException as exc:
        if exc.status != 404:
            raise


def _origin_claim(core, namespace: str) -> client.V1PersistentVolumeClaim:
    core.create_namespace({"metadata": {"name": namespace, "labels": {"app.kubernetes.io/managed-by": "paas-studio"}}})
    core.create_namespaced_persistent_volume_claim(namespace, {
        "metadata": {"name": "train-out"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "5Gi"}}}})
    return wait_for(lambda: (c := core.read_namespaced_persistent_volume_claim("train-out", namespace))
                    and c.status.phase == "Bound" and c, what="the origin claim to be bound")


def test_a_shared_data_volume_is_mounted_read_only_by_another_projects_training(sim_org, consumer):
    core, batch = client.CoreV1Api(sim_org.k8s), client.BatchV1Api(sim_org.k8s)
    project, member = consumer
    origin = _origin_claim(core, sim_org.namespace)
    origin_volume = core.read_persistent_volume(origin.spec.volume_name)
    assert origin_volume.spec.host_path.path  # kubesim provisions as the local-path provisioner does

    owner = bearer_client(UserFactory(username=f"root-{project.name}", platform_admin=True))
    made = owner.post("/api/v1/datavolumes", {"name": f"dv-{project.name}", "projectId": str(sim_org.project.pk),
                                              "originPvcName": "train-out"}, format="json")
    assert made.status_code == 201, made.json()
    dv_id = made.json()["id"]
    asset_tasks.datavolume_sync.apply(args=[dv_id])
    status = owner.get(f"/api/v1/datavolumes/{dv_id}").json()["status"]
    assert status["phase"] == "Ready" and status["datavolumePvName"] == origin.spec.volume_name

    # Not shared yet: the consumer may not see it, and a training of its naming it is refused, with the words a
    # data volume that does not exist gets (nothing said of another tenant's); nothing reaches the cluster.
    consumer_api = bearer_client(member)
    assert consumer_api.get(f"/api/v1/datavolumes/{dv_id}").status_code == 404
    refusals = {}
    for name, volume in (("too-early", dv_id), ("no-such-volume", str(uuid.uuid4()))):
        early = consumer_api.post("/api/v1/workloads/trainings", training_body(
            project, name, storage={"dataVolume": [{"id": volume, "mountPath": "/results"}]}), format="json")
        assert early.status_code == 400, early.json()
        refusals[name] = str(early.json()).replace(volume, "<id>")
        assert "spec.storage.dataVolume[0].id" in str(early.json()) and volume in str(early.json())
    assert refusals["too-early"] == refusals["no-such-volume"]
    assert batch.list_namespaced_job(project.namespace).items == []
    assert core.list_namespaced_persistent_volume_claim(project.namespace).items == []
    shared = owner.patch(f"/api/v1/datavolumes/{dv_id}/sharedScopes",
                         {"add": [{"scopeType": "project", "scopeId": str(project.pk)}]}, format="json")
    assert shared.status_code == 200, shared.json()
    asset_tasks.datavolume_sync.apply(args=[dv_id])
    assert consumer_api.get(f"/api/v1/datavolumes/{dv_id}").status_code == 200

    submitted = consumer_api.post("/api/v1/workloads/trainings", training_body(
        project, "reads-results", storage={"dataVolume": [{"id": dv_id, "mountPath": "/results"}]}), format="json")
    assert submitted.status_code in (200, 202), submitted.json()
    workload_tasks.workload_push.apply(args=[submitted.json()["workloadId"]])

    claim_name = f"data-volume-{dv_id}"
    claim = wait_for(lambda: (c := core.read_namespaced_persistent_volume_claim(claim_name, project.namespace))
                     and c.status.phase == "Bound" and c, what="the data volume's claim in the consumer's namespace")
    assert claim.spec.access_modes == ["ReadOnlyMany"] and claim.spec.volume_name == f"{claim_name}-{project.pk}"
    copy = core.read_persistent_volume(claim.spec.volume_name)
    assert copy.spec.host_path.path == origin_volume.spec.host_path.path  # the same data
    assert copy.spec.persistent_volume_reclaim_policy == "Retain" and copy.spec.access_modes == ["ReadOnlyMany"]
    assert (copy.spec.claim_ref.namespace, copy.spec.claim_ref.name) == (project.namespace, claim_name)
    assert copy.status.phase == "Bound"

    job = next(j for j in batch.list_namespaced_job(project.namespace).items if j.metadata.name.startswith("reads"))
    pod = job.spec.template.spec
    volume = next(v for v in pod.volumes if v.persistent_volume_claim)
    assert (volume.persistent_volume_claim.claim_name, volume.persistent_volume_claim.read_only) == (claim_name, True)
    mount = next(m for m in pod.containers[0].volume_mounts if m.name == volume.name)
    assert (mount.mount_path, mount.read_only) == ("/results", True)
    # The origin project's namespace got its copy too (its workloads mount the data volume the same way).
    assert core.read_namespaced_persistent_volume_claim(claim_name, sim_org.namespace).spec.volume_name == (
        f"{claim_name}-{sim_org.project.pk}")

    # Unshared: the consumer's copy goes (its claim and volume); the origin's stays.
    owner.patch(f"/api/v1/datavolumes/{dv_id}/sharedScopes",
                {"remove": [{"scopeType": "project", "scopeId": str(project.pk)}]}, format="json")
    asset_tasks.datavolume_sync.apply(args=[dv_id])
    selector = f"paas-studio/datavolume-id={dv_id}"
    names = {pv.metadata.name for pv in core.list_persistent_volume(label_selector=selector).items}
    assert names == {f"{claim_name}-{sim_org.project.pk}"}
    assert core.list_namespaced_persistent_volume_claim(project.namespace, label_selector=selector).items == []

    # Deleted: every copy goes, the row too; the origin claim and its data stay (shouldDeleteOriginalVolume false).
    assert owner.delete(f"/api/v1/datavolumes/{dv_id}").status_code == 202
    asset_tasks.datavolume_sync.apply(args=[dv_id])
    assert core.list_persistent_volume(label_selector=selector).items == []
    assert owner.get(f"/api/v1/datavolumes/{dv_id}").status_code == 404
    assert core.read_namespaced_persistent_volume_claim("train-out", sim_org.namespace).status.phase == "Bound"


def test_a_data_volume_of_a_claim_that_does_not_exist_is_not_ready_until_the_beat_finds_it_bound(worker, sim_org):
    owner = bearer_client(UserFactory(username=f"root-{sim_org.project.name}", platform_admin=True))
    made = owner.post("/api/v1/datavolumes", {"name": f"dv-{sim_org.project.name}", "originPvcName": "missing",
                                              "projectId": str(sim_org.project.pk)}, format="json").json()
    asset_tasks.datavolume_sync.apply(args=[made["id"]])
    status = owner.get(f"/api/v1/datavolumes/{made['id']}").json()["status"]
    assert status["phase"] == "NotReady"
    assert status["phaseMessage"] == f"The claim missing was not found in namespace {sim_org.namespace}."
    # Once the claim exists and is bound, the beat's round (one task per data volume, run by the worker) makes
    # it Ready.
    core = client.CoreV1Api(sim_org.k8s)
    core.create_namespace({"metadata": {"name": sim_org.namespace}})
    core.create_namespaced_persistent_volume_claim(sim_org.namespace, {"metadata": {"name": "missing"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    wait_for(lambda: core.read_namespaced_persistent_volume_claim("missing", sim_org.namespace).status.phase
             == "Bound", what="the claim to be bound")
    asset_tasks.datavolumes_sync.apply()
    wait_for(lambda: owner.get(f"/api/v1/datavolumes/{made['id']}").json()["status"]["phase"] == "Ready",
             what="the data volume to be Ready")
