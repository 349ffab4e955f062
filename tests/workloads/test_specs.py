"""Request validation of the Run:ai workload spec: the seeds pass unchanged, every rule is a 400 on its field."""

import copy
import json
import re
from decimal import Decimal

import django
import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import strategies as st

if not settings.configured:  # run alone with `-p no:django`; harmless under pytest-django
    settings.configure()
    django.setup()

from rest_framework.exceptions import ValidationError  # noqa: E402

from studio.errors import flatten_errors  # noqa: E402
from tests.workloads.seed_bodies import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST  # noqa: E402
from workloads.specs import (  # noqa: E402
    NAME_RULE_MESSAGE,
    gpu_request_of,
    is_valid_name,
    validate_spec,
    validate_workload_request,
)

BODIES = {"training": TRAINING_REQUEST, "workspace": WORKSPACE_REQUEST, "inference": INFERENCE_REQUEST}
DELETE = object()


def set_path(body: dict, path: str, value) -> None:
    """Set (or with DELETE remove) `spec.storage.pvc[0].claimInfo.size` in a nested body."""
    keys = [int(k) if k.isdigit() else k for k in re.findall(r"[^.\[\]]+", path)]
    target = body
    for key in keys[:-1]:
        target = target[key]
    if value is DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value


def body_with(kind: str, changes: dict) -> dict:
    body = copy.deepcopy(BODIES[kind])
    for path, value in changes.items():
        set_path(body, path, value)
    return body


def problems(kind: str, body) -> list[dict]:
    with pytest.raises(ValidationError) as info:
        validate_workload_request(kind, body)
    return flatten_errors(info.value.detail)


def fields(kind: str, body) -> set[str]:
    return {problem["field"] for problem in problems(kind, body)}


# --- The seeds are the contract ---------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["training", "workspace", "inference"])
def test_seed_body_validates_and_its_spec_echoes_unchanged(kind):
    body = BODIES[kind]
    before = copy.deepcopy(body)

    result = validate_workload_request(kind, body)

    assert json.dumps(result["spec"]) == json.dumps(body["spec"])  # same keys, order, values and JSON types
    assert result == {
        "name": "my-workload-name",
        "useGivenNameAsPrefix": True,
        "projectId": "1",
        "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
        "spec": body["spec"],
    }
    assert body == before


@pytest.mark.parametrize("kind", ["training", "workspace", "inference"])
def test_validate_spec_takes_the_spec_alone(kind):
    assert validate_spec(kind, BODIES[kind]["spec"]) == BODIES[kind]["spec"]


def test_validate_spec_paths_are_relative_to_the_spec():
    spec = body_with("training", {"spec.compute.migProfile": "9g.90gb"})["spec"]
    with pytest.raises(ValidationError) as info:
        validate_spec("training", spec)
    assert [p["field"] for p in flatten_errors(info.value.detail)] == ["compute.migProfile"]


def test_each_validation_answers_for_its_own_body_alone():
    """The validating serializers are built once per thread and reused: nothing of one body (its errors, its
    values, its list items) may show in the answer for the next."""
    first = body_with("training", {"spec.compute.migProfile": "9g.90gb"})
    second = body_with("training", {"spec.image": ""})
    for body, field in ((first, "spec.compute.migProfile"), (second, "spec.image"), (first, "spec.compute.migProfile")):
        with pytest.raises(ValidationError) as info:
            validate_workload_request("training", body)
        assert [p["field"] for p in flatten_errors(info.value.detail)] == [field]
        assert validate_workload_request("training", TRAINING_REQUEST)["spec"] == TRAINING_REQUEST["spec"]
    with_more = copy.deepcopy(TRAINING_REQUEST)
    with_more["spec"]["environmentVariables"] = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert len(validate_workload_request("training", with_more)["spec"]["environmentVariables"]) == 2
    assert validate_workload_request("training", TRAINING_REQUEST)["spec"] == TRAINING_REQUEST["spec"]


def test_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError, match="Unknown workload kind"):
        validate_workload_request("notebook", TRAINING_REQUEST)


