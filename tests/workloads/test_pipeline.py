"""studio.clusters.kube and the cluster-side services (workloads.cluster.push) against kubesim over HTTP, in-process: create or
adopt, conflicts, paging, watch with relist, error sorting, and what a push / suspend / remove does."""

import base64
import json
import time

import pytest
from kubernetes import client

from profiles.models import LaunchSecret
from studio.clusters import kube
from tests.workloads.cluster_support import make_workload
from workloads import manifests
from workloads.cluster import push, sync
from workloads.models import Workload, WorkloadEvent

pytestmark = pytest.mark.django_db(transaction=True)


def ref_of(workload):
    return push.workload_ref(Workload.objects.select_related("project").get(pk=workload.pk))


def job_of(org, workload):
    return client.BatchV1Api(org.k8s).read_namespaced_job(manifests.object_name(ref_of(workload)), org.namespace)


def test_push_creates_the_namespace_and_objects_and_a_second_push_adopts_them(sim_org):
    workload = make_workload(sim_org.project, "twice")
    push.workload_push(workload.pk)
    push.workload_push(workload.pk)
    stats = sim_org.sim.stats()
    assert stats[("create", "jobs")] == 2 and stats[("get", "jobs")] == 1  # the 409, then read and compare
    job = job_of(sim_org, workload)
    assert job.metadata.labels[manifests.WORKLOAD_ID_LABEL] == str(workload.pk)
    assert job.spec.suspend is False
    namespace = client.CoreV1Api(sim_org.k8s).read_namespace(sim_org.namespace)
    assert namespace.metadata.labels[manifests.PROJECT_LABEL] == sim_org.project.name
    workload.refresh_from_db()
    assert workload.submitted_at is not None
    assert list(workload.events.values_list("reason", flat=True)) == ["Created"]


def test_a_burst_of_pushes_ensures_the_namespace_once_and_again_after_it_was_deleted(sim_org):
    first, second, third = (make_workload(sim_org.project, name) for name in ("one", "two", "three"))
    push.workload_push(first.pk)
    push.workload_push(second.pk)
    assert sim_org.sim.stats()[("create", "namespaces")] == 1  # one request per push after the first: the Job

    core = client.CoreV1Api(sim_org.k8s)
    core.delete_namespace(sim_org.namespace)
    while any(ns.metadata.name == sim_org.namespace for ns in core.list_namespace().items):
        time.sleep(0.05)  # the namespace and its objects are gone
    push.workload_push(third.pk)  # the Job's create answers 404: the namespace is made again, then the Job
    assert sim_org.sim.stats()[("create", "namespaces")] == 2
    assert job_of(sim_org, third).metadata.labels[manifests.WORKLOAD_ID_LABEL] == str(third.pk)
    namespace = core.read_namespace(sim_org.namespace)
    assert namespace.metadata.labels[manifests.PROJECT_LABEL] == sim_org.project.name
    third.refresh_from_db()
    assert third.actual_phase != "Failed" and third.submitted_at is not None


def test_an_object_of_the_same_name_owned_by_another_workload_fails_the_push_with_the_clusters_words(sim_org):
    workload = make_workload(sim_org.project, "taken")
    job = manifests.build_manifests(ref_of(workload), workload.spec)[-1]
    job["metadata"]["labels"][manifests.WORKLOAD_ID_LABEL] = "someone-else"
    job["spec"]["template"]["metadata"]["labels"][manifests.WORKLOAD_ID_LABEL] = "someone-else"
    kube.namespace_ensure(kube.connect(sim_org.cluster), sim_org.namespace)
    kube.create(kube.connect(sim_org.cluster), job)

    push.workload_push(workload.pk)
    workload.refresh_from_db()
    assert workload.actual_phase == "Failed"
    assert workload.phase_message == (f'Job "{job["metadata"]["name"]}" already exists in namespace '
                                      f"{sim_org.namespace} and belongs to another workload.")
    event = workload.events.get(reason="Failed")
    assert event.type == WorkloadEvent.Type.WARNING and event.message == workload.phase_message


