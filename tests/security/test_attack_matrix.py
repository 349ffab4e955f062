"""Security round 3, attacked once more: every field of a create or update body that reaches a pod, with a value
that would escape the project, the quota or the node, sent as each role — platform admin, project admin, member,
member through an access key, viewer, member of another project, user in no project, anonymous — for every kind
(training, workspace, inference, distributed, and an inference's update). Nothing is created or changed: those who
may submit get a 400 naming the field (the secure default holds for platform admins too: they loosen it with a
policy, not a request), the others a 401/403/400/404 before any field is looked at."""

import pytest
from rest_framework.test import APIClient

from profiles.models import LaunchSecret
from studio.models import AccessKey, Level, NodePool
from tests.conftest import bearer_client
from tests.factories import MembershipFactory, UserFactory
from tests.workloads.cluster_support import make_workload
from workloads.models import Workload

pytestmark = pytest.mark.django_db

# (what it tries, spec fields, the field the 400 names — a prefix). `{secret}` is another member's launch Secret.
ATTACKS = [
    ("host network", {"security": {"hostNetwork": True}}, "spec.security.hostNetwork"),
    ("host IPC", {"security": {"hostIpc": True}}, "spec.security.hostIpc"),
    ("privilege escalation", {"security": {"allowPrivilegeEscalation": True}}, "spec.security.allowPrivilegeEscalation"),
    ("uid 0", {"security": {"uidGidSource": "custom", "runAsUid": 0}}, "spec.security.runAsUid"),
    ("SYS_ADMIN", {"security": {"capabilities": ["SYS_ADMIN"]}}, "spec.security.capabilities"),
    ("unconfined seccomp", {"security": {"seccompProfileType": "Unconfined"}}, "spec.security.seccompProfileType"),
    ("hostPath /", {"storage": {"hostPath": [{"path": "/", "mountPath": "/host", "mountPropagation": "Bidirectional"}]}},
     "spec.storage.hostPath"),
    ("GPUs as an extended resource", {"compute": {"extendedResources": [{"resource": "nvidia.com/gpu", "quantity": 8}]}},
     "spec.compute.extendedResources[0].resource"),
    ("MIG slices as an extended resource",
     {"compute": {"extendedResources": [{"resource": "nvidia.com/mig-7g.80gb", "quantity": 8}]}},
     "spec.compute.extendedResources[0].resource"),
    ("GPUs over the quota", {"compute": {"gpuDevicesRequest": 5}}, "spec.compute"),
    ("a system priority class", {"priorityClass": "system-node-critical"}, "spec.priorityClass"),
    ("AppArmor unconfined", {"annotations": [{"name": "container.apparmor.security.beta.kubernetes.io/main",
                                              "value": "unconfined"}]}, "spec.annotations[0].name"),
    ("seccomp annotation", {"annotations": [{"name": "seccomp.security.alpha.kubernetes.io/pod",
                                             "value": "unconfined"}]}, "spec.annotations[0].name"),
    ("a GPU share by annotation", {"annotations": [{"name": "gpu-fraction", "value": "1"}]}, "spec.annotations[0].name"),
    ("another project's queue", {"labels": [{"name": "kai.scheduler/queue", "value": "beta"}]}, "spec.labels[0].name"),
    ("a higher class by label", {"labels": [{"name": "priorityClassName", "value": "build"}]}, "spec.labels[0].name"),
    ("a pool by node affinity", {"nodeAffinityRequired": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "run.ai/node-pool", "operator": "In", "values": ["pool-b"]}]}]}},
     "spec.nodeAffinityRequired.nodeSelectorTerms[0].matchExpressions[0].key"),
    ("a pool without quota", {"nodePools": ["pool-b"]}, "spec.nodePools[0]"),
    ("every taint", {"tolerations": [{"operator": "Exists"}]}, "spec.tolerations[0].key"),
    ("the portal's host", {"exposedUrls": [{"container": 8080, "url": "https://studio.example.com/login"}]},
     "spec.exposedUrls[0].url"),
    ("another project's host", {"exposedUrls": [{"container": 8080, "url": "https://beta.apps.example.com/"}]},
     "spec.exposedUrls[0].url"),
    ("a colleague's token by env", {"environmentVariables": [{"name": "T", "secret": {"name": "{secret}",
                                                                                      "key": "generated.token"}}]},
     "spec.environmentVariables[0].secret.name"),
    ("a colleague's token by volume", {"storage": {"secretVolume": [{"secret": "{secret}", "mountPath": "/s"}]}},
     "spec.storage.secretVolume[0].secret"),
    ("a colleague's secret to pull with", {"imagePullSecrets": [{"name": "{secret}"}]}, "spec.imagePullSecrets[0].name"),
    ("an unknown field", {"hostPID": True}, "spec.hostPID"),
    ("a huge grace period", {"terminationGracePeriodSeconds": 2**40}, "spec.terminationGracePeriodSeconds"),
    # Security round 4 (issue 37): what one workload may put on the shared cluster.
    ("the largest grace period", {"terminationGracePeriodSeconds": 2147483647}, "spec.terminationGracePeriodSeconds"),
    ("a million workers", {"numWorkers": 1_000_000}, "spec.numWorkers"),
    ("100,000 pods at once", {"parallelism": 100_000}, "spec.parallelism"),
    ("100,000 completions", {"completions": 100_000}, "spec.completions"),
    ("100,000 replicas", {"autoscaling": {"minReplicas": 100_000, "maxReplicas": 100_000}},
     "spec.autoscaling.minReplicas"),
    ("a billionth of a GPU", {"compute": {"gpuPortionRequest": 1e-9}}, "spec.compute.gpuPortionRequest"),
    ("a service-account token", {"security": {"automountServiceAccountToken": True}},
     "spec.security.automountServiceAccountToken"),
    ("a node port of one's choosing", {"ports": [{"container": 8080, "serviceType": "NodePort", "external": 30000}]},
     "spec.ports[0].external"),
    ("an ExternalName Service", {"ports": [{"container": 8080, "serviceType": "ExternalName"}]},
     "spec.ports[0].serviceType"),
    ("a Secret path", {"storage": {"secretVolume": [{"secret": "../kube-system/x", "mountPath": "/s"}]}},
     "spec.storage.secretVolume[0].secret"),
]
NOT_FOR = {"inference": {"host network", "host IPC", "privilege escalation", "a huge grace period",
                         "the largest grace period"}}
