"""The simulated API server speaks the Kubernetes protocol: exercised through the official client over HTTP."""

import json
import threading
import time
import urllib.error
import urllib.request

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from kubesim import KubeSim

from .conftest import FAST, TOKEN, api_client, deployment_manifest, job_manifest, pod_manifest, wait_until


def status_of(exc: ApiException) -> dict:
    return json.loads(exc.body)


def admin(sim, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(sim.url + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {TOKEN}"},
                                     method="GET" if body is None else "POST")
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def test_discovery(k8s):
    assert client.VersionApi(k8s).get_code().git_version.startswith("v1.35")
    assert client.CoreApi(k8s).get_api_versions().versions == ["v1"]
    core = {r.name for r in client.CoreV1Api(k8s).get_api_resources().resources}
    assert {"namespaces", "pods", "pods/status", "pods/log", "services", "persistentvolumeclaims", "secrets",
            "configmaps", "events", "nodes"} <= core
    groups = {g.name: g.preferred_version.group_version for g in client.ApisApi(k8s).get_api_versions().groups}
    assert groups == {"batch": "batch/v1", "events.k8s.io": "events.k8s.io/v1", "apps": "apps/v1",
                      "networking.k8s.io": "networking.k8s.io/v1",
                      "autoscaling": "autoscaling/v2", "serving.knative.dev": "serving.knative.dev/v1",
                      "kubeflow.org": "kubeflow.org/v1", "metrics.k8s.io": "metrics.k8s.io/v1beta1",
                      "storage.k8s.io": "storage.k8s.io/v1"}
    jobs = {r.name: r for r in client.BatchV1Api(k8s).get_api_resources().resources}
    assert jobs["jobs"].kind == "Job" and jobs["jobs"].namespaced and "watch" in jobs["jobs"].verbs
    assert "deployments/scale" in {r.name for r in client.AppsV1Api(k8s).get_api_resources().resources}


def test_knative_group_absent_when_disabled():
    with KubeSim(nodes=1, knative=False, token=TOKEN, **FAST) as sim, api_client(sim) as k8s:
        assert "serving.knative.dev" not in {g.name for g in client.ApisApi(k8s).get_api_versions().groups}
        with pytest.raises(ApiException) as exc:
            client.CustomObjectsApi(k8s).list_namespaced_custom_object("serving.knative.dev", "v1", "default",
                                                                       "services")
        assert exc.value.status == 404


def test_create_get_list_and_real_errors(batch, core, ns):
    created = batch.create_namespaced_job(ns, job_manifest("train", annotations={"kubesim.paas-studio/run-seconds": "60"}))
    meta = created.metadata
    assert meta.uid and meta.generation == 1 and meta.creation_timestamp and int(meta.resource_version) > 0
    assert created.spec.completions == 1 and created.spec.parallelism == 1 and created.spec.backoff_limit == 6
    assert created.spec.template.metadata.labels["job-name"] == "train"
    assert batch.read_namespaced_job("train", ns).metadata.uid == meta.uid
    assert [j.metadata.name for j in batch.list_namespaced_job(ns).items] == ["train"]
    assert "train" in {j.metadata.name for j in batch.list_job_for_all_namespaces().items}

    with pytest.raises(ApiException) as exc:
        batch.create_namespaced_job(ns, job_manifest("train"))
    assert exc.value.status == 409
    body = status_of(exc.value)
    assert (body["kind"], body["status"], body["reason"]) == ("Status", "Failure", "AlreadyExists")
    assert body["message"] == 'jobs.batch "train" already exists'
    assert body["details"] == {"name": "train", "group": "batch", "kind": "jobs"}

    with pytest.raises(ApiException) as exc:
        batch.read_namespaced_job("nope", ns)
    assert exc.value.status == 404 and status_of(exc.value)["message"] == 'jobs.batch "nope" not found'

    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map("missing", {"metadata": {"name": "x"}})
    assert exc.value.status == 404 and status_of(exc.value)["message"] == 'namespaces "missing" not found'


def test_invalid_manifests_are_422_with_causes(batch, apps, core, ns):
    cases = [
        (job_manifest("Bad_Name"), "metadata.name", "FieldValueInvalid", "a lowercase RFC 1123 subdomain"),
        (job_manifest("no-policy", restart_policy=None), "spec.template.spec.restartPolicy",
         "FieldValueNotSupported", 'Unsupported value: "Always"'),
        (job_manifest("no-image", image=""), "spec.template.spec.containers[0].image", "FieldValueRequired",
         "Required value"),
        (job_manifest("bad-label", labels={"team": "a b"}), "metadata.labels", "FieldValueInvalid",
         "a valid label must be an empty string"),
    ]
    for manifest, field, reason, text in cases:
        if manifest["spec"]["template"]["spec"]["restartPolicy"] is None:
            del manifest["spec"]["template"]["spec"]["restartPolicy"]
        with pytest.raises(ApiException) as exc:
            batch.create_namespaced_job(ns, manifest)
        body = status_of(exc.value)
        assert exc.value.status == 422 and body["reason"] == "Invalid", body
        assert body["message"].startswith(f'Job.batch "{manifest["metadata"]["name"]}" is invalid: ')
        assert body["details"]["kind"] == "Job" and body["details"]["group"] == "batch"
        cause = body["details"]["causes"][0]
        assert (cause["field"], cause["reason"]) == (field, reason) and text in cause["message"], cause

    bad_port = job_manifest("bad-port")
    bad_port["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": "eighty"}]
    with pytest.raises(ApiException) as exc:  # a wrong JSON type fails decoding: 400, before validation
        batch.create_namespaced_job(ns, bad_port)
    body = status_of(exc.value)
    assert exc.value.status == 400 and body["reason"] == "BadRequest", body
    assert body["message"] == ('Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string into Go '
                               "struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type "
                               "int32"), body

    mismatched = deployment_manifest("web")
    mismatched["spec"]["selector"] = {"matchLabels": {"app": "other"}}
    with pytest.raises(ApiException) as exc:
        apps.create_namespaced_deployment(ns, mismatched)
    assert status_of(exc.value)["details"]["causes"][0]["field"] == "spec.template.metadata.labels"

    with pytest.raises(ApiException) as exc:
        core.create_namespaced_pod(ns, pod_manifest("x", annotations={}, labels={"ok": "yes"}) | {
            "spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": {"cpu": "lots"}}}]}})
    assert exc.value.status == 400 and "quantities must match" in status_of(exc.value)["message"]