def test_an_invalid_object_is_a_permanent_error_with_the_api_servers_message(sim_org):
    conn = kube.connect(sim_org.cluster)
    kube.namespace_ensure(conn, sim_org.namespace)
    bad = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "Not_A_Name", "namespace": sim_org.namespace},
           "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    with pytest.raises(kube.PermanentClusterError) as raised:
        kube.create(conn, bad)
    assert raised.value.status == 422 and 'Job.batch "Not_A_Name" is invalid' in raised.value.message


def test_an_unavailable_cluster_is_a_transient_error_and_the_workload_is_left_as_it_was(sim_org):
    workload = make_workload(sim_org.project, "later")
    sim_org.sim.set_faults(outage=True)
    with pytest.raises(kube.TransientClusterError) as raised:
        push.workload_push(workload.pk)
    assert raised.value.status == 503
    workload.refresh_from_db()
    assert (workload.actual_phase, workload.submitted_at) == ("Creating", None)
    assert isinstance(raised.value, kube.TRANSIENT_ERRORS)


def test_a_workload_stopped_before_its_push_is_created_suspended_and_a_deleted_one_not_at_all(sim_org):
    stopped = make_workload(sim_org.project, "parked", desired="Stopped")
    deleted = make_workload(sim_org.project, "dropped", desired="Deleted")
    push.workload_push(stopped.pk)
    push.workload_push(deleted.pk)
    assert job_of(sim_org, stopped).spec.suspend is True
    jobs = client.BatchV1Api(sim_org.k8s).list_namespaced_job(sim_org.namespace).items
    assert [j.metadata.name for j in jobs] == [manifests.object_name(ref_of(stopped))]


def test_suspension_follows_the_desired_phase_whichever_task_runs(sim_org):
    workload = make_workload(sim_org.project, "flip")
    push.workload_push(workload.pk)
    Workload.objects.filter(pk=workload.pk).update(desired_phase="Stopped")
    push.workload_apply_suspension(workload.pk)
    assert job_of(sim_org, workload).spec.suspend is True
    Workload.objects.filter(pk=workload.pk).update(desired_phase="Running")
    push.workload_apply_suspension(workload.pk)  # a late suspend task, after a resume: it resumes
    assert job_of(sim_org, workload).spec.suspend is False


def test_resume_of_a_workload_whose_object_is_missing_pushes_it(sim_org):
    workload = make_workload(sim_org.project, "missing")
    push.workload_apply_suspension(workload.pk)
    assert job_of(sim_org, workload).spec.suspend is False


def test_remove_deletes_each_kind_found_by_label_and_nothing_while_the_workload_lives(sim_org):
    workload = make_workload(sim_org.project, "leaving", ports=[{"container": 8888, "serviceType": "ClusterIP"}])
    push.workload_push(workload.pk)
    assert push.workload_remove(workload.pk) == 0  # desired Running: a stray remove task does nothing
    Workload.objects.filter(pk=workload.pk).update(desired_phase="Deleted")
    assert push.workload_remove(workload.pk) == 2  # the Job and the Service
    selector = f"{manifests.WORKLOAD_ID_LABEL}={workload.pk}"
    assert client.BatchV1Api(sim_org.k8s).list_namespaced_job(sim_org.namespace, label_selector=selector).items == []
    assert client.CoreV1Api(sim_org.k8s).list_namespaced_service(sim_org.namespace, label_selector=selector).items == []