# --- One malformed field per row: a 400 naming exactly that field -----------------------------------------------

T, W, I = "training", "workspace", "inference"  # noqa: E741
PORTION_OFF = {"spec.compute.gpuPortionRequest": DELETE, "spec.compute.gpuPortionLimit": DELETE}

# fmt: off
ROWS = [
    # id, kind, changes, the one field reported
    ("name-uppercase", T, {"name": "My-Workload"}, "name"),
    ("name-trailing-dash", T, {"name": "abc-"}, "name"),
    ("name-starts-with-digit", I, {"name": "1abc"}, "name"),
    ("name-too-long", T, {"name": "a" * 64, "useGivenNameAsPrefix": False}, "name"),
    ("name-too-long-for-prefix", T, {"name": "a" * 60}, "name"),
    ("name-missing", I, {"name": DELETE}, "name"),
    ("name-not-a-string", T, {"name": 7}, "name"),
    ("prefix-flag-string", T, {"useGivenNameAsPrefix": "yes"}, "useGivenNameAsPrefix"),
    ("project-id-letters", T, {"projectId": "abc"}, "projectId"),
    ("project-id-negative", T, {"projectId": -1}, "projectId"),
    ("project-id-boolean", I, {"projectId": True}, "projectId"),
    ("project-id-missing", T, {"projectId": DELETE}, "projectId"),
    ("cluster-id-not-uuid", T, {"clusterId": "cluster-1"}, "clusterId"),
    ("spec-missing", T, {"spec": DELETE}, "spec"),
    ("spec-not-object", I, {"spec": ["python:3.8"]}, "spec"),
    ("image-missing", T, {"spec.image": DELETE}, "spec.image"),
    ("image-empty", I, {"spec.image": ""}, "spec.image"),
    ("image-with-space", W, {"spec.image": "python 3.8"}, "spec.image"),
    ("pull-policy", T, {"spec.imagePullPolicy": "Sometimes"}, "spec.imagePullPolicy"),
    ("create-home-dir-string", T, {"spec.createHomeDir": "true"}, "spec.createHomeDir"),
    ("command-number", I, {"spec.command": 5}, "spec.command"),
    ("working-dir-relative", T, {"spec.workingDir": "home/me"}, "spec.workingDir"),
    ("node-pool-name", T, {"spec.nodePools[1]": "Pool_B"}, "spec.nodePools[1]"),
    ("node-pools-string", I, {"spec.nodePools": "my-node-pool-a"}, "spec.nodePools"),
    ("node-type", T, {"spec.nodeType": "gpu node!"}, "spec.nodeType"),
    ("pod-affinity-type", I, {"spec.podAffinity.type": "Sometimes"}, "spec.podAffinity.type"),
    ("probe-delay-negative", T, {"spec.probes.readiness.initialDelaySeconds": -1}, "spec.probes.readiness.initialDelaySeconds"),
    ("probe-period-zero", I, {"spec.probes.readiness.periodSeconds": 0}, "spec.probes.readiness.periodSeconds"),
    ("probe-threshold-zero", T, {"spec.probes.readiness.failureThreshold": 0}, "spec.probes.readiness.failureThreshold"),
    ("probe-timeout-string", T, {"spec.probes.readiness.timeoutSeconds": "1"}, "spec.probes.readiness.timeoutSeconds"),
    ("probe-scheme", I, {"spec.probes.readiness.handler.httpGet.scheme": "FTP"}, "spec.probes.readiness.handler.httpGet.scheme"),
    ("probe-port", T, {"spec.probes.readiness.handler.httpGet.port": 70000}, "spec.probes.readiness.handler.httpGet.port"),
    ("env-name-digit", T, {"spec.environmentVariables[0].name": "1HOME"}, "spec.environmentVariables[0].name"),
    ("env-name-space", I, {"spec.environmentVariables[0].name": "MY HOME"}, "spec.environmentVariables[0].name"),
    ("env-secret-key", T, {"spec.environmentVariables[0].secret.key": "bad key!"}, "spec.environmentVariables[0].secret.key"),
    ("env-value-number", T, {"spec.environmentVariables[0].value": 5}, "spec.environmentVariables[0].value"),
    ("env-exclude-string", I, {"spec.environmentVariables[0].exclude": "no"}, "spec.environmentVariables[0].exclude"),
    ("label-key", T, {"spec.labels[0].name": "-stage"}, "spec.labels[0].name"),
    ("label-value", I, {"spec.labels[0].value": "initial research"}, "spec.labels[0].value"),
    ("annotation-empty-name", T, {"spec.annotations[0].name": "example.com/"}, "spec.annotations[0].name"),
    ("annotation-bad-prefix", T, {"spec.annotations[0].name": "Example_Com/billing"}, "spec.annotations[0].name"),
    ("toleration-operator", T, {"spec.tolerations[0].operator": "In"}, "spec.tolerations[0].operator"),
    ("toleration-effect", I, {"spec.tolerations[0].effect": "Sometimes"}, "spec.tolerations[0].effect"),
    ("toleration-seconds", T, {"spec.tolerations[0].seconds": -5}, "spec.tolerations[0].seconds"),
    ("toleration-exists-value", T, {"spec.tolerations[0].operator": "Exists"}, "spec.tolerations[0].value"),
    ("toleration-equal-no-key", I, {"spec.tolerations[0].key": DELETE}, "spec.tolerations[0].key"),
    ("port-zero", T, {"spec.ports[0].container": 0}, "spec.ports[0].container"),
    ("port-too-high", I, {"spec.ports[0].container": 65536}, "spec.ports[0].container"),
    ("port-string", T, {"spec.ports[0].container": "8080"}, "spec.ports[0].container"),
    ("port-external", T, {"spec.ports[0].external": 70000}, "spec.ports[0].external"),
    ("port-service-type", W, {"spec.ports[0].serviceType": "Ingress"}, "spec.ports[0].serviceType"),
    ("url-port", T, {"spec.exposedUrls[0].container": -1}, "spec.exposedUrls[0].container"),
    ("url-users-string", I, {"spec.exposedUrls[0].authorizedUsers": "user-a"}, "spec.exposedUrls[0].authorizedUsers"),
    ("url-group-number", T, {"spec.exposedUrls[0].authorizedGroups[1]": 3}, "spec.exposedUrls[0].authorizedGroups[1]"),
    ("gpu-request-type", T, {"spec.compute.gpuRequestType": "whole"}, "spec.compute.gpuRequestType"),
    ("gpu-portion-zero", I, {"spec.compute.gpuPortionRequest": 0}, "spec.compute.gpuPortionRequest"),
    ("gpu-portion-above-one", T, {"spec.compute.gpuPortionRequest": 1.5}, "spec.compute.gpuPortionRequest"),
    ("gpu-portion-string", T, {"spec.compute.gpuPortionRequest": "0.5"}, "spec.compute.gpuPortionRequest"),
    ("gpu-portion-limit-below", I, {"spec.compute.gpuPortionLimit": 0.25}, "spec.compute.gpuPortionLimit"),
    ("gpu-portion-missing", T, PORTION_OFF | {"spec.compute.gpuRequestType": "portion"}, "spec.compute.gpuPortionRequest"),
    ("gpu-devices-memory", T, {"spec.compute.gpuDevicesRequest": 2, "spec.compute.gpuRequestType": "memory"}, "spec.compute.gpuRequestType"),
    ("gpu-devices-mig", I, {"spec.compute.gpuDevicesRequest": 2, "spec.compute.gpuRequestType": "migProfile"}, "spec.compute.gpuRequestType"),
    ("gpu-devices-zero-with-type", T, {"spec.compute.gpuDevicesRequest": 0}, "spec.compute.gpuDevicesRequest"),
    ("gpu-devices-negative", T, {"spec.compute.gpuDevicesRequest": -1}, "spec.compute.gpuDevicesRequest"),
    ("gpu-devices-float", I, {"spec.compute.gpuDevicesRequest": 1.0}, "spec.compute.gpuDevicesRequest"),
    ("gpu-devices-boolean", T, {"spec.compute.gpuDevicesRequest": True}, "spec.compute.gpuDevicesRequest"),
    ("gpu-type-ambiguous", T, {"spec.compute.gpuRequestType": DELETE}, "spec.compute.gpuRequestType"),
    ("gpu-memory-nan", T, {"spec.compute.gpuMemoryRequest": "NaN"}, "spec.compute.gpuMemoryRequest"),
    ("gpu-memory-space", I, {"spec.compute.gpuMemoryRequest": "1 Gi"}, "spec.compute.gpuMemoryRequest"),
    ("gpu-memory-negative", T, {"spec.compute.gpuMemoryRequest": "-1"}, "spec.compute.gpuMemoryRequest"),
    ("gpu-memory-empty", W, {"spec.compute.gpuMemoryRequest": ""}, "spec.compute.gpuMemoryRequest"),
    ("gpu-memory-boolean", T, {"spec.compute.gpuMemoryLimit": True}, "spec.compute.gpuMemoryLimit"),
    ("gpu-memory-bad-suffix", I, {"spec.compute.gpuMemoryLimit": "10MB"}, "spec.compute.gpuMemoryLimit"),
    ("gpu-memory-limit-below", T, {"spec.compute.gpuRequestType": "memory", "spec.compute.gpuMemoryLimit": "5M"}, "spec.compute.gpuMemoryLimit"),
    ("gpu-memory-zero", I, {"spec.compute.gpuRequestType": "memory", "spec.compute.gpuMemoryRequest": "0"}, "spec.compute.gpuMemoryRequest"),
    ("mig-profile", T, {"spec.compute.migProfile": "8g.80gb"}, "spec.compute.migProfile"),
    ("cpu-cores-zero", T, {"spec.compute.cpuCoreRequest": 0}, "spec.compute.cpuCoreRequest"),
    ("cpu-cores-negative", I, {"spec.compute.cpuCoreLimit": -1}, "spec.compute.cpuCoreLimit"),
    ("cpu-cores-string", T, {"spec.compute.cpuCoreRequest": "0.5"}, "spec.compute.cpuCoreRequest"),
    ("cpu-limit-below", T, {"spec.compute.cpuCoreLimit": 0.25}, "spec.compute.cpuCoreLimit"),
    ("cpu-memory-limit-below", I, {"spec.compute.cpuMemoryLimit": "10M"}, "spec.compute.cpuMemoryLimit"),
    ("cpu-memory-space", T, {"spec.compute.cpuMemoryRequest": "20 M"}, "spec.compute.cpuMemoryRequest"),
    ("cpu-memory-number", T, {"spec.compute.cpuMemoryRequest": 20000000}, "spec.compute.cpuMemoryRequest"),
    ("shm-string", W, {"spec.compute.largeShmRequest": "no"}, "spec.compute.largeShmRequest"),
    ("extended-negative", T, {"spec.compute.extendedResources[0].quantity": -2}, "spec.compute.extendedResources[0].quantity"),
    ("extended-garbage", I, {"spec.compute.extendedResources[0].quantity": "two"}, "spec.compute.extendedResources[0].quantity"),
    ("extended-name", T, {"spec.compute.extendedResources[0].resource": "not a name"}, "spec.compute.extendedResources[0].resource"),
    ("data-volume-id", T, {"spec.storage.dataVolume[0].id": "123"}, "spec.storage.dataVolume[0].id"),
    ("data-volume-path", I, {"spec.storage.dataVolume[0].mountPath": "mnt/data"}, "spec.storage.dataVolume[0].mountPath"),
    ("pvc-size", T, {"spec.storage.pvc[0].claimInfo.size": "1 G"}, "spec.storage.pvc[0].claimInfo.size"),
    ("pvc-size-missing", I, {"spec.storage.pvc[0].claimInfo.size": DELETE}, "spec.storage.pvc[0].claimInfo.size"),
    ("pvc-claim-info-missing", T, {"spec.storage.pvc[0].claimInfo": DELETE}, "spec.storage.pvc[0].claimInfo"),
    ("pvc-volume-mode", T, {"spec.storage.pvc[0].claimInfo.volumeMode": "Directory"}, "spec.storage.pvc[0].claimInfo.volumeMode"),
    ("pvc-access-mode", I, {"spec.storage.pvc[0].claimInfo.accessModes.readWriteOnce": "yes"}, "spec.storage.pvc[0].claimInfo.accessModes.readWriteOnce"),
    ("pvc-existing-no-claim", T, {"spec.storage.pvc[0].existingPvc": True, "spec.storage.pvc[0].claimName": DELETE}, "spec.storage.pvc[0].claimName"),
    ("pvc-path-relative", T, {"spec.storage.pvc[0].path": "container/my-claim"}, "spec.storage.pvc[0].path"),
    ("pvc-not-a-list", I, {"spec.storage.pvc": {"name": "a"}}, "spec.storage.pvc"),
    ("git-path-missing", T, {"spec.storage.git[0].path": DELETE}, "spec.storage.git[0].path"),
    ("git-branch-space", I, {"spec.storage.git[0].branch": "my branch"}, "spec.storage.git[0].branch"),
    ("config-map-missing", T, {"spec.storage.configMapVolume[0].configMap": DELETE}, "spec.storage.configMapVolume[0].configMap"),
    ("secret-volume-path-number", I, {"spec.storage.secretVolume[0].mountPath": 7}, "spec.storage.secretVolume[0].mountPath"),
    ("host-path-propagation", T, {"spec.storage.hostPath[0].mountPropagation": "Always"}, "spec.storage.hostPath[0].mountPropagation"),
    ("host-path-relative", W, {"spec.storage.hostPath[0].mountPath": "local"}, "spec.storage.hostPath[0].mountPath"),
    ("nfs-server-missing", T, {"spec.storage.nfs[0].server": DELETE}, "spec.storage.nfs[0].server"),
    ("nfs-path-relative", T, {"spec.storage.nfs[0].path": "nfs"}, "spec.storage.nfs[0].path"),
    ("s3-bucket-missing", T, {"spec.storage.s3[0].bucket": DELETE}, "spec.storage.s3[0].bucket"),
    ("uid-gid-source", T, {"spec.security.uidGidSource": "fromNowhere"}, "spec.security.uidGidSource"),
    ("capability-prefixed", I, {"spec.security.capabilities[1]": "CAP_KILL"}, "spec.security.capabilities[1]"),
    ("seccomp", T, {"spec.security.seccompProfileType": "Strict"}, "spec.security.seccompProfileType"),
    ("run-as-uid-negative", T, {"spec.security.runAsUid": -1}, "spec.security.runAsUid"),
    ("run-as-gid-string", I, {"spec.security.runAsGid": "30"}, "spec.security.runAsGid"),
    ("supplemental-groups", T, {"spec.security.supplementalGroups": "2,a"}, "spec.security.supplementalGroups"),
    ("host-network-string", W, {"spec.security.hostNetwork": "false"}, "spec.security.hostNetwork"),
    ("completions-zero", T, {"spec.completions": 0}, "spec.completions"),
    ("parallelism-negative", T, {"spec.parallelism": -1}, "spec.parallelism"),
    ("backoff-negative", T, {"spec.backoffLimit": -1}, "spec.backoffLimit"),
    ("auto-deletion-negative", W, {"spec.autoDeletionTimeAfterCompletionSeconds": -1}, "spec.autoDeletionTimeAfterCompletionSeconds"),
    ("priority-class", T, {"spec.priorityClass": "Build Class"}, "spec.priorityClass"),
    ("tty-number", W, {"spec.tty": 1}, "spec.tty"),
    ("serving-port", I, {"spec.servingPort.container": 0}, "spec.servingPort.container"),
    ("serving-protocol", I, {"spec.servingPort.protocol": "tcp"}, "spec.servingPort.protocol"),
    ("min-replicas-negative", I, {"spec.autoscaling.minReplicas": -1}, "spec.autoscaling.minReplicas"),
    ("max-replicas-zero", I, {"spec.autoscaling.maxReplicas": 0}, "spec.autoscaling.maxReplicas"),
    ("max-below-min", I, {"spec.autoscaling.minReplicas": 3, "spec.autoscaling.maxReplicas": 2, "spec.autoscaling.scaleToZeroRetentionSeconds": DELETE}, "spec.autoscaling.maxReplicas"),
    ("metric", I, {"spec.autoscaling.metric": "requests per second"}, "spec.autoscaling.metric"),
    ("metric-missing", I, {"spec.autoscaling.metric": DELETE, "spec.autoscaling.metricThreshold": DELETE}, "spec.autoscaling.metric"),
    ("threshold-missing", I, {"spec.autoscaling.metricThreshold": DELETE}, "spec.autoscaling.metricThreshold"),
    ("threshold-negative", I, {"spec.autoscaling.metricThreshold": -1}, "spec.autoscaling.metricThreshold"),
    ("retention-too-long", I, {"spec.autoscaling.scaleToZeroRetentionSeconds": 3601}, "spec.autoscaling.scaleToZeroRetentionSeconds"),
    ("retention-without-zero", I, {"spec.autoscaling.minReplicas": 1, "spec.autoscaling.maxReplicas": 2}, "spec.autoscaling.scaleToZeroRetentionSeconds"),
    ("inference-has-no-completions", I, {"spec.completions": 1}, "spec.completions"),
    ("workspace-has-no-parallelism", W, {"spec.parallelism": 1}, "spec.parallelism"),
    ("training-has-no-serving-port", T, {"spec.servingPort": {"container": 8080}}, "spec.servingPort"),
    ("inference-has-no-s3", I, {"spec.storage.s3": []}, "spec.storage.s3"),  # latest gives inferences hostPath and nfs, never s3
    ("inference-has-no-host-network", I, {"spec.security.hostNetwork": False}, "spec.security.hostNetwork"),
]
# fmt: on


