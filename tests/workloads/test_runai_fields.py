"""The fields Run:ai's spec (latest) defines beyond the seeds: accepted, valid per its schema, and each doing
something real in the Kubernetes objects (or kept with a reason, asserted here too)."""

import copy
import json

import pytest

from tests.factories import allow_host_paths, seed_node_pools
from tests.runai_spec import request_errors
from workloads import manifests
from workloads.cluster.push import workload_ref
from workloads.models import Workload

pytestmark = pytest.mark.django_db


TRAINING = {
    "name": "full-training",
    "spec": {
        "image": "python:3.11", "command": "python", "args": "-c 'print(1)'",
        "category": "Experiment", "preemptibility": "non-preemptible",
        "imagePullSecrets": [{"name": "registry-creds"}, {"name": "skipped", "exclude": True}],
        "nodePools": ["default"],
        "nodeAffinityRequired": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu.example/model", "operator": "In", "values": ["a100", "h100"]}]}]},
        "restartPolicy": "OnFailure", "terminationGracePeriodSeconds": 45,
        "relatedUrls": [{"name": "docs", "type": "documentation", "url": "https://example.com/docs"}],
        "exposedUrls": [{"container": 8080, "url": "https://board.alpha.apps.example.com/tb",
                         "authorizationType": "authorizedUsers",
                         "authorizedUsers": ["bob"]}],
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule", "exclude": True}],
        "environmentVariables": [
            {"name": "MODE", "configMap": {"name": "settings", "key": "mode"}, "description": "run mode"},
            {"name": "POD", "podFieldRef": {"path": "metadata.name"}},
            {"name": "TOKEN", "userCredential": {"name": "bob-token", "key": "token"}},
            {"name": "GONE", "value": "x", "exclude": True},
        ],
        "storage": {
            "emptyDirVolume": [{"name": "scratch", "path": "/scratch", "medium": "Memory", "sizeLimit": "1Gi"}],
            "pvc": [{"path": "/data", "claimInfo": {"size": "1Gi", "addedAttrValues": [{"key": "tier", "value": "gold"}]},
                     "dataSharing": True}],
            "configMapVolume": [{"configMap": "settings", "mountPath": "/etc/app/app.ini", "subPath": "app.ini",
                                 "defaultMode": "0440"}],
            "git": [{"repository": "https://example.com/repo.git", "path": "/code",
                     "secretRef": {"name": "git-creds", "secretKeyOfUser": "user", "secretKeyOfPassword": "pass"}}],
        },
    },
}

INFERENCE = {
    "name": "full-inference",
    "spec": {
        "image": "example/serve:1", "priorityClass": "build", "category": "Deploy",
        "servingPort": {"container": 8000, "protocol": "http", "authorizationType": "authorizedGroups",
                        "authorizedGroups": ["ml"], "clusterLocalAccessOnly": True},
        "servingConfiguration": {"initializationTimeoutSeconds": 600, "requestTimeoutSeconds": 120},
        "autoscaling": {"minReplicas": 1, "maxReplicas": 4, "metric": "concurrency", "metricThreshold": 10,
                        "initialReplicas": 2, "activationReplicas": 1, "metricThresholdPercentage": 70,
                        "scaleDownDelaySeconds": 30, "concurrencyHardLimit": 20},
        "storage": {"hostPath": [{"path": "/models", "mountPath": "/models", "readOnly": True}]},
    },
}

WORKSPACE = {"name": "full-workspace",
             "spec": {"image": "jupyter/base-notebook", "backoffLimit": 3, "restartPolicy": "Always",
                      "terminationGracePeriodSeconds": 5}}


@pytest.fixture
def member(client_for, org, settings):
    settings.EXPOSED_URL_DOMAIN = "apps.example.com"  # project alpha's exposed URLs are on alpha.apps.example.com
    allow_host_paths(org.a)  # the inference mounts a hostPath: allowed for this project by a platform admin
    seed_node_pools(org.cluster)  # the seeds ask for my-node-pool-a and -b
    return client_for(org.users.member)


def submit(member, org, path, body):
    body = {**copy.deepcopy(body), "projectId": str(org.a.id), "clusterId": str(org.cluster.id)}
    assert request_errors(body, "post", f"/api/v1/workloads/{path}") == []  # a valid request as Run:ai defines it
    response = member.post(f"/api/v1/workloads/{path}", body, format="json")
    assert response.status_code == 200, response.json()
    workload = Workload.objects.get(pk=response.json()["workloadId"])
    return response.json(), workload


def objects_of(workload, knative=True):
    return {o["kind"]: o for o in manifests.build_manifests(workload_ref(workload), workload.spec, knative=knative)}


