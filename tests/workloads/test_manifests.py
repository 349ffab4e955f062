"""workloads.manifests: Run:ai spec -> Kubernetes objects. Built-in kinds are checked against the
Kubernetes 1.30 OpenAPI schema (strict: no unknown fields) plus the name rules the schema leaves out."""

import copy
import re

import kubernetes_validate
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.workloads.seed_bodies import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST
from workloads import manifests as m

K8S_VERSION = "1.30"
WID = "06d16c5d-4728-42fa-b573-3b11820d999f"
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
SEEDS = {"training": TRAINING_REQUEST, "workspace": WORKSPACE_REQUEST, "inference": INFERENCE_REQUEST,
         "stream": WORKSPACE_REQUEST}


def ref(kind="training", *, name="my-workload-name", suspended=False, wid=WID):
    return m.WorkloadRef(id=wid, name=name, kind=kind, project="team-a", namespace="studio-team-a",
                         suspended=suspended)


def seed_spec(kind):
    return copy.deepcopy(SEEDS[kind]["spec"])


def minimal(**fields):
    return {"image": "python:3.11", **fields}


def build(kind="training", spec=None, **kwargs):
    return m.build_manifests(ref(kind, suspended=kwargs.pop("suspended", False)), spec or minimal(), **kwargs)


def one(objects, kind, api_prefix=""):
    found = [o for o in objects if o["kind"] == kind and o["apiVersion"].startswith(api_prefix)]
    assert len(found) == 1, [(o["apiVersion"], o["kind"]) for o in objects]
    return found[0]


def pod_template(objects):
    for obj in objects:
        if obj["kind"] in ("Job", "Deployment") or obj["apiVersion"] == m.KNATIVE_API:
            return obj["spec"]["template"]
    raise AssertionError("no pod template")


def main_container(objects):
    return pod_template(objects)["spec"]["containers"][0]


def assert_valid(objects):
    """The schema, and what the API server checks beyond it: names, label values, unique volumes/mounts."""
    for obj in objects:
        if obj["apiVersion"] != m.KNATIVE_API:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        name = obj["metadata"]["name"]
        assert len(name) <= 63 and (DNS_1035 if obj["kind"] == "Service" else DNS_LABEL).match(name), name
        for value in obj["metadata"]["labels"].values():
            assert len(value) <= 63 and LABEL_VALUE.match(value), value
        assert all(isinstance(v, str) for v in obj["metadata"].get("annotations", {}).values())
    pod = pod_template(objects)["spec"]
    volumes = [v["name"] for v in pod.get("volumes", [])]
    assert len(volumes) == len(set(volumes)) and all(DNS_LABEL.match(v) for v in volumes)
    for c in pod["containers"] + pod.get("initContainers", []):
        assert {mt["name"] for mt in c.get("volumeMounts", [])} <= set(volumes)
        paths = [mt["mountPath"] for mt in c.get("volumeMounts", [])]
        assert len(paths) == len(set(paths))


# --- seeds -------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "knative"), [
    ("training", True), ("workspace", True), ("inference", True), ("inference", False), ("stream", False),
])
def test_seed_specs_build_schema_valid_objects(kind, knative):
    objects = m.build_manifests(ref(kind), seed_spec(kind), knative=knative)
    assert_valid(objects)
    kinds = [(o["apiVersion"], o["kind"]) for o in objects]
    assert m.primary_kind(ref(kind), knative=knative) in kinds
    assert set(kinds) <= set(m.object_kinds(kind, knative=knative))
    assert kinds[0] == m.PVC  # claims first: the pod waits for them otherwise


def test_seed_training_objects_in_creation_order():
    objects = m.build_manifests(ref("training"), seed_spec("training"))
    assert [o["kind"] for o in objects] == ["PersistentVolumeClaim", "Job", "Service", "Ingress"]


def test_build_is_deterministic_and_leaves_the_spec_alone():
    spec = seed_spec("training")
    before = copy.deepcopy(spec)
    assert m.build_manifests(ref(), spec) == m.build_manifests(ref(), spec)
    assert spec == before


# --- names and labels --------------------------------------------------------------------------------

def test_object_name_is_name_plus_id_prefix():
    assert m.object_name(ref()) == "my-workload-name-06d16c5d"


