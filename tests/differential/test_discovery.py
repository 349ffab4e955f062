"""What clients discover before they act: core/v1's resources and subresources, events.k8s.io/v1 (the same
objects as core/v1 Events), the
server-side Table of configmaps (kubectl's DATA column) and /openapi/v2 in both of its encodings."""

import datetime

# core/v1 of the real kube-apiserver (1.35): (name, kind, verbs, group/version of a subresource from elsewhere)
RW = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
STATUS = ["get", "patch", "update"]
PROXY = ["create", "delete", "get", "patch", "update"]
CORE_V1 = [
    ("bindings", "Binding", ["create"], None), ("componentstatuses", "ComponentStatus", ["get", "list"], None),
    ("configmaps", "ConfigMap", RW, None), ("endpoints", "Endpoints", RW, None), ("events", "Event", RW, None),
    ("limitranges", "LimitRange", RW, None),
    ("namespaces", "Namespace", ["create", "delete", "get", "list", "patch", "update", "watch"], None),
    ("namespaces/finalize", "Namespace", ["update"], None), ("namespaces/status", "Namespace", STATUS, None),
    ("nodes", "Node", RW, None), ("nodes/proxy", "NodeProxyOptions", PROXY, None),
    ("nodes/status", "Node", STATUS, None), ("persistentvolumeclaims", "PersistentVolumeClaim", RW, None),
    ("persistentvolumeclaims/status", "PersistentVolumeClaim", STATUS, None),
    ("persistentvolumes", "PersistentVolume", RW, None), ("persistentvolumes/status", "PersistentVolume", STATUS, None),
    ("pods", "Pod", RW, None), ("pods/attach", "PodAttachOptions", ["create", "get"], None),
    ("pods/binding", "Binding", ["create"], None), ("pods/ephemeralcontainers", "Pod", STATUS, None),
    ("pods/eviction", "Eviction", ["create"], "policy/v1"),
    ("pods/exec", "PodExecOptions", ["create", "get"], None), ("pods/log", "Pod", ["get"], None),
    ("pods/portforward", "PodPortForwardOptions", ["create", "get"], None),
    ("pods/proxy", "PodProxyOptions", PROXY, None), ("pods/resize", "Pod", STATUS, None),
    ("pods/status", "Pod", STATUS, None),
    ("podtemplates", "PodTemplate", RW, None), ("replicationcontrollers", "ReplicationController", RW, None),
    ("replicationcontrollers/scale", "Scale", STATUS, "autoscaling/v1"),
    ("replicationcontrollers/status", "ReplicationController", STATUS, None),
    ("resourcequotas", "ResourceQuota", RW, None), ("resourcequotas/status", "ResourceQuota", STATUS, None),
    ("secrets", "Secret", RW, None), ("serviceaccounts", "ServiceAccount", RW, None),
    ("serviceaccounts/token", "TokenRequest", ["create"], "authentication.k8s.io/v1"),
    ("services", "Service", RW, None),
    ("services/proxy", "ServiceProxyOptions", PROXY, None), ("services/status", "Service", STATUS, None),
]


def test_core_v1_lists_what_the_real_server_lists(apiserver):
    code, body = apiserver.json("GET", "/api/v1")
    assert code == 200 and body["groupVersion"] == "v1"
    listed = [(r["name"], r["kind"], r["verbs"], f"{r['group']}/{r['version']}" if r.get("group") else None)
              for r in body["resources"]]
    assert listed == CORE_V1
    short = {r["name"]: r.get("shortNames") for r in body["resources"] if r.get("shortNames")}
    assert short == {"componentstatuses": ["cs"], "configmaps": ["cm"], "endpoints": ["ep"], "events": ["ev"],
                     "limitranges": ["limits"], "namespaces": ["ns"], "nodes": ["no"],
                     "persistentvolumeclaims": ["pvc"], "persistentvolumes": ["pv"], "pods": ["po"],
                     "replicationcontrollers": ["rc"], "resourcequotas": ["quota"], "serviceaccounts": ["sa"],
                     "services": ["svc"]}