def test_training_fields_reach_the_job(member, org):
    body, workload = submit(member, org, "trainings", TRAINING)
    assert body["spec"]["category"] == "Experiment"  # templateId: tests/assets/test_templates.py
    objects = objects_of(workload)
    pod = objects["Job"]["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "registry-creds"}]
    assert pod["restartPolicy"] == "OnFailure" and pod["terminationGracePeriodSeconds"] == 45
    assert pod["priorityClassName"] == "build"  # non-preemptible
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    # The project's node pool is the default one, which is every node: no pool rule is added to the user's terms.
    assert terms == [{"matchExpressions": [
        {"key": "gpu.example/model", "operator": "In", "values": ["a100", "h100"]}]}]
    assert "tolerations" not in pod  # excluded
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["MODE"]["valueFrom"] == {"configMapKeyRef": {"name": "settings", "key": "mode"}}
    assert env["POD"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    assert env["TOKEN"]["valueFrom"] == {"secretKeyRef": {"name": "bob-token", "key": "token"}}
    assert "GONE" not in env
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["mountPath"]: m for m in pod["containers"][0]["volumeMounts"]}
    assert volumes["emptydir-0"]["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Gi"} and "/scratch" in mounts
    assert volumes["configmap-0"]["configMap"] == {"name": "settings", "defaultMode": 0o440}
    assert mounts["/etc/app/app.ini"]["subPath"] == "app.ini"
    assert objects["PersistentVolumeClaim"]["spec"]["accessModes"] == ["ReadWriteMany"]  # dataSharing
    git_env = {e["name"]: e for e in pod["initContainers"][0]["env"]}
    assert git_env["GIT_PASSWORD"]["valueFrom"] == {"secretKeyRef": {"name": "git-creds", "key": "pass"}}
    annotations = objects["Job"]["spec"]["template"]["metadata"]["annotations"]
    assert annotations["paas-studio/category"] == "Experiment"
    assert json.loads(annotations["paas-studio/related-urls"])[0]["url"] == "https://example.com/docs"
    ingress = objects["Ingress"]["spec"]["rules"][0]
    assert ingress["host"] == "board.alpha.apps.example.com" and ingress["http"]["paths"][0]["path"] == "/tb"


def test_inference_fields_reach_the_knative_service(member, org):
    _, workload = submit(member, org, "inferences", INFERENCE)
    service = objects_of(workload)["Service"]
    template = service["spec"]["template"]
    annotations = template["metadata"]["annotations"]
    assert {k: annotations[f"autoscaling.knative.dev/{k}"] for k in
            ("initial-scale", "activation-scale", "target-utilization-percentage", "scale-down-delay")} == {
        "initial-scale": "2", "activation-scale": "1", "target-utilization-percentage": "70",
        "scale-down-delay": "30s"}
    assert annotations["serving.knative.dev/progress-deadline"] == "600s"
    assert template["spec"]["timeoutSeconds"] == 120 and template["spec"]["containerConcurrency"] == 20
    assert template["spec"]["priorityClassName"] == "build"  # Run:ai's non-preemptible class; the policy lists no "inference"
    assert service["metadata"]["labels"]["networking.knative.dev/visibility"] == "cluster-local"
    access = json.loads(service["metadata"]["annotations"]["paas-studio/exposed-url-access"])
    assert access == {"8000": {"users": [], "groups": ["ml"], "type": "authorizedGroups"}}
    assert template["spec"]["volumes"][0]["hostPath"] == {"path": "/models"}


def test_workspace_keeps_its_backoff_limit_and_takes_its_grace_period(member, org):
    body, workload = submit(member, org, "workspaces", WORKSPACE)
    assert body["spec"]["backoffLimit"] == 3  # answered; a Deployment has no back-off limit to set
    deployment = objects_of(workload)["Deployment"]
    assert deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 5
    assert "backoffLimit" not in json.dumps(deployment)


@pytest.mark.parametrize(
    "path,spec_changes,field",
    [
        ("trainings", {"restartPolicy": "ExitCode"}, "spec.restartPolicy"),
        ("workspaces", {"restartPolicy": "Sometimes"}, "spec.restartPolicy"),
        ("trainings", {"preemptibility": "sometimes"}, "spec.preemptibility"),
        ("trainings", {"imagePullSecrets": [{"name": "Bad Name"}]}, "spec.imagePullSecrets[0].name"),
        ("trainings", {"nodeAffinityRequired": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "a", "operator": "Exists", "values": ["x"]}]}]}},
         "spec.nodeAffinityRequired.nodeSelectorTerms[0].matchExpressions[0].values"),
        ("trainings", {"storage": {"configMapVolume": [{"configMap": "c", "mountPath": "/c", "defaultMode": "644"}]}},
         "spec.storage.configMapVolume[0].defaultMode"),
        ("inferences", {"servingConfiguration": {"requestTimeoutSeconds": 0}},
         "spec.servingConfiguration.requestTimeoutSeconds"),
        ("inferences", {"restartPolicy": "Always"}, "spec.restartPolicy"),  # not in Run:ai's inference spec
        ("trainings", {"notARunaiField": 1}, "spec.notARunaiField"),
    ],
)
def test_bad_values_and_unknown_fields_are_a_400_naming_them(member, org, path, spec_changes, field):
    body = {"name": "bad", "projectId": org.a.id, "clusterId": str(org.cluster.id),
            "spec": {"image": "python:3.11", **spec_changes}}
    response = member.post(f"/api/v1/workloads/{path}", body, format="json")
    assert response.status_code == 400, response.json()
    assert [e["field"] for e in response.json()["errors"]] == [field]