@given(st.from_regex(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?", fullmatch=True), st.uuids())
def test_object_name_fits_and_is_deterministic(name, uuid):
    r = ref(name=name, wid=str(uuid))
    result = m.object_name(r)
    assert result == m.object_name(r)
    assert len(result) <= m.NAME_LIMIT and DNS_1035.match(result)
    assert result.endswith("-" + uuid.hex[:8]) and "--" not in result[-10:]


def test_every_object_and_pod_template_carries_the_workload_labels():
    spec = seed_spec("training")
    spec["labels"].append({"name": "hidden", "value": "x", "exclude": True})
    spec["labels"].append({"name": m.WORKLOAD_ID_LABEL, "value": "forged"})
    objects = m.build_manifests(ref(), spec)
    expected = {m.MANAGED_BY_LABEL: "paas-studio", m.WORKLOAD_ID_LABEL: WID, m.PROJECT_LABEL: "team-a",
                m.KIND_LABEL: "training", "stage": "initial-research"}
    for labels in [o["metadata"]["labels"] for o in objects] + [pod_template(objects)["metadata"]["labels"]]:
        assert labels == expected
    assert all(o["metadata"]["namespace"] == "studio-team-a" for o in objects)
    assert all(o["metadata"]["annotations"]["billing"] == "my-billing-unit" for o in objects)


def test_deployment_selector_matches_its_pods():
    deploy = one(build("workspace"), "Deployment")
    assert deploy["spec"]["selector"]["matchLabels"] == {m.WORKLOAD_ID_LABEL: WID}
    assert deploy["spec"]["selector"]["matchLabels"].items() <= deploy["spec"]["template"]["metadata"]["labels"].items()


# --- field table -------------------------------------------------------------------------------------

def path(objects, where):
    """`Kind.dotted.path[0]` (Kind may be `Kind/prefix-of-apiVersion`) -> the value there."""
    kind, _, rest = where.partition(".")
    kind, _, api = kind.partition("/")
    node = one(objects, kind, api)
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", rest):
        node = node[int(part[1:-1])] if part.startswith("[") else node[part]
    return node


POD = "Job.spec.template.spec"
CTR = POD + ".containers[0]"
GPU = {"gpuDevicesRequest": 1}
ROWS = [
    # container
    ({"command": "python"}, CTR + ".command", ["python"]),
    ({"command": ["sh", "-c"]}, CTR + ".command", ["sh", "-c"]),
    ({"args": "-x my-script.py"}, CTR + ".args", ["-x", "my-script.py"]),
    ({"args": "-c 'print(1)' --flag"}, CTR + ".args", ["-c", "print(1)", "--flag"]),
    ({"workingDir": "/work"}, CTR + ".workingDir", "/work"),
    ({"imagePullPolicy": "IfNotPresent"}, CTR + ".imagePullPolicy", "IfNotPresent"),
    ({"tty": True, "stdin": True}, CTR + ".stdin", True),
    ({"environmentVariables": [{"name": "A", "value": "1"}, {"name": "B", "value": "2", "exclude": True}]},
     CTR + ".env", [{"name": "A", "value": "1"}]),
    ({"environmentVariables": [{"name": "P", "value": "x", "secret": {"name": "s", "key": "k"}}]},
     CTR + ".env[0].valueFrom", {"secretKeyRef": {"name": "s", "key": "k"}}),
    ({"probes": {"readiness": {"periodSeconds": 5, "handler": {"httpGet": {"path": "/ready", "port": 8080}}}}},
     CTR + ".readinessProbe", {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5}),
    ({"ports": [{"container": 8080}]}, CTR + ".ports", [{"containerPort": 8080}]),
    # compute
    ({"compute": {"gpuDevicesRequest": 2}}, CTR + ".resources.limits", {"nvidia.com/gpu": "2"}),
    ({"compute": {**GPU, "gpuRequestType": "portion", "gpuPortionRequest": 0.5}},
     POD + ".schedulerName", "runai-scheduler"),
    ({"compute": {**GPU, "gpuRequestType": "portion", "gpuPortionRequest": 0.5, "gpuPortionLimit": 1}},
     "Job.spec.template.metadata.annotations", {"gpu-fraction": "0.5", "gpu-fraction-limit": "1"}),
    ({"compute": {"gpuDevicesRequest": 2, "gpuRequestType": "portion", "gpuPortionRequest": 0.25}},
     "Job.spec.template.metadata.annotations", {"gpu-fraction": "0.25", "gpu-fraction-num-devices": "2"}),
    ({"compute": {**GPU, "gpuRequestType": "memory", "gpuMemoryRequest": "10M"}},
     "Job.spec.template.metadata.annotations", {"gpu-memory": "10"}),
    ({"compute": {**GPU, "gpuRequestType": "memory", "gpuMemoryRequest": "2Gi", "gpuMemoryLimit": "4Gi"}},
     "Job.spec.template.metadata.annotations", {"gpu-memory": "2048", "gpu-memory-limit": "4096"}),
    ({"compute": {**GPU, "gpuRequestType": "migProfile", "migProfile": "1g.5gb"}},
     CTR + ".resources.limits", {"nvidia.com/mig-1g.5gb": "1"}),
    ({"compute": {"cpuCoreRequest": 0.5, "cpuCoreLimit": 2, "cpuMemoryRequest": "20M", "cpuMemoryLimit": "1Gi"}},
     CTR + ".resources", {"requests": {"cpu": "500m", "memory": "20M"}, "limits": {"cpu": "2", "memory": "1Gi"}}),
    ({"compute": {"cpuCoreRequest": 1.25}}, CTR + ".resources.requests.cpu", "1250m"),
    ({"compute": {"extendedResources": [{"resource": "vendor.example/foo", "quantity": 2},
                                        {"resource": "vendor.example/bar", "quantity": 1, "exclude": True}]}},
     CTR + ".resources.limits", {"vendor.example/foo": "2"}),
    ({"compute": {"largeShmRequest": True}}, POD + ".volumes", [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]),
    ({"compute": {"largeShmRequest": True}}, CTR + ".volumeMounts", [{"name": "dshm", "mountPath": "/dev/shm"}]),
    # storage
    ({"storage": {"pvc": [{"path": "/data", "claimInfo": {"size": "5Gi", "storageClass": "fast",
                                                          "accessModes": {"readWriteMany": True}}}]}},
     "PersistentVolumeClaim.spec", {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "5Gi"}},
                                    "storageClassName": "fast"}),
    ({"storage": {"pvc": [{"path": "/data", "existingPvc": True, "claimName": "shared", "readOnly": True}]}},
     POD + ".volumes[0]", {"name": "pvc-0", "persistentVolumeClaim": {"claimName": "shared", "readOnly": True}}),
    ({"storage": {"pvc": [{"path": "/scratch", "ephemeral": True, "claimInfo": {"size": "10Gi"}}]}},
     POD + ".volumes[0].ephemeral.volumeClaimTemplate.spec.resources.requests.storage", "10Gi"),
    ({"storage": {"pvc": [{"path": "/dev/xvda", "claimInfo": {"volumeMode": "Block"}}]}},
     CTR + ".volumeDevices", [{"name": "pvc-0", "devicePath": "/dev/xvda"}]),
    ({"storage": {"dataVolume": [{"id": "123e4567", "mountPath": "/mnt/data"}]}},
     POD + ".volumes[0].persistentVolumeClaim.claimName", "data-volume-123e4567"),
    ({"storage": {"configMapVolume": [{"name": "c", "configMap": "settings", "mountPath": "/etc/app"}]}},
     POD + ".volumes[0]", {"name": "configmap-0", "configMap": {"name": "settings"}}),
    ({"storage": {"secretVolume": [{"name": "s", "secret": "creds", "mountPath": "/etc/creds"}]}},
     CTR + ".volumeMounts[0]", {"name": "secret-0", "mountPath": "/etc/creds"}),
    ({"storage": {"hostPath": [{"path": "/raid", "mountPath": "/raid", "readOnly": True,
                                "mountPropagation": "HostToContainer"}]}},
     CTR + ".volumeMounts[0]", {"name": "hostpath-0", "mountPath": "/raid", "readOnly": True,
                                "mountPropagation": "HostToContainer"}),
    ({"storage": {"nfs": [{"server": "nfs.lab", "path": "/export", "mountPath": "/nfs"}]}},
     POD + ".volumes[0].nfs", {"server": "nfs.lab", "path": "/export"}),
    ({"storage": {"s3": [{"bucket": "b", "path": "/s3", "accessKeySecret": "keys", "url": "https://minio.lab"}]}},
     POD + ".volumes[0].csi", {"driver": "rclone.csi.veloxpack.io", "nodePublishSecretRef": {"name": "keys"},
                               "volumeAttributes": {"remote": "s3", "remoteType": "s3", "remotePath": "b",
                                                    "s3-provider": "Other", "s3-endpoint": "https://minio.lab"}}),
    # scheduling
    ({"nodeType": "a100"}, POD + ".nodeSelector", {"run.ai/type": "a100"}),
    ({"nodePools": ["pool-a", "pool-b"]},
     POD + ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
     [{"matchExpressions": [{"key": "run.ai/node-pool", "operator": "In", "values": ["pool-a", "pool-b"]}]}]),
    ({"tolerations": [{"name": "t", "key": "gpu", "operator": "Exists", "value": "x", "effect": "NoExecute",
                       "seconds": 30}]},
     POD + ".tolerations", [{"operator": "Exists", "key": "gpu", "effect": "NoExecute", "tolerationSeconds": 30}]),
    ({"tolerations": [{"key": "k", "value": "v", "effect": "NoSchedule", "seconds": 30}]},
     POD + ".tolerations", [{"operator": "Equal", "key": "k", "value": "v", "effect": "NoSchedule"}]),
    ({"podAffinity": {"type": "Preferred", "key": "kubernetes.io/hostname"}},
     POD + ".affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution",
     [{"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {m.WORKLOAD_ID_LABEL: WID}},
                                          "topologyKey": "kubernetes.io/hostname"}}]),
    ({"priorityClass": "build"}, POD + ".priorityClassName", "build"),
    # security
    ({"security": {"uidGidSource": "custom", "runAsUid": 500, "runAsGid": 30, "supplementalGroups": "2,3"}},
     POD + ".securityContext", {"runAsUser": 500, "runAsGroup": 30, "supplementalGroups": [2, 3]}),
    ({"security": {"runAsNonRoot": True, "readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                   "capabilities": ["CHOWN"]}},
     CTR + ".securityContext", {"runAsNonRoot": True, "readOnlyRootFilesystem": True,
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"add": ["CHOWN"], "drop": ["ALL"]}}),
    # non-root: no escalation, no default capabilities (what Pod Security "restricted" asks)
    ({"security": {"runAsNonRoot": True}}, CTR + ".securityContext",
     {"runAsNonRoot": True, "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}),
    ({"security": {"capabilities": ["CHOWN"]}}, CTR + ".securityContext", {"capabilities": {"add": ["CHOWN"]}}),
    ({"security": {"seccompProfileType": "RuntimeDefault"}}, POD + ".securityContext.seccompProfile",
     {"type": "RuntimeDefault"}),
    ({"security": {"hostIpc": True}}, POD + ".hostIPC", True),
    ({"security": {"hostNetwork": True}}, POD + ".hostNetwork", True),
    # the Job
    ({"completions": 4, "parallelism": 2, "backoffLimit": 3, "autoDeletionTimeAfterCompletionSeconds": 15},
     "Job.spec", None),
    ({}, POD + ".restartPolicy", "Never"),
    ({"terminateAfterPreemption": True}, f"Job.metadata.annotations.{m.TERMINATE_AFTER_PREEMPTION_ANNOTATION}",
     "true"),
    # networking
    ({"ports": [{"container": 8080, "serviceType": "NodePort", "external": 30080}]}, "Service.spec",
     {"type": "NodePort", "selector": {m.WORKLOAD_ID_LABEL: WID},
      "ports": [{"name": "port-30080", "port": 30080, "targetPort": 8080, "protocol": "TCP", "nodePort": 30080}]}),
    ({"ports": [{"container": 8888}]}, "Service.spec.ports[0]",
     {"name": "port-8888", "port": 8888, "targetPort": 8888, "protocol": "TCP"}),
    ({"exposedUrls": [{"container": 8888, "authorizedUsers": ["ann"]}]}, "Ingress.spec.rules[0].http.paths[0]",
     {"path": "/team-a/my-workload-name/8888", "pathType": "Prefix",
      "backend": {"service": {"name": "my-workload-name-06d16c5d", "port": {"number": 8888}}}}),
    ({"exposedUrls": [{"container": 8888, "url": "https://nb.lab.example/ann"}]}, "Ingress.spec.rules[0]",
     {"host": "nb.lab.example", "http": {"paths": [{"path": "/ann", "pathType": "Prefix", "backend": {
         "service": {"name": "my-workload-name-06d16c5d", "port": {"number": 8888}}}}]}}),
    ({"exposedUrls": [{"container": 8888, "authorizedUsers": ["ann"], "authorizedGroups": ["ml"]}]},
     f"Ingress.metadata.annotations.{m.URL_ACCESS_ANNOTATION}", '{"8888": {"groups": ["ml"], "users": ["ann"]}}'),
]


@pytest.mark.parametrize(("fields", "where", "expected"), ROWS, ids=[r[1].rsplit(".", 1)[-1] for r in ROWS])
def test_spec_field_lands_on_its_object_path(fields, where, expected):
    objects = build("training", minimal(**fields))
    assert_valid(objects)
    if expected is None:  # the Job row: several fields at once
        expected = {"completions": 4, "parallelism": 2, "backoffLimit": 3, "ttlSecondsAfterFinished": 15}
        assert path(objects, where).items() >= expected.items()
    else:
        assert path(objects, where) == expected


def test_secret_wins_over_value_and_fields_of_other_gpu_types_are_ignored():
    spec = seed_spec("training")  # every GPU request type's fields at once, HOME with value and secret
    objects = m.build_manifests(ref(), spec)
    container = main_container(objects)
    assert container["env"] == [{"name": "HOME", "valueFrom": {"secretKeyRef": {
        "name": "postgress_secret", "key": "POSTGRES_PASSWORD"}}}]
    assert pod_template(objects)["metadata"]["annotations"]["gpu-fraction"] == "0.5"
    assert "gpu-memory" not in pod_template(objects)["metadata"]["annotations"]
    assert not any(k.startswith("nvidia.com/") for k in container["resources"]["limits"])


def test_a_new_claim_is_named_after_the_workload_not_the_requested_claim_name():
    pvc = {"name": "a", "claimName": "my-claim", "existingPvc": False, "path": "/data"}
    objects = build("training", minimal(storage={"pvc": [pvc]}))
    claim = one(objects, "PersistentVolumeClaim")
    assert claim["metadata"]["name"] == "my-workload-name-06d16c5d-pvc-0"
    assert path(objects, POD + ".volumes[0].persistentVolumeClaim.claimName") == claim["metadata"]["name"]


def test_existing_and_ephemeral_claims_create_no_claim_object():
    pvcs = [{"existingPvc": True, "claimName": "shared", "path": "/a"}, {"ephemeral": True, "path": "/b"}]
    objects = build("training", minimal(storage={"pvc": pvcs}))
    assert not [o for o in objects if o["kind"] == "PersistentVolumeClaim"]
    assert_valid(objects)


def test_git_source_clones_in_an_init_container_with_credentials_from_the_secret():
    git = {"name": "repo", "repository": "https://git.lab/ml.git", "branch": "main", "revision": "abc123",
           "path": "/code", "passwordSecret": "git-creds", "secretKeyOfUser": "User",
           "secretKeyOfPassword": "Password"}
    objects = build("training", minimal(storage={"git": [git]}))
    assert_valid(objects)
    pod = pod_template(objects)["spec"]
    init = pod["initContainers"][0]
    assert init["image"].startswith("alpine/git:")
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in init["env"]}
    assert env["GIT_REPOSITORY"] == "https://git.lab/ml.git" and env["GIT_REVISION"] == "abc123"
    assert env["GIT_PASSWORD"] == {"secretKeyRef": {"name": "git-creds", "key": "Password"}}
    assert "git-creds" not in init["command"][-1]  # credentials never in the script or URL
    assert pod["volumes"] == [{"name": "git-0", "emptyDir": {}}]
    assert main_container(objects)["volumeMounts"] == [{"name": "git-0", "mountPath": "/code"}]


def test_two_sources_at_one_mount_path_keep_the_first():
    storage = {"configMapVolume": [{"configMap": "c", "mountPath": "/etc/x"}],
               "secretVolume": [{"secret": "s", "mountPath": "/etc/x"}]}
    objects = build("training", minimal(storage=storage))
    assert [v["name"] for v in pod_template(objects)["spec"]["volumes"]] == ["configmap-0"]
    assert_valid(objects)


@pytest.mark.parametrize(("env", "mount_path", "home"), [
    ([], "/home/studio", "/home/studio"),
    ([{"name": "HOME", "value": "/home/ann"}], "/home/ann", "/home/ann"),
    ([{"name": "HOME", "secret": {"name": "s", "key": "k"}}], None, None),
])
def test_create_home_dir_mounts_an_empty_dir_at_home(env, mount_path, home):
    objects = build("training", minimal(createHomeDir=True, workingDir="/app", environmentVariables=env))
    container = main_container(objects)
    mounts = [mt["mountPath"] for mt in container.get("volumeMounts", [])]
    assert mounts == ([mount_path] if mount_path else [])
    if home:
        assert {"name": "HOME", "value": home} in container["env"]


# --- workload kinds ----------------------------------------------------------------------------------

def test_training_suspended_creates_a_suspended_job():
    assert one(build("training", suspended=True), "Job")["spec"]["suspend"] is True
    assert one(build("training"), "Job")["spec"]["suspend"] is False


@pytest.mark.parametrize(("suspended", "replicas"), [(False, 1), (True, 0)])
def test_workspace_is_a_single_replica_deployment_recreated_on_change(suspended, replicas):
    deploy = one(build("workspace", suspended=suspended), "Deployment")
    assert deploy["spec"]["replicas"] == replicas
    assert deploy["spec"]["strategy"] == {"type": "Recreate"}
    assert "restartPolicy" not in deploy["spec"]["template"]["spec"]


def knative_annotations(auto, **fields):
    objects = build("inference", minimal(servingPort={"container": 8000}, autoscaling=auto, **fields))
    return path(objects, "Service/serving.spec.template.metadata.annotations")


@pytest.mark.parametrize(("auto", "expected"), [
    ({"minReplicas": 0, "maxReplicas": 3, "metric": "throughput", "metricThreshold": 50,
      "scaleToZeroRetentionSeconds": 3600},
     {"min-scale": "0", "max-scale": "3", "metric": "rps", "target": "50",
      "scale-to-zero-pod-retention-period": "3600s"}),
    ({"minReplicas": 1, "maxReplicas": 4, "metric": "concurrency", "metricThreshold": 2.5},
     {"min-scale": "1", "max-scale": "4", "metric": "concurrency", "target": "2.5"}),
    ({"minReplicas": 0, "maxReplicas": 1, "metric": "throughput", "metricThreshold": 0},  # seed 001
     {"min-scale": "0", "max-scale": "1", "metric": "rps"}),
    ({}, {"min-scale": "0", "max-scale": "1"}),
])
def test_knative_autoscaling_annotations(auto, expected):
    annotations = knative_annotations(auto)
    scale = {k.removeprefix(m.KNATIVE_AUTOSCALING): v for k, v in annotations.items() if k.startswith(m.KNATIVE_AUTOSCALING)}
    assert scale == expected


def test_knative_latency_scales_on_concurrency_and_records_the_request():
    annotations = knative_annotations({"minReplicas": 1, "maxReplicas": 2, "metric": "latency", "metricThreshold": 200})
    assert annotations[m.KNATIVE_AUTOSCALING + "metric"] == "concurrency"
    assert m.KNATIVE_AUTOSCALING + "target" not in annotations
    assert annotations[m.AUTOSCALING_METRIC_ANNOTATION] == "latency"
    assert annotations[m.AUTOSCALING_TARGET_ANNOTATION] == "200"


@pytest.mark.parametrize(("protocol", "name"), [("http", "http1"), ("grpc", "h2c")])
def test_knative_serves_one_named_port(protocol, name):
    spec = seed_spec("inference")
    spec["servingPort"] = {"container": 9000, "protocol": protocol}
    objects = m.build_manifests(ref("inference"), spec)
    service = one(objects, "Service", "serving")
    container = service["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [{"containerPort": 9000, "name": name}]
    assert "port" not in container["readinessProbe"]["httpGet"]  # Knative probes its serving port
    assert "tty" not in container and "hostIPC" not in service["spec"]["template"]["spec"]
    assert service["metadata"]["name"] == "my-workload-name-06d16c5d"


def test_inference_without_knative_is_deployment_service_and_hpa():
    auto = {"minReplicas": 0, "maxReplicas": 5, "metric": "concurrency", "metricThreshold": 4}
    objects = build("inference", minimal(servingPort={"container": 8000}, autoscaling=auto), knative=False)
    assert_valid(objects)
    assert [o["kind"] for o in objects] == ["Deployment", "Service", "HorizontalPodAutoscaler"]
    assert one(objects, "Deployment")["spec"]["replicas"] == 1
    assert path(objects, "Service.spec.ports[0]")["targetPort"] == 8000
    hpa = one(objects, "HorizontalPodAutoscaler")["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (1, 5)
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "my-workload-name-06d16c5d"}
    assert hpa["metrics"] == [{"type": "Pods", "pods": {"metric": {"name": "concurrent_requests"},
                                                        "target": {"type": "AverageValue", "averageValue": "4"}}}]


def test_inference_without_room_to_scale_has_no_hpa():
    objects = build("inference", minimal(autoscaling={"minReplicas": 2, "maxReplicas": 2}), knative=False)
    assert "HorizontalPodAutoscaler" not in [o["kind"] for o in objects]
    assert one(objects, "Deployment")["spec"]["replicas"] == 2


def test_stream_service_takes_the_profile_type_and_annotations():
    spec = minimal(ports=[{"container": 49100, "serviceType": "LoadBalancer"}, {"container": 1024}],
                   serviceAnnotations={"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
                   runtimeClassName="nvidia", nodeSelector={"gpu": "l40"}, tlsSecret="stream-tls")
    objects = build("stream", spec, knative=False)
    assert_valid(objects)
    service = one(objects, "Service")
    assert service["spec"]["type"] == "LoadBalancer"
    assert [p["targetPort"] for p in service["spec"]["ports"]] == [49100, 1024]
    assert service["metadata"]["annotations"] == {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}
    pod = pod_template(objects)["spec"]
    assert pod["runtimeClassName"] == "nvidia" and pod["nodeSelector"] == {"gpu": "l40"}
    assert {"name": "tls", "mountPath": "/etc/tls", "readOnly": True} in pod["containers"][0]["volumeMounts"]
    assert one(objects, "Deployment")["spec"]["replicas"] == 1


def test_ports_of_several_service_types_get_one_service_each():
    ports = [{"container": 80, "serviceType": "ClusterIP"}, {"container": 22, "serviceType": "NodePort",
                                                              "external": 30022}]
    objects = build("workspace", minimal(ports=ports, exposedUrls=[{"container": 8888}]))
    assert_valid(objects)
    services = [o for o in objects if o["kind"] == "Service"]
    assert [s["metadata"]["name"] for s in services] == ["my-workload-name-06d16c5d", "my-workload-name-06d16c5d-np"]
    assert [p["targetPort"] for p in services[0]["spec"]["ports"]] == [80, 8888]  # the URL's port reached


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError):
        m.build_manifests(ref("batch"), minimal())


# --- suspend, kinds ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("kind", "suspended", "expected"), [
    ("training", True, ("batch/v1", "Job", {"spec": {"suspend": True}})),
    ("training", False, ("batch/v1", "Job", {"spec": {"suspend": False}})),
    ("workspace", True, ("apps/v1", "Deployment", {"spec": {"replicas": 0}})),
    ("workspace", False, ("apps/v1", "Deployment", {"spec": {"replicas": 1}})),
])
def test_suspend_patch(kind, suspended, expected):
    assert m.suspend_patch(ref(kind), suspended=suspended) == expected