@pytest.mark.parametrize(
    ("kind", "changes", "field"), [row[1:] for row in ROWS], ids=[row[0] for row in ROWS]
)
def test_one_malformed_field_is_a_400_naming_it(kind, changes, field):
    assert fields(kind, body_with(kind, changes)) == {field}


def test_messages_are_sentences():
    found = problems("training", body_with("training", {"name": "Bad", "spec.compute.gpuPortionLimit": 0.25}))
    assert found == [
        {"field": "name", "message": NAME_RULE_MESSAGE},
        {"field": "spec.compute.gpuPortionLimit", "message": "Must be at least gpuPortionRequest (0.5)."},
    ]


def test_every_problem_is_reported_at_once():
    body = body_with(
        "training",
        {
            "name": "Bad_Name",
            "clusterId": "nope",
            "spec.image": "",
            "spec.compute.cpuCoreRequest": "x",  # a field error and a cross-field error in one object
            "spec.compute.gpuPortionLimit": 0.1,
            "spec.storage.pvc[0].claimInfo.size": "NaN",
            "spec.environmentVariables[0].name": "1X",
            "spec.security.capabilities[0]": "CAP_CHOWN",
            "spec.completions": 0,
        },
    )
    assert fields("training", body) == {
        "name",
        "clusterId",
        "spec.image",
        "spec.compute.cpuCoreRequest",
        "spec.compute.gpuPortionLimit",
        "spec.storage.pvc[0].claimInfo.size",
        "spec.environmentVariables[0].name",
        "spec.security.capabilities[0]",
        "spec.completions",
    }