def test_a_catalog_launchs_secret_is_pushed_with_the_workload_and_removed_with_it(sim_org):
    workload = make_workload(sim_org.project, "notebook")
    Workload.objects.filter(pk=workload.pk).update(source=Workload.Source.CATALOG)  # only a launch has one
    LaunchSecret.objects.create(workload_id=workload.pk, name="notebook-secrets",
                                data_json=json.dumps({"token": "s3cret"}))
    push.workload_push(workload.pk)
    secret = client.CoreV1Api(sim_org.k8s).read_namespaced_secret("notebook-secrets", sim_org.namespace)
    assert base64.b64decode(secret.data["token"]) == b"s3cret"
    assert secret.metadata.labels[manifests.WORKLOAD_ID_LABEL] == str(workload.pk)

    Workload.objects.filter(pk=workload.pk).update(desired_phase="Deleted")
    assert push.workload_remove(workload.pk) == 2  # the Secret and the Job
    selector = f"{manifests.WORKLOAD_ID_LABEL}={workload.pk}"
    assert client.CoreV1Api(sim_org.k8s).list_namespaced_secret(sim_org.namespace, label_selector=selector).items == []


def test_list_objects_reads_page_by_page(sim_org):
    conn = kube.connect(sim_org.cluster)
    kube.namespace_ensure(conn, sim_org.namespace)
    for i in range(5):
        kube.create(conn, {"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": f"cm-{i}", "namespace": sim_org.namespace, "labels": {"paged": "yes"}}})
    sim_org.sim.reset_stats()
    items = kube.list_objects(conn, "v1", "ConfigMap", namespace=sim_org.namespace, label_selector="paged=yes", limit=2)
    assert [i["metadata"]["name"] for i in items] == [f"cm-{i}" for i in range(5)]
    assert {i["kind"] for i in items} == {"ConfigMap"}
    assert sim_org.sim.stats() == {("list", "configmaps"): 3}


def test_watch_streams_changes_and_lists_again_when_its_version_has_expired(sim_org, start_kubesim):
    sim = start_kubesim(history=5)
    sim_org.cluster.api_server_url = sim.url
    sim_org.cluster.save()
    conn = kube.connect(sim_org.cluster)
    kube.namespace_ensure(conn, "watched")

    def config_map(name):
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "watched"}}

    kube.create(conn, config_map("first"))
    events = kube.watch(conn, "v1", "ConfigMap", namespace="watched", timeout_seconds=20)
    kind, listed = next(events)
    # (with the kube-root-ca.crt the cluster puts in every namespace)
    assert kind == "SYNCED" and [o["metadata"]["name"] for o in listed["items"]] == ["first", "kube-root-ca.crt"]
    for i in range(10):  # more changes than the server's history keeps: the listed version is now too old
        kube.create(conn, config_map(f"more-{i}"))
    kind, relisted = next(events)
    assert kind == "SYNCED" and len(relisted["items"]) == 12
    kube.create(conn, config_map("after"))
    kind, obj = next(events)
    assert (kind, obj["metadata"]["name"], obj["kind"]) == ("ADDED", "after", "ConfigMap")
    events.close()


def test_metrics_endpoint_counts_cluster_calls_and_workloads_by_phase(sim_org, anon):
    workload = make_workload(sim_org.project, "counted")
    push.workload_push(workload.pk)
    text = anon.get("/metrics").content.decode()
    assert f'studio_cluster_api_calls_total{{cluster="{sim_org.cluster.name}",resource="jobs.batch",verb="create"}}' \
        in text
    assert 'studio_workloads{kind="training",phase="Creating"} 1.0' in text


def test_a_kubeconfig_that_cannot_be_used_fails_the_push_and_the_sync_round(sim_org):
    sim_org.cluster.kubeconfig = "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n"
    sim_org.cluster.save()
    workload = make_workload(sim_org.project, "nowhere")
    push.workload_push(workload.pk)
    workload.refresh_from_db()
    assert workload.actual_phase == "Failed"
    assert workload.phase_message.startswith("The cluster's kubeconfig cannot be used: ")
    assert sync.cluster_sync(sim_org.cluster.pk) is None
    sim_org.cluster.refresh_from_db()
    assert sim_org.cluster.failed_rounds == 1
    assert sim_org.cluster.status_message == workload.phase_message