def test_stale_update_is_a_conflict_and_generation_tracks_spec(apps, ns):
    apps.create_namespaced_deployment(ns, deployment_manifest("web"))
    # Settled first: until then the controllers write its status and revision annotation, and a real cluster's
    # writes would race this read-modify-write just the same.
    first = wait_until(lambda: (d := apps.read_namespaced_deployment("web", ns)).status.available_replicas and d)
    first.metadata.labels = {"tier": "frontend"}
    relabelled = apps.replace_namespaced_deployment("web", ns, first)
    assert relabelled.metadata.generation == 1  # metadata changes leave generation alone
    assert int(relabelled.metadata.resource_version) > int(first.metadata.resource_version)

    first.spec.replicas = 3  # first still carries the old resourceVersion
    with pytest.raises(ApiException) as exc:
        apps.replace_namespaced_deployment("web", ns, first)
    body = status_of(exc.value)
    assert exc.value.status == 409 and body["reason"] == "Conflict"
    assert body["message"] == ('Operation cannot be fulfilled on deployments.apps "web": the object has been '
                               "modified; please apply your changes to the latest version and try again")

    latest = apps.read_namespaced_deployment("web", ns)
    latest.spec.replicas = 2
    assert apps.replace_namespaced_deployment("web", ns, latest).metadata.generation == 2