def test_only_the_faulty_items_of_a_list_are_named():
    body = body_with("inference", {})
    body["spec"]["ports"] = [{"container": 80}, {"container": 0}, {"container": 443}, {"container": "x"}]
    assert fields("inference", body) == {"spec.ports[1].container", "spec.ports[3].container"}


# --- Unknown fields are 400s at every level -------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "extra",
        "spec.imagee",
        "spec.compute.gpuPortion",
        "spec.probes.liveness",
        "spec.probes.readiness.handler.exec",
        "spec.storage.pvc[0].claimInfo.sizee",
        "spec.environmentVariables[0].secret.optional",
        "spec.autoscaling.targetReplicas",
    ],
)
def test_unknown_fields_are_named(path):
    assert problems("inference", body_with("inference", {path: 1})) == [
        {"field": path, "message": "Unknown field."}
    ]


def test_the_body_must_be_an_object():
    assert problems("training", ["not", "an", "object"]) == [
        {"field": "", "message": "Must be a JSON object."}
    ]
    assert fields("training", None) == {""}


# --- Ignored GPU fields, defaults, nulls, given values ---------------------------------------------------------


def test_fields_of_other_gpu_request_types_are_kept_and_ignored_but_must_be_well_formed():
    inconsistent = body_with("training", {"spec.compute.gpuMemoryLimit": "1M"})  # below its request: ignored
    assert validate_workload_request("training", inconsistent)["spec"]["compute"]["gpuMemoryLimit"] == "1M"
    assert fields("training", body_with("training", {"spec.compute.gpuMemoryLimit": "1 M"})) == {
        "spec.compute.gpuMemoryLimit"
    }