@pytest.mark.parametrize("kind", ["inference", "stream"])
def test_inference_and_stream_cannot_be_suspended(kind):
    with pytest.raises(ValueError):
        m.suspend_patch(ref(kind), suspended=True)


@pytest.mark.parametrize(("kind", "knative", "expected"), [
    ("training", True, ("batch/v1", "Job")),
    ("workspace", True, ("apps/v1", "Deployment")),
    ("inference", True, ("serving.knative.dev/v1", "Service")),
    ("inference", False, ("apps/v1", "Deployment")),
    ("stream", True, ("apps/v1", "Deployment")),
])
def test_primary_kind(kind, knative, expected):
    assert m.primary_kind(ref(kind), knative=knative) == expected
    assert expected in m.object_kinds(kind, knative=knative)


# --- property: varied specs stay schema-valid --------------------------------------------------------

names = st.from_regex(r"[a-z][a-z0-9]{0,8}", fullmatch=True)
paths = names.map(lambda n: "/mnt/" + n)
ports = st.integers(1, 65535)
compute = st.fixed_dictionaries({}, optional={
    "gpuDevicesRequest": st.integers(0, 8),
    "gpuRequestType": st.sampled_from(["portion", "memory", "migProfile"]),
    "gpuPortionRequest": st.sampled_from([0.1, 0.25, 0.5, 1]),
    "gpuMemoryRequest": st.sampled_from(["10M", "512Mi", "8Gi"]),
    "migProfile": st.sampled_from(["1g.5gb", "3g.40gb", "7g.80gb"]),
    "cpuCoreRequest": st.sampled_from([0.1, 0.5, 1, 2.5, 16]),
    "cpuMemoryLimit": st.sampled_from(["256Mi", "1G", "64Gi"]),
    "largeShmRequest": st.booleans(),
    "extendedResources": st.lists(st.fixed_dictionaries({"resource": st.just("vendor.example/x"),
                                                         "quantity": st.integers(1, 4)}), max_size=1),
})
storage = st.fixed_dictionaries({}, optional={
    "pvc": st.lists(st.fixed_dictionaries({"path": paths, "existingPvc": st.booleans(), "claimName": names,
                                           "ephemeral": st.booleans(), "readOnly": st.booleans()}), max_size=2),
    "git": st.lists(st.fixed_dictionaries({"path": paths, "repository": st.just("https://git.lab/r.git"),
                                           "branch": names, "passwordSecret": names,
                                           "secretKeyOfUser": names}), max_size=2),
    "hostPath": st.lists(st.fixed_dictionaries({"path": paths, "mountPath": paths,
                                                "mountPropagation": st.sampled_from(["None", "HostToContainer"])}),
                         max_size=2),
    "nfs": st.lists(st.fixed_dictionaries({"server": names, "path": paths, "mountPath": paths}), max_size=2),
    "s3": st.lists(st.fixed_dictionaries({"bucket": names, "path": paths, "accessKeySecret": names}), max_size=2),
    "dataVolume": st.lists(st.fixed_dictionaries({"id": st.uuids().map(str), "mountPath": paths}), max_size=2),
})
specs = st.fixed_dictionaries({"image": st.just("nvcr.io/nvidia/pytorch:24.01-py3")}, optional={
    "command": st.sampled_from(["python", ["bash", "-lc"]]),
    "args": st.sampled_from(["train.py --epochs 3", "-c 'import torch'"]),
    "workingDir": paths,
    "createHomeDir": st.booleans(),
    "environmentVariables": st.lists(st.fixed_dictionaries(
        {"name": st.from_regex(r"[A-Z][A-Z_]{0,8}", fullmatch=True)},
        optional={"value": names, "secret": st.fixed_dictionaries({"name": names, "key": names}),
                  "exclude": st.booleans()}), max_size=3),
    "labels": st.lists(st.fixed_dictionaries({"name": names, "value": names}), max_size=2),
    "annotations": st.lists(st.fixed_dictionaries({"name": names, "value": st.text(max_size=20)}), max_size=2),
    "ports": st.lists(st.fixed_dictionaries({"container": ports}, optional={
        "serviceType": st.sampled_from(["ClusterIP", "NodePort", "LoadBalancer"]),
        "external": st.integers(30000, 32767)}), max_size=3),
    "exposedUrls": st.lists(st.fixed_dictionaries({"container": ports}, optional={
        "authorizedUsers": st.lists(names, max_size=2)}), max_size=2),
    "servingPort": st.fixed_dictionaries({"container": ports, "protocol": st.sampled_from(["http", "grpc"])}),
    "autoscaling": st.fixed_dictionaries({"minReplicas": st.integers(0, 3), "maxReplicas": st.integers(1, 6)},
                                         optional={"metric": st.sampled_from(["throughput", "concurrency", "latency"]),
                                                   "metricThreshold": st.integers(0, 100)}),
    "compute": compute,
    "storage": storage,
    "nodeType": names,
    "nodePools": st.lists(names, min_size=1, max_size=3),
    "tolerations": st.lists(st.fixed_dictionaries({"key": names, "operator": st.sampled_from(["Equal", "Exists"]),
                                                   "value": names, "seconds": st.integers(0, 600),
                                                   "effect": st.sampled_from(["NoSchedule", "NoExecute"])}),
                            max_size=2),
    "podAffinity": st.fixed_dictionaries({"type": st.sampled_from(["Required", "Preferred"]),
                                          "key": st.just("kubernetes.io/hostname")}),
    "security": st.fixed_dictionaries({}, optional={
        "uidGidSource": st.sampled_from(["fromTheImage", "custom"]), "runAsUid": st.integers(0, 65535),
        "supplementalGroups": st.sampled_from(["2,3", "100"]), "capabilities": st.just(["NET_ADMIN"]),
        "seccompProfileType": st.sampled_from(["RuntimeDefault", "Unconfined"]), "hostNetwork": st.booleans()}),
    "completions": st.integers(1, 8), "parallelism": st.integers(1, 8), "backoffLimit": st.integers(0, 6),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([("training", True), ("workspace", True), ("inference", True), ("inference", False),
                        ("stream", False)]), specs, st.booleans())
def test_varied_specs_build_schema_valid_objects(kind_knative, spec, suspended):
    kind, knative = kind_knative
    r = m.WorkloadRef(id=WID, name="w", kind=kind, project="p", namespace="studio-p", suspended=suspended)
    objects = m.build_manifests(r, spec, knative=knative)
    assert_valid(objects)
    assert set((o["apiVersion"], o["kind"]) for o in objects) <= set(m.object_kinds(kind, knative=knative))
    names_by_kind = [(o["kind"], o["apiVersion"], o["metadata"]["name"]) for o in objects]
    assert len(names_by_kind) == len(set(names_by_kind))


POOLS = {"default": ("", ""), "a100": ("run.ai/node-pool", "a100"), "h100": ("example.com/gpu", "h100")}


@pytest.mark.parametrize("names, pools, terms", [
    # each pool by its own label, in the order named (Kubernetes ORs the terms)
    (["h100", "a100"], POOLS, [[{"key": "example.com/gpu", "operator": "In", "values": ["h100"]}],
                               [{"key": "run.ai/node-pool", "operator": "In", "values": ["a100"]}]]),
    # the default pool: the nodes no other pool's label names
    (["default"], POOLS, [[{"key": "example.com/gpu", "operator": "NotIn", "values": ["h100"]},
                           {"key": "run.ai/node-pool", "operator": "NotIn", "values": ["a100"]}]]),
    (["default"], {"default": ("", "")}, []),  # the only pool: every node
    ([], POOLS, []),
    # the cluster's pools unknown: Run:ai's label, and the default pool means any node
    (["a", "b"], None, [[{"key": "run.ai/node-pool", "operator": "In", "values": ["a", "b"]}]]),
    (["a", "default"], None, []),
])
def test_a_pod_is_kept_in_the_pools_it_names_by_each_pools_label(names, pools, terms):
    assert m.parts.pool_terms(names, pools) == terms


def test_the_users_node_affinity_is_held_to_each_pool():
    spec = {**minimal(), "nodePools": ["h100", "default"], "nodeAffinityRequired": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}]}}
    pod = m.build_manifests(ref("training"), spec, node_pools=POOLS)[0]["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    zone = {"key": "zone", "operator": "In", "values": ["z1"]}
    assert terms == [{"matchExpressions": [zone, {"key": "example.com/gpu", "operator": "In", "values": ["h100"]}]},
                     {"matchExpressions": [zone, *m.parts.pool_terms(["default"], POOLS)[0]]}]
