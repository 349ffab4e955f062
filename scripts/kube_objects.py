"""The objects scripts/kube_stack.py writes into a fresh real cluster, as pure functions: KWOK's GPU nodes and the
Stages that play them, KAI Scheduler's namespaces, identities, default queues, priority classes and admission
webhooks, the training operator's identity. The CRDs and ClusterRoles themselves come from the modules' own files
(scripts/kube/build_stack.sh copies them into the stack's `manifests/`)."""

import base64
from pathlib import Path

import yaml

from kubesim.sim import GPU_MEMORY_MIB, GPU_MODEL, NODE_POOL_LABEL

KAI_NAMESPACE = "kai-scheduler"
KAI_RESERVATION_NAMESPACE = "kai-resource-reservation"
KAI_SCHEDULER_NAME = "kai-scheduler"
KAI_QUEUE_LABEL = "kai.scheduler/queue"
KAI_NODE_POOL_LABEL = "kai.scheduler/node-pool"  # KAI's shards: the default one takes the nodes without it
KAI_GPU_INDEX_ANNOTATION = "run.ai/reserve_for_gpu_index"  # what the reservation pod writes after asking NVML
TRAINING_OPERATOR_NAMESPACE = "kubeflow"
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
TRAINING_KINDS = ("Job", "PyTorchJob", "TFJob", "MPIJob", "XGBoostJob", "JAXJob", "PaddleJob")
# KAI's components: process name -> (ClusterRole file in manifests/kai/rbac, its ServiceAccount as helm names it)
KAI_COMPONENTS = {"kai-scheduler": ("scheduler", "scheduler"), "kai-binder": ("binder", "binder"),
                  "kai-podgrouper": ("podgrouper", "podgrouper"),
                  "kai-podgroupcontroller": ("podgroupcontroller", "podgroupcontroller"),
                  "kai-queuecontroller": ("queuecontroller", "queuecontroller"),
                  "kai-admission": ("admission", "admission")}


def load_yaml(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kwok_node(index: int, *, gpus: int, cpu: str, memory: str, pool: str | None) -> dict:
    """A GPU node for KWOK to play, labelled as kubesim's nodes and NVIDIA's GPU feature discovery label them
    (`nvidia.com/gpu.*`: KAI reads `nvidia.com/gpu.memory` for GPU-memory requests), in the node pool `pool`
    (`run.ai/node-pool=<pool>`, what the product's node pools select on) when one is given."""
    name = f"kwok-gpu-{index}"
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "node.kubernetes.io/instance-type": f"kwok.gpu-{gpus}x", "type": "kwok", "node-type": "gpu",
              "node-role.kubernetes.io/gpu-worker": "true", "nvidia.com/gpu.present": "true",
              "nvidia.com/gpu.product": GPU_MODEL.replace(" ", "-"), "nvidia.com/gpu.count": str(gpus),
              "nvidia.com/gpu.memory": str(GPU_MEMORY_MIB)}
    if pool:
        labels[NODE_POOL_LABEL] = pool
    capacity = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "1Ti", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": {KWOK_NODE_ANNOTATION: "fake"}},
            "spec": {"podCIDR": f"10.245.{index}.0/24", "podCIDRs": [f"10.245.{index}.0/24"]},
            "status": {"capacity": capacity, "allocatable": dict(capacity),
                       "nodeInfo": {"architecture": "amd64", "operatingSystem": "linux", "kubeletVersion": "fake",
                                    "kubeProxyVersion": "fake", "containerRuntimeVersion": "kwok"}}}


# The status a kubelet reports once a deleted pod's containers were stopped (SIGTERM: exit code 143).
TERMINATED_STATUS = """{{ $now := Now }}
containerStatuses:
{{ range $index, $item := .spec.containers }}
- image: {{ $item.image | Quote }}
  name: {{ $item.name | Quote }}
  ready: false
  restartCount: 0
  started: false
  state:
    terminated:
      exitCode: 143
      finishedAt: {{ $now | Quote }}
      reason: Error
      startedAt: {{ $now | Quote }}
{{ end }}
phase: Failed
"""


def kwok_exec_and_forward(work_dir: Path, forwards: dict[int, int]) -> list[dict]:
    """KWOK's ClusterExec (a command in any pod runs as a local process in `work_dir`) and ClusterPortForward
    (container port -> a local port on 127.0.0.1)."""
    return [{"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterExec", "metadata": {"name": "exec"},
             "spec": {"execs": [{"local": {"workDir": str(work_dir)}}]}},
            {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterPortForward",
             "metadata": {"name": "forward"},
             "spec": {"forwards": [{"ports": [port], "target": {"port": target, "address": "127.0.0.1"}}
                                   for port, target in forwards.items()]}}]