def minimal(kind: str, **spec) -> dict:
    return {
        "name": "job",
        "projectId": "7",
        "clusterId": TRAINING_REQUEST["clusterId"],
        "spec": {"image": "x"} | spec,
    }


def test_training_defaults_are_those_of_a_kubernetes_job():
    result = validate_workload_request("training", minimal("training"))
    assert result == {
        "name": "job",
        "useGivenNameAsPrefix": False,
        "projectId": "7",
        "clusterId": TRAINING_REQUEST["clusterId"],
        "spec": {"image": "x", "completions": 1, "parallelism": 1, "backoffLimit": 6},
    }


@pytest.mark.parametrize("kind", ["workspace", "inference"])
def test_workspaces_and_inferences_get_no_spec_defaults(kind):
    assert validate_workload_request(kind, minimal(kind))["spec"] == {"image": "x"}


@pytest.mark.parametrize(
    ("compute", "normalised"),
    [
        (
            {"gpuPortionRequest": 0.5},
            {"gpuPortionRequest": 0.5, "gpuRequestType": "portion", "gpuDevicesRequest": 1},
        ),
        (
            {"gpuMemoryRequest": "8Gi"},
            {"gpuMemoryRequest": "8Gi", "gpuRequestType": "memory", "gpuDevicesRequest": 1},
        ),
        (
            {"migProfile": "3g.20gb"},
            {"migProfile": "3g.20gb", "gpuRequestType": "migProfile", "gpuDevicesRequest": 1},
        ),
        ({"gpuDevicesRequest": 2}, {"gpuDevicesRequest": 2}),
        ({"cpuCoreRequest": 1}, {"cpuCoreRequest": 1}),
    ],
)
def test_the_gpu_request_type_is_inferred_from_the_one_fraction_given(compute, normalised):
    assert validate_spec("workspace", {"image": "x", "compute": compute})["compute"] == normalised