ROOT_CA = "kube-root-ca.crt"
LABELS = {"a": {"env": "prod", "tier": "web"}, "b": {"env": "dev", "tier": "web"}, "c": {"env": "prod"}, "d": {}}


@pytest.mark.parametrize("selector, expected", [
    ("env=prod", "ac"), ("env==prod", "ac"), ("env!=prod", "bd"), ("env in (prod,dev)", "abc"),
    ("env notin (prod)", "bd"), ("tier", "ab"), ("!tier", "cd"), ("env=prod,tier", "a"),
    ("env in (prod), !tier", "c"), ("env in (qa)", ""), ("", "abcd"),
])
def test_label_selectors(core, ns, selector, expected):
    for name, labels in LABELS.items():
        core.create_namespaced_config_map(ns, {"metadata": {"name": name, "labels": labels}})
    found = core.list_namespaced_config_map(ns, label_selector=selector).items
    # Every namespace also holds the controller manager's kube-root-ca.crt, without labels.
    assert "".join(sorted(cm.metadata.name for cm in found if cm.metadata.name != ROOT_CA)) == expected


def test_bad_selectors_are_400(core, ns):
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_config_map(ns, label_selector="env in prod")
    assert exc.value.status == 400
    with pytest.raises(ApiException) as exc:
        core.list_namespaced_pod(ns, field_selector="spec.colour=blue")
    assert exc.value.status == 400 and status_of(exc.value)["message"] == "field label not supported: spec.colour"


def test_field_selectors(core, ns):
    core.create_namespaced_pod(ns, pod_manifest("runs"))
    core.create_namespaced_pod(ns, pod_manifest("waits", gpus=64))  # more GPUs than any node has
    wait_until(lambda: core.read_namespaced_pod("runs", ns).status.phase == "Running")

    def names(**kw):
        return sorted(p.metadata.name for p in core.list_namespaced_pod(ns, **kw).items)

    assert names(field_selector="status.phase=Running") == ["runs"]
    assert names(field_selector="status.phase!=Running") == ["waits"]
    assert names(field_selector="metadata.name=waits") == ["waits"]
    assert names(field_selector=f"metadata.namespace={ns},metadata.name!=waits") == ["runs"]
    everywhere = core.list_pod_for_all_namespaces(field_selector=f"metadata.namespace={ns}").items
    assert len(everywhere) == 2


def test_chunked_lists_with_limit_and_continue(core, ns):
    for i in range(25):
        core.create_namespaced_config_map(ns, {"metadata": {"name": f"cm-{i:02d}", "labels": {"odd": str(i % 2)}}})
    page = core.list_namespaced_config_map(ns, limit=10)
    # 25 and the namespace's kube-root-ca.crt
    assert len(page.items) == 10 and page.metadata._continue and page.metadata.remaining_item_count == 16
    seen = [cm.metadata.name for cm in page.items]
    while page.metadata._continue:
        page = core.list_namespaced_config_map(ns, limit=10, _continue=page.metadata._continue)
        seen += [cm.metadata.name for cm in page.items]
    assert seen == [f"cm-{i:02d}" for i in range(25)] + [ROOT_CA]
    assert page.metadata.remaining_item_count is None
    odd = core.list_namespaced_config_map(ns, limit=5, label_selector="odd=1")
    assert len(odd.items) == 5 and odd.metadata._continue and odd.metadata.remaining_item_count is None
    rest = core.list_namespaced_config_map(ns, limit=50, label_selector="odd=1", _continue=odd.metadata._continue)
    assert len(rest.items) == 7 and not rest.metadata._continue
    across = core.list_config_map_for_all_namespaces(limit=3)
    assert len(across.items) == 3 and across.metadata._continue
    assert int(page.metadata.resource_version) > 0


