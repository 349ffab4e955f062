"""Custom resources on the real API server: a CRD of the test's own, and its objects created, read, listed, watched,
patched, deleted and garbage-collected (by ownerReferences either way, and with their namespace) by the real
kube-controller-manager."""

import uuid

import pytest
from kubernetes import client, watch

from tests.workloads.cluster_support import wait_for

GROUP, VERSION, PLURAL = "e2e.paas-studio.dev", "v1", "widgets"


@pytest.fixture(scope="module")
def widgets(real_apiserver):
    from tests.conftest import real_official_client

    api = real_official_client(real_apiserver)
    ext = client.ApiextensionsV1Api(api)
    ext.create_custom_resource_definition({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": PLURAL, "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                 "versions": [{"name": VERSION, "served": True, "storage": True, "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": {
                                   "type": "object", "properties": {
                                       "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                       "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}})
    wait_for(lambda: any(c.type == "Established" and c.status == "True" for c in
                         ext.read_custom_resource_definition(f"{PLURAL}.{GROUP}").status.conditions or []),
             what="the CRD to be established")
    yield client.CustomObjectsApi(api), client.CoreV1Api(api)
    ext.delete_custom_resource_definition(f"{PLURAL}.{GROUP}")
    api.close()


@pytest.fixture
def namespace(widgets):
    _, core = widgets
    name = f"cr-{uuid.uuid4().hex[:8]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    try:
        core.delete_namespace(name)
    except client.ApiException as exc:
        if exc.status != 404:
            raise


def widget(name: str, **meta) -> dict:
    # Nested maps, lists and labels: what json-iterator's map encoding walks, and crashed on.
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget",
            "metadata": {"name": name, "labels": {"app": "w", "tier": "e2e"}, **meta},
            "spec": {"sizes": {"a": 1, "b": [1, 2, {"c": "d"}]}, "tags": ["x", "y"]}}


def _gone(read) -> bool:
    try:
        read()
    except client.ApiException as exc:
        return exc.status == 404
    return False


def test_a_custom_resource_is_created_read_listed_watched_patched_and_deleted(real_apiserver, widgets, namespace):
    objects, _ = widgets
    start = objects.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL)["metadata"]["resourceVersion"]
    created = objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, widget("w1"))
    assert created["metadata"]["uid"] and created["spec"]["sizes"]["b"][2] == {"c": "d"}
    read = objects.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "w1")
    assert read["metadata"]["labels"] == {"app": "w", "tier": "e2e"} and read["spec"] == created["spec"]
    assert read["metadata"]["managedFields"][0]["manager"]  # server-side field tracking encodes the map too
    objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, widget("w2", labels={"app": "v"}))
    listed = objects.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, label_selector="app=w")
    assert [o["metadata"]["name"] for o in listed["items"]] == ["w1"]
    patched = objects.patch_namespaced_custom_object_status(GROUP, VERSION, namespace, PLURAL, "w1",
                                                            {"status": {"phase": "Ready", "counts": {"ok": 2}}})
    assert patched["status"] == {"phase": "Ready", "counts": {"ok": 2}}
    objects.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "w1")
    seen = []
    for event in watch.Watch().stream(objects.list_namespaced_custom_object, GROUP, VERSION, namespace, PLURAL,
                                      resource_version=start, timeout_seconds=10):
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if event["type"] == "DELETED":
            break
    assert seen == [("ADDED", "w1"), ("ADDED", "w2"), ("MODIFIED", "w1"), ("DELETED", "w1")]
    assert real_apiserver.processes["kube-apiserver"].poll() is None  # alive: the shared binary died at the create


def test_custom_resources_are_garbage_collected_by_owner_references_and_with_their_namespace(widgets, namespace):
    objects, core = widgets
    # A Widget owned by a ConfigMap, and a ConfigMap owned by a Widget: the collector walks both ways.
    owner = core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="owner")))
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid}
    objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, widget("owned", ownerReferences=[ref]))
    parent = objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, widget("parent"))
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(
        name="child", owner_references=[client.V1OwnerReference(
            api_version=f"{GROUP}/{VERSION}", kind="Widget", name="parent", uid=parent["metadata"]["uid"])])))
    core.delete_namespaced_config_map("owner", namespace)
    wait_for(lambda: _gone(lambda: objects.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "owned")),
             what="the garbage collector to delete the Widget of a deleted ConfigMap")
    objects.delete_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "parent",
                                            body={"propagationPolicy": "Foreground"})
    wait_for(lambda: _gone(lambda: core.read_namespaced_config_map("child", namespace)),
             what="the garbage collector to delete the ConfigMap of a deleted Widget")
    wait_for(lambda: _gone(lambda: objects.get_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, "parent")),
             what="the foreground deletion to finish")
    objects.create_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL, widget("left"))
    core.delete_namespace(namespace)
    wait_for(lambda: _gone(lambda: core.read_namespace(namespace)), timeout=60,
             what="the namespace controller to delete the namespace's Widgets, then the namespace")