@pytest.mark.parametrize(
    ("autoscaling", "normalised"),
    [
        ({}, {"minReplicas": 1, "maxReplicas": 1}),
        ({"minReplicas": 3}, {"minReplicas": 3, "maxReplicas": 3}),
        (
            {"minReplicas": 0, "scaleToZeroRetentionSeconds": 60},
            {"minReplicas": 0, "scaleToZeroRetentionSeconds": 60, "maxReplicas": 1},
        ),
        (
            {"maxReplicas": 4, "metric": "concurrency", "metricThreshold": 10},
            {"maxReplicas": 4, "metric": "concurrency", "metricThreshold": 10, "minReplicas": 1},
        ),
    ],
)
def test_autoscaling_defaults_to_a_fixed_size(autoscaling, normalised):
    assert validate_spec("inference", {"image": "x", "autoscaling": autoscaling})["autoscaling"] == normalised


def test_null_means_absent_for_optional_fields_only():
    spec = {"image": "x", "nodeType": None, "compute": None, "completions": None}
    assert validate_spec("training", spec) == {
        "image": "x",
        "completions": 1,
        "parallelism": 1,
        "backoffLimit": 6,
    }
    assert fields("training", minimal("training") | {"name": None}) == {"name"}


def test_given_values_keep_their_json_types():
    spec = validate_spec(
        "training",
        {"image": "x", "compute": {"cpuCoreRequest": 1, "cpuCoreLimit": 2.0, "cpuMemoryRequest": "1e3"}},
    )
    assert spec["compute"] == {"cpuCoreRequest": 1, "cpuCoreLimit": 2.0, "cpuMemoryRequest": "1e3"}
    assert type(spec["compute"]["cpuCoreRequest"]) is int and type(spec["compute"]["cpuCoreLimit"]) is float