def test_watch_streams_events_in_order(core, ns):
    start = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, {"metadata": {"name": "w", "labels": {"app": "x"}}, "data": {"k": "1"}})
    core.patch_namespaced_config_map("w", ns, {"data": {"k": "2"}})
    core.delete_namespaced_config_map("w", ns)
    events = []
    for event in watch.Watch().stream(core.list_namespaced_config_map, ns, resource_version=start,
                                      timeout_seconds=2):
        events.append((event["type"], event["object"].metadata.name, (event["object"].data or {}).get("k")))
        if len(events) == 3:
            break
    assert events == [("ADDED", "w", "1"), ("MODIFIED", "w", "2"), ("DELETED", "w", "2")]


def test_watch_without_resource_version_lists_then_follows(core, ns):
    core.create_namespaced_config_map(ns, {"metadata": {"name": "before"}})
    seen, stream = [], watch.Watch()

    def later():
        time.sleep(0.2)
        core.create_namespaced_config_map(ns, {"metadata": {"name": "after"}})

    threading.Thread(target=later, daemon=True).start()
    for event in stream.stream(core.list_namespaced_config_map, ns, timeout_seconds=3):
        if event["object"].metadata.name != ROOT_CA:
            seen.append((event["type"], event["object"].metadata.name))
        if len(seen) == 2:
            stream.stop()
    assert seen == [("ADDED", "before"), ("ADDED", "after")]


def test_watch_with_selector_sees_objects_leave_it(core, ns):
    start = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, {"metadata": {"name": "m", "labels": {"keep": "yes"}}})
    core.patch_namespaced_config_map("m", ns, {"metadata": {"labels": {"keep": "no"}}})
    types = [e["type"] for e in watch.Watch().stream(core.list_namespaced_config_map, ns, resource_version=start,
                                                      label_selector="keep=yes", timeout_seconds=1)]
    assert types == ["ADDED", "DELETED"]


def test_watch_from_a_compacted_resource_version_raises_410(core, ns, sim):
    old = core.list_namespaced_config_map(ns).metadata.resource_version
    for i in range(sim.store.history.maxlen + 5):  # push `old` out of the history window
        core.create_namespaced_config_map(ns, {"metadata": {"name": f"churn-{i}"}})
    for kwargs in ({"timeout_seconds": 2}, {}):  # with a timeout the client raises at once, without it after a retry
        with pytest.raises(ApiException) as exc:
            for _ in watch.Watch().stream(core.list_namespaced_config_map, ns, resource_version=old, **kwargs):
                pass
        assert exc.value.status == 410 and "too old resource version" in exc.value.reason


def test_strategic_merge_json_and_merge_patches(apps, k8s, ns):
    containers = [{"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
                  {"name": "sidecar", "image": "proxy:1"}]
    apps.create_namespaced_deployment(ns, deployment_manifest("web", containers=containers))
    # A dict body goes as application/strategic-merge-patch+json: lists merge by their patch-merge key.
    patched = apps.patch_namespaced_deployment("web", ns, {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]}]}}}})
    by_name = {c.name: c for c in patched.spec.template.spec.containers}
    assert by_name["app"].image == "app:2" and by_name["sidecar"].image == "proxy:1"
    assert [(e.name, e.value) for e in by_name["app"].env] == [("A", "1"), ("B", "20"), ("C", "3")]
    assert patched.metadata.generation == 2
    # A list body goes as application/json-patch+json.
    patched = apps.patch_namespaced_deployment("web", ns, [{"op": "replace", "path": "/spec/replicas", "value": 2},
                                                           {"op": "add", "path": "/metadata/labels", "value": {"x": "y"}}])
    assert patched.spec.replicas == 2 and patched.metadata.labels == {"x": "y"}
    # JSON merge patch replaces lists wholesale.
    merged = k8s.call_api(f"/apis/apps/v1/namespaces/{ns}/deployments/web", "PATCH",
                          header_params={"Content-Type": "application/merge-patch+json", "Accept": "application/json"},
                          body={"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "solo:1"}]}}}},
                          auth_settings=["BearerToken"], response_type="object", _return_http_data_only=True)
    assert [c["name"] for c in merged["spec"]["template"]["spec"]["containers"]] == ["only"]
    with pytest.raises(ApiException) as exc:
        apps.patch_namespaced_deployment("web", ns, {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 5}})
    assert exc.value.status == 409


