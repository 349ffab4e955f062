"""studio.clusters.kube's paths that only a real API server exercises: continue tokens that expire after etcd's
compaction (410 + restart) and watch BOOKMARK events."""


import pytest
from kubernetes import client

from studio.clusters import kube
from tests.workloads.cluster_support import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


class CompactingConnection(kube.Connection):
    """The product's connection, with etcd compacted right after the first page of a list (what the API server
    itself does every 5 minutes), so that the next page's continue token has expired. Records each 410."""

    def __init__(self, api_client, real, make_more):
        super().__init__(api_client, cluster_id="compacting")
        self.real, self.make_more, self.compacted, self.expired = real, make_more, False, 0

    def request(self, method, path, **kwargs):
        try:
            answer = super().request(method, path, **kwargs)
        except kube.Expired:
            self.expired += 1
            raise
        if kwargs.get("verb") == "list" and not self.compacted:
            self.compacted = True
            self.make_more()
            self.real.compact()
        return answer


def secret(namespace: str, name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": namespace,
                                                               "labels": {"paged": "yes"}}}


def test_a_paged_list_whose_continue_token_expires_starts_over_and_misses_nothing(real_org):
    conn = kube.connect(real_org.cluster)
    kube.namespace_ensure(conn, real_org.namespace)
    for i in range(7):
        kube.create(conn, secret(real_org.namespace, f"s-{i}"))
    compacting = CompactingConnection(conn.api, real_org.real.server,
                                      lambda: kube.create(conn, secret(real_org.namespace, "s-late")))
    items = kube.list_objects(compacting, "v1", "Secret", namespace=real_org.namespace, label_selector="paged=yes",
                              limit=2)
    assert compacting.expired == 1  # the real server answered 410 Expired to the second page
    assert sorted(i["metadata"]["name"] for i in items) == sorted([f"s-{i}" for i in range(7)] + ["s-late"])


def test_a_watch_receives_bookmarks_and_follows_them_to_the_changes(real_org):
    conn = kube.connect(real_org.cluster)
    kube.namespace_ensure(conn, real_org.namespace)
    # A bare pod needs its namespace's default ServiceAccount, which the controller manager adds a moment after
    # the namespace exists.
    core = client.CoreV1Api(real_org.k8s)
    wait_for(lambda: any(a.metadata.name == "default" for a in core.list_namespaced_service_account(
        real_org.namespace).items), timeout=30, what="the namespace's default service account")
    path = kube.resource_path(*kube.POD, namespace=real_org.namespace)  # the product watches pods (deploy/)
    # The server's watch cache sends bookmarks once it has seen a change of the kind since it started.
    client.CoreV1Api(real_org.k8s).create_namespaced_pod(real_org.namespace, {
        "metadata": {"name": "first"}, "spec": {"containers": [{"name": "main", "image": "busybox"}]}})
    listed = conn.request("GET", path, verb="list", resource="pods")
    response = conn.request("GET", path, verb="watch", resource="pods", stream=True, timeout=(5, 15),
                            query={"watch": "true", "allowWatchBookmarks": "true", "timeoutSeconds": 4,
                                   "resourceVersion": listed["metadata"]["resourceVersion"]})
    try:
        kinds = [event["type"] for event in kube.watch_events(response)]
    finally:
        response.release_conn()
    assert "BOOKMARK" in kinds  # sent before a watch's timeout: the version to resume from

    events = kube.watch(conn, *kube.POD, namespace=real_org.namespace, label_selector="watched=yes",
                        timeout_seconds=8)
    assert next(events)[0] == "SYNCED"
    client.CoreV1Api(real_org.k8s).create_namespaced_pod(real_org.namespace, {
        "metadata": {"name": "watched", "labels": {"watched": "yes"}},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]}})
    kind, obj = next(events)
    assert (kind, obj["metadata"]["name"], obj["kind"]) == ("ADDED", "watched", "Pod")
    events.close()