def test_project_id_as_a_string_and_a_prefix_name_that_fits():
    result = validate_workload_request(
        "inference",
        minimal("inference") | {"projectId": "42", "name": "a" * 57, "useGivenNameAsPrefix": True},
    )
    assert result["projectId"] == "42" and result["name"] == "a" * 57


def test_several_devices_with_portions_are_allowed():
    body = body_with("training", {"spec.compute.gpuDevicesRequest": 4})
    assert gpu_request_of(validate_workload_request("training", body)["spec"]) == Decimal("2.0")


def test_an_existing_claim_needs_no_claim_info():
    body = body_with(
        "training", {"spec.storage.pvc[0].existingPvc": True, "spec.storage.pvc[0].claimInfo": DELETE}
    )
    assert validate_workload_request("training", body)["spec"]["storage"]["pvc"][0]["existingPvc"] is True


# --- gpu_request_of ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("compute", "gpus"),
    [
        (None, Decimal(0)),
        ({}, Decimal(0)),
        ({"cpuCoreRequest": 4}, Decimal(0)),
        ({"gpuDevicesRequest": 0}, Decimal(0)),
        ({"gpuDevicesRequest": 2}, Decimal(2)),
        ({"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.5}, Decimal("0.5")),
        ({"gpuDevicesRequest": 3, "gpuRequestType": "portion", "gpuPortionRequest": 0.25}, Decimal("0.75")),
        ({"gpuRequestType": "portion", "gpuPortionRequest": 0.1}, Decimal("0.1")),
        ({"gpuDevicesRequest": 1, "gpuRequestType": "memory", "gpuMemoryRequest": "4Gi"}, Decimal(1)),
        ({"gpuDevicesRequest": 1, "gpuRequestType": "migProfile", "migProfile": "7g.80gb"}, Decimal(1)),
        ({"gpuDevicesRequest": 1, "gpuRequestType": "migProfile", "migProfile": "3g.20gb"}, Decimal(3) / 7),
        ({"gpuDevicesRequest": 1, "gpuRequestType": "migProfile", "migProfile": "1g.5gb"}, Decimal(1) / 7),
    ],
)
def test_gpu_request_of(compute, gpus):
    spec = {"image": "x"} if compute is None else {"image": "x", "compute": compute}
    assert gpu_request_of(spec) == gpus


@pytest.mark.parametrize(("kind", "gpus"), [("training", Decimal("0.5")), ("inference", Decimal("0.5"))])
def test_gpu_request_of_the_seeds_counts_the_portion_only(kind, gpus):
    assert gpu_request_of(validate_workload_request(kind, BODIES[kind])["spec"]) == gpus


# --- Names ------------------------------------------------------------------------------------------------------


def reference_name_rule(text: str) -> bool:
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789-")
    return (
        1 <= len(text) <= 63
        and text[0] in "abcdefghijklmnopqrstuvwxyz"
        and text[-1] != "-"
        and set(text) <= allowed
    )


@given(
    st.text()
    | st.from_regex(r"[a-z][-a-z0-9]{0,70}\n?", fullmatch=True)
    | st.text("abz09-_A. \n", max_size=70)
)
def test_is_valid_name_agrees_with_the_reference_rule(text):
    assert is_valid_name(text) == reference_name_rule(text)


@pytest.mark.parametrize("value", [None, 7, b"abc", ["abc"]])
def test_is_valid_name_is_false_for_non_strings(value):
    assert is_valid_name(value) is False