def test_bearer_token_is_required(sim):
    for token in (None, "wrong"):
        with api_client(sim, token) as k8s, pytest.raises(ApiException) as exc:
            client.CoreV1Api(k8s).list_namespace()
        assert exc.value.status == 401
        assert status_of(exc.value) == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}


def test_outage_latency_and_request_counters(sim, core, ns):
    sim.reset_stats()
    core.list_namespaced_config_map(ns)
    core.list_namespaced_config_map(ns)
    core.read_namespace(ns)
    assert sim.stats() == {("list", "configmaps"): 2, ("get", "namespaces"): 1}
    document = admin(sim, "/_sim/stats")
    assert document["total"] == 3 and {"verb": "list", "resource": "configmaps", "count": 2} in document["requests"]
    assert admin(sim, "/_sim/stats/reset", {})["total"] == 0

    admin(sim, "/_sim/faults", {"outage": True})
    try:
        with pytest.raises(ApiException) as exc:
            core.list_namespace()
        assert exc.value.status == 503 and status_of(exc.value)["reason"] == "ServiceUnavailable"
    finally:
        assert admin(sim, "/_sim/faults", {"outage": False})["outage"] is False  # /_sim still answers
    core.list_namespace()

    sim.set_faults(latency_ms=150)
    try:
        started = time.monotonic()
        core.read_namespace(ns)
        assert time.monotonic() - started >= 0.15
    finally:
        sim.set_faults(latency_ms=0)
    assert sim.faults_snapshot()["latencyMs"] == 0


def test_deleting_a_namespace_deletes_its_contents(core, batch, ns):
    batch.create_namespaced_job(ns, job_manifest("j", annotations={"kubesim.paas-studio/run-seconds": "60"}))
    core.create_namespaced_config_map(ns, {"metadata": {"name": "cfg"}})
    wait_until(lambda: core.list_namespaced_pod(ns).items)
    core.delete_namespace(ns)
    assert core.read_namespace(ns).status.phase == "Terminating"
    with pytest.raises(ApiException) as exc:
        core.create_namespaced_config_map(ns, {"metadata": {"name": "late"}})
    assert exc.value.status == 403

    def gone():
        try:
            core.read_namespace(ns)
        except ApiException as exc:
            return exc.status == 404
    wait_until(gone)
    assert not core.list_pod_for_all_namespaces(field_selector=f"metadata.namespace={ns}").items
    assert not batch.list_namespaced_job(ns).items


def test_a_protobuf_body_is_415_naming_the_media_types_read(sim):
    # kubectl's typed commands (`kubectl create namespace`) send protobuf, which the simulator does not decode.
    request = urllib.request.Request(sim.url + "/api/v1/namespaces", data=b"k8s\x00\n\x0f\n\x02v1\x12\tNamespace",
                                     method="POST", headers={"Authorization": f"Bearer {TOKEN}",
                                                             "Content-Type": "application/vnd.kubernetes.protobuf"})
    with pytest.raises(urllib.error.HTTPError) as exc:
        urllib.request.urlopen(request, timeout=5)
    body = json.loads(exc.value.read())
    assert (exc.value.code, body["reason"]) == (415, "UnsupportedMediaType")
    assert body["message"] == ("the body of the request was in an unknown format - accepted media types include: "
                               "application/json, application/yaml")