def test_service_accounts_endpoints_and_pod_eviction_are_served(apiserver):
    ns = apiserver.namespace()
    code, account = apiserver.json("POST", f"/api/v1/namespaces/{ns}/serviceaccounts", body={
        "metadata": {"name": "runner"}})
    assert code == 201 and account["kind"] == "ServiceAccount"
    code, endpoints = apiserver.json("POST", f"/api/v1/namespaces/{ns}/endpoints", body={
        "metadata": {"name": "web"}, "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 80}]}]})
    assert code == 201 and endpoints["subsets"][0]["addresses"] == [{"ip": "10.1.2.3"}]
    code, pod = apiserver.json("POST", f"/api/v1/namespaces/{ns}/pods", body={
        "metadata": {"name": "evicted"}, "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}})
    assert code == 201
    code, answer = apiserver.json("POST", f"/api/v1/namespaces/{ns}/pods/evicted/eviction", body={
        "apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "evicted", "namespace": ns}})
    assert (code, answer["kind"], answer["status"], answer["code"]) == (201, "Status", "Success", 201), answer
    code, body = apiserver.json("POST", f"/api/v1/namespaces/{ns}/pods/missing/eviction", body={
        "apiVersion": "policy/v1beta1", "kind": "Eviction", "metadata": {"name": "missing", "namespace": ns}})
    assert (code, body["reason"], body["message"]) == (404, "NotFound", 'pods "missing" not found')


def test_events_k8s_io_v1_is_served(apiserver):
    code, group = apiserver.json("GET", "/apis/events.k8s.io")
    assert code == 200 and group["preferredVersion"]["groupVersion"] == "events.k8s.io/v1"
    code, listed = apiserver.json("GET", "/apis/events.k8s.io/v1")
    assert [(r["name"], r["kind"], r.get("shortNames")) for r in listed["resources"]] == [("events", "Event", ["ev"])]
    ns = apiserver.namespace()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    event = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "pulled.1"},
             "eventTime": now, "reportingController": "example.com/trainer", "reportingInstance": "trainer-0",
             "action": "Pull", "reason": "Pulled", "type": "Normal", "note": "image pulled",
             "regarding": {"kind": "Pod", "namespace": ns, "name": "trainer", "apiVersion": "v1"}}
    code, created = apiserver.json("POST", f"/apis/events.k8s.io/v1/namespaces/{ns}/events", body=event)
    assert code == 201 and (created["kind"], created["apiVersion"]) == ("Event", "events.k8s.io/v1"), created
    code, read = apiserver.json("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events/pulled.1")
    assert code == 200 and (read["note"], read["regarding"]["name"], read["reason"]) == ("image pulled", "trainer",
                                                                                         "Pulled")
    # One kind, two APIs: core/v1 reads the same Event in its own field names.
    code, core = apiserver.json("GET", f"/api/v1/namespaces/{ns}/events/pulled.1")
    assert code == 200 and (core["message"], core["involvedObject"]["name"], core["reportingComponent"]) == (
        "image pulled", "trainer", "example.com/trainer")
    # Through events.k8s.io/v1 an Event is immutable but for its series (a recorder's count of repeats)...
    code, refused = apiserver.json("PATCH", f"/apis/events.k8s.io/v1/namespaces/{ns}/events/pulled.1",
                                   body={"note": "pulled again"}, content_type="application/merge-patch+json")
    assert (code, refused["reason"], refused["details"]["causes"]) == (422, "Invalid", [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "pulled again": field is immutable',
         "field": "message"}]), refused
    assert refused["message"] == ('Event "pulled.1" is invalid: message: Invalid value: "pulled again": field is '
                                  "immutable")
    series = {"count": 2, "lastObservedTime": now}
    code, patched = apiserver.json("PATCH", f"/apis/events.k8s.io/v1/namespaces/{ns}/events/pulled.1",
                                   body={"series": series}, content_type="application/merge-patch+json")
    assert code == 200 and patched["series"] == series, patched
    assert apiserver.json("GET", f"/api/v1/namespaces/{ns}/events/pulled.1")[1]["series"] == series
    # ...while core/v1 (the legacy API) still takes a new message, which events.k8s.io/v1 reads as the note.
    code, patched = apiserver.json("PATCH", f"/api/v1/namespaces/{ns}/events/pulled.1",
                                   body={"message": "pulled again"}, content_type="application/merge-patch+json")
    assert code == 200 and patched["message"] == "pulled again"
    assert apiserver.json("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events/pulled.1")[1]["note"] == "pulled again"


def test_configmaps_print_their_data_count(apiserver):
    ns = apiserver.namespace()
    apiserver.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                      body={"metadata": {"name": "settings"}, "data": {"a": "1", "b": "2"}})
    code, table = apiserver.json("GET", f"/api/v1/namespaces/{ns}/configmaps",
                                 accept="application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    assert code == 200 and (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"), ("Data", "string"), ("Age", "string")]
    assert [row["cells"][:2] for row in table["rows"]] == [["kube-root-ca.crt", 1], ["settings", 2]]
    assert table["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_openapi_v2_in_json_and_in_protobuf(apiserver):
    response = apiserver.request("GET", "/openapi/v2", timeout=60)
    assert response.status_code == 200 and response.headers["Content-Type"] == "application/json"
    document = response.json()
    assert document["swagger"] == "2.0" and document["info"]["title"] == "Kubernetes"
    job = document["definitions"]["io.k8s.api.batch.v1.Job"]
    assert job["x-kubernetes-group-version-kind"] == [{"group": "batch", "kind": "Job", "version": "v1"}]
    assert job["properties"]["spec"] == {"$ref": "#/definitions/io.k8s.api.batch.v1.JobSpec",
                                         "description": job["properties"]["spec"]["description"]}
    completions = document["definitions"]["io.k8s.api.batch.v1.JobSpec"]["properties"]["completions"]
    assert (completions["type"], completions["format"]) == ("integer", "int32")
    containers = document["definitions"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert (containers["x-kubernetes-patch-merge-key"], containers["x-kubernetes-patch-strategy"]) == ("name",
                                                                                                        "merge")
    assert document["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    patch = document["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "ConfigMap", "version": "v1"}
    parameters = [document["parameters"][p["$ref"].rsplit("/", 1)[1]] if "$ref" in p else p  # shared ones by $ref
                  for p in patch["parameters"]]
    assert {"dryRun", "fieldManager", "force"} <= {p["name"] for p in parameters}
    assert "application/apply-patch+yaml" in patch["consumes"]

    # kubectl asks for gnostic's protobuf encoding of the same document, and has no JSON fallback.
    encoded = apiserver.request("GET", "/openapi/v2",
                                accept="application/com.github.proto-openapi.spec.v2@v1.0+protobuf", timeout=60)
    assert encoded.status_code == 200 and encoded.headers["Content-Type"] == (
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
    assert encoded.content.startswith(b"\n\x032.0\x12")  # Document.swagger = "2.0", then Document.info
    assert b"io.k8s.api.batch.v1.JobSpec" in encoded.content and b"x-kubernetes-group-version-kind" in encoded.content