# Fields of one kind only (elsewhere they are unknown fields: a 400 that proves nothing about the bound).
ONLY_FOR = {"a million workers": "distributed", "100,000 pods at once": "training", "100,000 completions": "training",
            "100,000 replicas": "inference"}
# A launch's Secret is its submitter's and the project admins' (as its sensitive outputs are): admins may use it.
ADMINS_MAY = {"a colleague's token by env", "a colleague's token by volume", "a colleague's secret to pull with"}
ADMINS = {"platform admin", "project admin"}
KINDS = {"training": ("trainings", {}), "workspace": ("workspaces", {}), "inference": ("inferences", {}),
         "distributed": ("distributed", {"distributedFramework": "PyTorch", "numWorkers": 1})}


@pytest.fixture
def world(org, settings):
    settings.EXPOSED_URL_DOMAIN = "apps.example.com"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "studio.example.com"]
    org.a.gpu_deserved, org.a.gpu_limit = 4, 4
    org.a.node_pool_resources = [{"nodePool": {"name": "pool-a"}, "gpu": {"deserved": 4, "limit": 4}}]
    org.a.save()
    for name in ("pool-a", "pool-b"):
        NodePool.objects.create(cluster=org.cluster, name=name)
    colleague = UserFactory(username="colleague")
    MembershipFactory(user=colleague, project=org.a, role=Level.MEMBER)
    notebook = make_workload(org.a, "colleagues-notebook", kind="workspace")
    Workload.objects.filter(pk=notebook.pk).update(created_by=colleague)
    LaunchSecret.objects.create(workload_id=notebook.pk, name="colleagues-notebook-in-0a1b2c3d",
                                data_json='{"generated.token": "t0k3n"}')
    key, secret = AccessKey.issue(user=org.users.member, name="ci")
    via_key = APIClient().post("/api/v1/token", {"grantType": "client_credentials", "clientId": key.client_id,
                                                 "clientSecret": secret}, format="json").json()["accessToken"]
    keyed = APIClient()
    keyed.credentials(HTTP_AUTHORIZATION=f"Bearer {via_key}")
    users = org.users
    return {
        "may submit": {"platform admin": bearer_client(users.platform_admin),
                       "project admin": bearer_client(users.admin), "member": bearer_client(users.member),
                       "member's access key": keyed},
        "may not": {"viewer": (bearer_client(users.viewer), {400, 403}),
                    "member of another project": (bearer_client(users.other), {400, 404}),
                    "user in no project": (bearer_client(UserFactory(username="nobody")), {400, 404}),
                    "anonymous": (APIClient(), {401})},
        # (A viewer's body is read before the role: a malformed one is a 400, a well-formed one a 403.)
        "org": org, "secret": "colleagues-notebook-in-0a1b2c3d", "notebook": notebook,
    }