def test_a_yaml_body_is_read(sim):
    request = urllib.request.Request(sim.url + "/api/v1/namespaces", data=b"metadata:\n  name: from-yaml\n",
                                     method="POST", headers={"Authorization": f"Bearer {TOKEN}",
                                                             "Content-Type": "application/yaml"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        assert answer.status == 201 and json.loads(answer.read())["metadata"]["name"] == "from-yaml"


def test_claims_are_provisioned_bound_to_their_volumes_as_the_volume_controller_does(k8s, core, ns):
    storage = client.StorageV1Api(k8s)
    default = storage.read_storage_class("standard")
    assert default.provisioner == "rancher.io/local-path"
    assert default.metadata.annotations["storageclass.kubernetes.io/is-default-class"] == "true"
    # A claim of no class names the default one, and gets a volume made for it.
    core.create_namespaced_persistent_volume_claim(ns, {"metadata": {"name": "dynamic"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}})
    claim = wait_until(lambda: (c := core.read_namespaced_persistent_volume_claim("dynamic", ns))
                       and c.status.phase == "Bound" and c)
    assert claim.spec.storage_class_name == "standard" and claim.spec.volume_name == f"pvc-{claim.metadata.uid}"
    volume = core.read_persistent_volume(claim.spec.volume_name)
    assert (volume.spec.claim_ref.namespace, volume.spec.claim_ref.name) == (ns, "dynamic")
    assert volume.spec.capacity == {"storage": "2Gi"} and volume.spec.host_path.path and volume.status.phase == "Bound"
    # A claim pre-bound to a volume waits for it, then binds to it; a claim of class "" naming none waits.
    core.create_namespaced_persistent_volume_claim(ns, {"metadata": {"name": "static"}, "spec": {
        "accessModes": ["ReadOnlyMany"], "storageClassName": "", "volumeName": f"static-{ns}",
        "resources": {"requests": {"storage": "1Gi"}}}})
    core.create_namespaced_persistent_volume_claim(ns, {"metadata": {"name": "waiting"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "storageClassName": "", "resources": {"requests": {"storage": "1Gi"}}}})
    time.sleep(0.3)
    assert core.read_namespaced_persistent_volume_claim("static", ns).status.phase == "Pending"
    core.create_persistent_volume({"metadata": {"name": f"static-{ns}"}, "spec": {
        "capacity": {"storage": "3Gi"}, "accessModes": ["ReadOnlyMany"], "storageClassName": "",
        "hostPath": {"path": "/data"}, "claimRef": {"namespace": ns, "name": "static"}}})
    bound = wait_until(lambda: (c := core.read_namespaced_persistent_volume_claim("static", ns))
                       and c.status.phase == "Bound" and c)
    assert bound.status.capacity == {"storage": "3Gi"}
    assert core.read_persistent_volume(f"static-{ns}").status.phase == "Bound"
    assert core.read_namespaced_persistent_volume_claim("waiting", ns).status.phase == "Pending"
    assert core.delete_persistent_volume(f"static-{ns}").metadata.name == f"static-{ns}"  # the object, not a Status


def test_text_outside_ascii_and_integers_beyond_64_bits_come_back_as_sent(sim, core, ns):
    """The server writes its JSON with orjson (UTF-8, not json's \\u escapes) and falls back to json for what
    orjson refuses: either way a client reads back what it wrote."""
    from kubesim.server import dumps

    config_map = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="words", annotations={"note": "Größe ≤ 2 GiB"}),
                                    data={"greeting": "こんにちは"})
    core.create_namespaced_config_map(ns, config_map)
    read = admin(sim, f"/api/v1/namespaces/{ns}/configmaps/words")
    assert read["data"] == {"greeting": "こんにちは"} and read["metadata"]["annotations"] == {"note": "Größe ≤ 2 GiB"}
    assert json.loads(dumps({"n": 2**70, "m": -(2**64)})) == {"n": 2**70, "m": -(2**64)}