def kwok_stages(folder: Path, *, start_ms: int, complete_ms: int) -> list[dict]:
    """KWOK's own Stages (manifests/kwok/stages: nodes Ready with lease heartbeats; pods created, ready, deleted;
    pods of a Job or a training operator's job complete), quicker, plus one that stands in for KAI's reservation
    pod asking NVML which GPU it got: it writes a GPU id of its own (its uid) on the pod, as the pod would."""
    stages = [stage for path in sorted(folder.glob("*.yaml")) for stage in load_yaml(path)]
    for stage in stages:
        delay, name = stage["spec"].get("delay"), stage["metadata"]["name"]
        if delay is not None:  # a fixed delay (a pod's `<stage>.stage.kwok.x-k8s.io/delay` annotation still wins)
            delay["durationMilliseconds"] = complete_ms if name == "pod-complete" else start_ms
            delay.pop("jitterDurationMilliseconds", None)
            delay.pop("jitterDurationFrom", None)
        if name == "pod-complete":
            for expression in stage["spec"]["selector"]["matchExpressions"]:
                if expression["key"] == ".metadata.ownerReferences.[].kind":
                    expression["values"] = list(TRAINING_KINDS)
    # A kubelet ends a deleted pod's containers and reports the pod Failed; only then does the Job controller drop
    # its tracking finalizer, which KWOK's pod-delete waits for. Without this, a pod KAI evicts from a KWOK node
    # (a Job's, so with that finalizer) stays Terminating and holds its GPU for ever.
    stages.append({"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage",
                   "metadata": {"name": "pod-terminate"},
                   "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"},
                            "selector": {"matchExpressions": [
                                {"key": ".metadata.deletionTimestamp", "operator": "Exists"},
                                {"key": ".metadata.finalizers", "operator": "Exists"},
                                {"key": ".status.phase", "operator": "In", "values": ["Pending", "Running"]}]},
                            "delay": {"durationMilliseconds": start_ms},
                            "next": {"statusTemplate": TERMINATED_STATUS}}})
    stages.append({"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage",
                   "metadata": {"name": "kai-reservation-gpu"},
                   "spec": {"resourceRef": {"apiGroup": "v1", "kind": "Pod"},
                            "selector": {"matchExpressions": [
                                {"key": ".metadata.namespace", "operator": "In",
                                 "values": [KAI_RESERVATION_NAMESPACE]},
                                {"key": ".status.phase", "operator": "In", "values": ["Running"]},
                                {"key": f'.metadata.annotations["{KAI_GPU_INDEX_ANNOTATION}"]',
                                 "operator": "DoesNotExist"}]},
                            "next": {"patches": [{"type": "merge", "template":
                                f'metadata:\n  annotations:\n    {KAI_GPU_INDEX_ANNOTATION}: '
                                '"GPU-{{ .metadata.uid }}"\n'}]}}})
    return stages


def namespace(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def service_account(name: str, ns: str) -> dict:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name, "namespace": ns}}


def cluster_role_binding(role: str, account: str, ns: str) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}]}


def role_binding(role: str, account: str, ns: str) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": role, "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}]}


def kai_default_queues() -> list[dict]:
    """What KAI's chart creates at install: `default-parent-queue` and its child `default-queue` (no quota,
    no limit, weight 1): the pod grouper puts a pod without a queue label into `default-queue`."""
    resources = {r: {"quota": 0, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")}
    return [{"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "default-parent-queue"},
             "spec": {"resources": resources}},
            {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "default-queue"},
             "spec": {"parentQueue": "default-parent-queue", "resources": resources}}]


def nvidia_runtime_class() -> dict:
    """KAI's admission names it on GPU pods (`runtimeClassName: nvidia`), as NVIDIA's GPU operator installs it."""
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"},
            "handler": "nvidia"}


def kai_webhooks(port: int, ca_pem: str) -> list[dict]:
    """KAI's pod admission webhooks as its operator writes them (pods outside kube-system and KAI's namespace,
    failurePolicy Fail), pointed at the admission process on loopback instead of a Service."""
    selector = {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                                      "values": ["kube-system", KAI_NAMESPACE]}]}
    ca = base64.b64encode(ca_pem.encode()).decode()

    def hook(path: str, operations: list[str], **extra) -> dict:
        return {"name": "kai-admission.kai-scheduler.svc", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "namespaceSelector": selector, "failurePolicy": "Fail",
                "clientConfig": {"url": f"https://127.0.0.1:{port}{path}", "caBundle": ca},
                "rules": [{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                           "scope": "Namespaced"}], **extra}

    return [{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
             "metadata": {"name": "kai-admission"},
             "webhooks": [hook("/mutate--v1-pod", ["CREATE"], reinvocationPolicy="IfNeeded")]},
            {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
             "metadata": {"name": "kai-admission"},
             "webhooks": [hook("/validate--v1-pod", ["CREATE", "UPDATE"])]}]


def api_path(obj: dict) -> str:
    """The collection a manifest is created in."""
    group_version, kind = obj["apiVersion"], obj["kind"]
    plural = {"Namespace": "namespaces", "ServiceAccount": "serviceaccounts", "Secret": "secrets",
              "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings", "RoleBinding": "rolebindings",
              "PriorityClass": "priorityclasses", "RuntimeClass": "runtimeclasses", "Node": "nodes",
              "Queue": "queues", "CustomResourceDefinition": "customresourcedefinitions",
              "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
              "ValidatingWebhookConfiguration": "validatingwebhookconfigurations"}[kind]
    base = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    ns = obj["metadata"].get("namespace")
    return f"{base}/namespaces/{ns}/{plural}" if ns else f"{base}/{plural}"