def _spec(spec: dict, secret: str) -> dict:
    import json

    return json.loads(json.dumps(spec).replace("{secret}", secret))


def _body(org, kind, spec, name):
    path, extra = KINDS[kind]
    return path, {"name": name, "projectId": org.a.id, "clusterId": str(org.cluster.id),
                  "spec": {"image": "python:3.11", **extra, **spec}}


@pytest.mark.parametrize("kind", KINDS)
def test_every_attack_on_a_create_is_refused_for_every_role(world, kind):
    org, wrong, tried = world["org"], [], 0
    for what, spec, field in ATTACKS:
        if what in NOT_FOR.get(kind, ()) or ONLY_FOR.get(what, kind) != kind:
            continue
        path, body = _body(org, kind, _spec(spec, world["secret"]), "attack")
        for role, api in world["may submit"].items():
            if role in ADMINS and what in ADMINS_MAY:
                continue
            answer = api.post(f"/api/v1/workloads/{path}", body, format="json")
            tried += 1
            fields = [e["field"] for e in answer.json().get("errors", [])] if answer.status_code == 400 else []
            if not any(f.startswith(field) for f in fields):
                wrong.append(f"{role}: {what}: {answer.status_code} {fields or answer.content[:150]}")
        for role, (api, codes) in world["may not"].items():
            answer = api.post(f"/api/v1/workloads/{path}", body, format="json")
            tried += 1
            if answer.status_code not in codes:
                wrong.append(f"{role}: {what}: {answer.status_code}, expected one of {codes}")
    assert not wrong, "\n".join(wrong)
    assert tried > 150 and Workload.objects.exclude(pk=world["notebook"].pk).count() == 0


def test_every_attack_on_an_inference_update_is_refused_for_every_role(world):
    org = world["org"]
    made = world["may submit"]["member"].post("/api/v1/workloads/inferences", {
        "name": "serve", "projectId": org.a.id, "clusterId": str(org.cluster.id), "spec": {"image": "python:3.11"}},
        format="json")
    assert made.status_code == 200, made.json()
    url = f"/api/v1/workloads/inferences/{made.json()['workloadId']}"
    before = Workload.objects.get(pk=made.json()["workloadId"]).spec
    wrong = []
    for what, spec, field in ATTACKS:
        if what in NOT_FOR["inference"] or ONLY_FOR.get(what, "inference") != "inference":
            continue
        body = {"spec": _spec(spec, world["secret"])}
        for role, api in world["may submit"].items():
            if role in ADMINS and what in ADMINS_MAY:
                continue
            answer = api.patch(url, body, format="json")
            fields = [e["field"] for e in answer.json().get("errors", [])] if answer.status_code == 400 else []
            if not any(f.startswith(field) for f in fields):
                wrong.append(f"{role}: {what}: {answer.status_code} {fields or answer.content[:150]}")
        for role, (api, codes) in world["may not"].items():
            answer = api.patch(url, body, format="json")
            if answer.status_code not in codes | {400, 404}:
                wrong.append(f"{role}: {what}: {answer.status_code}, expected one of {codes | {400, 404}}")
    assert not wrong, "\n".join(wrong)
    assert Workload.objects.get(pk=made.json()["workloadId"]).spec == before
