"""deploy/rbac.yaml: valid Kubernetes objects that grant exactly what the pipeline's calls need — cluster-wide
only namespaces, nodes, metrics, KAI's queues and the one RoleBinding per namespace; the rest inside project
namespaces.
tests/real/test_rbac.py proves the same on a real API server."""

from collections import defaultdict
from pathlib import Path

import kubernetes_validate
import yaml

from studio.clusters import kube, scheduler
from workloads import manifests
from workloads.cluster import push, sync
from workloads.manifests.distributed import FRAMEWORKS

ALL_GROUPS = push.OPTIONAL_GROUPS  # a cluster with Knative, the training operator and gang schedulers

RBAC = Path(__file__).resolve().parents[2] / "deploy" / "rbac.yaml"
WRITES = {"create", "get", "list", "delete"}  # create-or-adopt, list by label, remove


def documents() -> list[dict]:
    return [doc for doc in yaml.safe_load_all(RBAC.read_text()) if doc]


def resource(api_version_kind: tuple[str, str]) -> tuple[str, str]:
    plural, _ = kube.RESOURCES[api_version_kind]
    return api_version_kind[0].rpartition("/")[0], plural


def test_every_document_is_a_valid_kubernetes_object():
    for doc in documents():
        kubernetes_validate.validate(doc, "1.30", strict=True)


def granted_by(role_name: str) -> dict:
    role = next(doc for doc in documents() if doc["kind"] == "ClusterRole" and doc["metadata"]["name"] == role_name)
    granted: dict = defaultdict(set)
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            for plural in rule["resources"]:
                for name in rule.get("resourceNames") or [""]:
                    granted[(group, plural, name) if name else (group, plural)] |= set(rule["verbs"])
    return dict(granted)


def test_cluster_wide_only_namespaces_nodes_metrics_and_binding_the_namespace_role():
    assert granted_by("paas-studio") == {
        ("", "namespaces"): {"create", "get", "list", "watch", "patch"},  # watched: namespaced reads
        # patch: a pool's nodes get KAI's partition label (studio.org.queues.shards_apply)
        ("", "nodes"): {"get", "list", "watch", "patch"},
        resource(scheduler.SHARD): {"create", "get", "list"},  # a SchedulingShard per node pool
        ("metrics.k8s.io", "pods"): {"get", "list"},
        ("metrics.k8s.io", "nodes"): {"get", "list"},
        ("rbac.authorization.k8s.io", "rolebindings"): {"create", "get"},
        ("rbac.authorization.k8s.io", "clusterroles", kube.NAMESPACE_ROLE): {"bind"},
        # KAI Scheduler's queues (studio.org.queues: list, create-or-adopt, patch, delete; the watcher
        # watches them for their status).
        resource(scheduler.QUEUE): {"create", "get", "list", "watch", "patch", "delete"},
        # Data volumes (assets/datavolumes_cluster.py): the origin claim's volume copied, pre-bound and read-only,
        # into each namespace that mounts it, and removed with it; storage classes read for their list.
        ("", "persistentvolumes"): {"create", "get", "list", "delete"},
        ("storage.k8s.io", "storageclasses"): {"get", "list"},
    }


def test_the_namespace_role_grants_exactly_the_verbs_the_pipeline_uses():
    needed: dict = defaultdict(set)
    for kind in manifests.KINDS:
        for api_kind in push.workload_object_kinds(kind):
            needed[resource(api_kind)] |= WRITES
    for api_kind in sync.listed_kinds(ALL_GROUPS):
        needed[resource(api_kind)] |= {"list", "watch"}  # the watcher: a LIST, then a WATCH from its version
    for kind in ("training", "workspace"):
        api_version, api_kind, _ = manifests.suspend_patch(manifests.WorkloadRef("0", "x", kind, "p", "n"),
                                                           suspended=True)
        needed[resource((api_version, api_kind))].add("patch")
    for framework in FRAMEWORKS:
        api_version, api_kind, _ = manifests.suspend_patch(manifests.WorkloadRef("0", "x", "distributed", "p", "n"),
                                                           suspended=True, spec={"distributedFramework": framework})
        needed[resource((api_version, api_kind))].add("patch")
    needed[resource(kube.POD)] = needed[resource(kube.EVENT)] = {"list", "watch"}
    needed[resource(scheduler.POD_GROUP)] |= {"list", "watch"}  # KAI's PodGroups (kai_sync; the watcher)
    needed[("", "pods/log")] = {"get"}
    for subresource in kube.streams.SUBRESOURCES:  # sessions (exec, attach, port-forward): a WebSocket upgrade
        needed[("", f"pods/{subresource}")] = {"get", "create"}
    needed[("", "secrets")].add("patch")  # credentials' Secrets whose values drifted (assets/secrets_sync.py)
    assert granted_by(kube.NAMESPACE_ROLE) == dict(needed)


def test_the_binding_gives_the_role_to_the_service_account_whose_token_is_shipped():
    by_kind = {doc["kind"]: doc for doc in documents()}
    account, binding, token = by_kind["ServiceAccount"], by_kind["ClusterRoleBinding"], by_kind["Secret"]
    assert binding["roleRef"]["name"] == "paas-studio"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account["metadata"]["name"],
                                    "namespace": account["metadata"]["namespace"]}]
    assert token["type"] == "kubernetes.io/service-account-token"
    assert token["metadata"]["annotations"]["kubernetes.io/service-account.name"] == account["metadata"]["name"]
