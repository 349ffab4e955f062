"""The resource types the simulated API server knows, and the discovery documents built from them."""

from dataclasses import dataclass

RW = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
RO = ("get", "list")
SCHEMA_VERSION = "1.35.0"  # the Kubernetes version whose schemas validate built-in kinds (client v35)
KUBE_VERSION = {"major": "1", "minor": "35", "gitVersion": "v1.35.0-kubesim", "gitCommit": "kubesim",
                "gitTreeState": "clean", "buildDate": "2025-12-17T00:00:00Z", "goVersion": "go1.25.5",
                "compiler": "gc", "platform": "linux/amd64"}


@dataclass(frozen=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    short: tuple[str, ...] = ()
    status: bool = True            # has a /status subresource: the main resource ignores status writes
    verbs: tuple[str, ...] = RW
    builtin: bool = True           # schema-validated; typed list items carry no kind/apiVersion
    scale: bool = False            # has a /scale subresource
    categories: tuple[str, ...] = ()

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> str:
        """Store key and message name: `pods`, `jobs.batch`, `services.serving.knative.dev`."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    qualified = key

    @property
    def list_kind(self) -> str:
        return self.kind + "List"


RW_NO_COLLECTION = ("create", "delete", "get", "list", "patch", "update", "watch")
CORE = [
    Resource("", "v1", "bindings", "Binding", status=False, verbs=("create",)),
    Resource("", "v1", "componentstatuses", "ComponentStatus", namespaced=False, short=("cs",), status=False,
             verbs=RO),
    Resource("", "v1", "configmaps", "ConfigMap", short=("cm",), status=False),
    Resource("", "v1", "endpoints", "Endpoints", short=("ep",), status=False),
    Resource("", "v1", "events", "Event", short=("ev",), status=False),
    Resource("", "v1", "limitranges", "LimitRange", short=("limits",), status=False),
    Resource("", "v1", "namespaces", "Namespace", namespaced=False, short=("ns",), verbs=RW_NO_COLLECTION),
    Resource("", "v1", "nodes", "Node", namespaced=False, short=("no",)),
    Resource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", short=("pvc",)),
    Resource("", "v1", "persistentvolumes", "PersistentVolume", namespaced=False, short=("pv",)),
    Resource("", "v1", "pods", "Pod", short=("po",), categories=("all",)),
    Resource("", "v1", "podtemplates", "PodTemplate", status=False),
    Resource("", "v1", "replicationcontrollers", "ReplicationController", short=("rc",), scale=True,
             categories=("all",)),
    Resource("", "v1", "resourcequotas", "ResourceQuota", short=("quota",)),
    Resource("", "v1", "secrets", "Secret", status=False),
    Resource("", "v1", "serviceaccounts", "ServiceAccount", short=("sa",), status=False),
    Resource("", "v1", "services", "Service", short=("svc",), categories=("all",)),
]
# Subresources besides status and scale, as the real server lists them: name -> (kind, verbs, group/version).
_PROXY_VERBS = ("create", "delete", "get", "patch", "update")
SUBRESOURCES = {
    "namespaces": {"finalize": ("Namespace", ("update",), None)},
    "nodes": {"proxy": ("NodeProxyOptions", _PROXY_VERBS, None)},
    "pods": {"attach": ("PodAttachOptions", ("create", "get"), None), "binding": ("Binding", ("create",), None),
             "ephemeralcontainers": ("Pod", ("get", "patch", "update"), None),
             "eviction": ("Eviction", ("create",), ("policy", "v1")),
             "resize": ("Pod", ("get", "patch", "update"), None),
             "exec": ("PodExecOptions", ("create", "get"), None), "log": ("Pod", ("get",), None),
             "portforward": ("PodPortForwardOptions", ("create", "get"), None),
             "proxy": ("PodProxyOptions", _PROXY_VERBS, None)},
    "services": {"proxy": ("ServiceProxyOptions", _PROXY_VERBS, None)},
    "serviceaccounts": {"token": ("TokenRequest", ("create",), ("authentication.k8s.io", "v1"))},
}
GROUPS = {
    "batch": [Resource("batch", "v1", "jobs", "Job", categories=("all",))],
    "events.k8s.io": [Resource("events.k8s.io", "v1", "events", "Event", short=("ev",), status=False)],
    "apps": [Resource("apps", "v1", "deployments", "Deployment", short=("deploy",), scale=True, categories=("all",)),
             Resource("apps", "v1", "replicasets", "ReplicaSet", short=("rs",), scale=True, categories=("all",))],
    "networking.k8s.io": [Resource("networking.k8s.io", "v1", "ingresses", "Ingress", short=("ing",))],
    "autoscaling": [Resource("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler",
                             short=("hpa",), categories=("all",))],
    "serving.knative.dev": [Resource("serving.knative.dev", "v1", "services", "Service", short=("kservice", "ksvc"),
                                     builtin=False, categories=("all", "knative", "serving"))],
    # The Kubeflow Training Operator's CRDs (controllers/kubeflow.py runs them).
    "kubeflow.org": [Resource("kubeflow.org", "v1", plural, kind, builtin=False, categories=("all", "kubeflow"))
                     for plural, kind in (("pytorchjobs", "PyTorchJob"), ("tfjobs", "TFJob"), ("mpijobs", "MPIJob"),
                                          ("xgboostjobs", "XGBoostJob"), ("jaxjobs", "JAXJob"))],
    # Gang schedulers' PodGroups, served only when asked for (`gang=`): scheduler-plugins or Volcano.
    "scheduling.x-k8s.io": [Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", "PodGroup", short=("pg", "pgs"),
                                     builtin=False)],
    "scheduling.volcano.sh": [Resource("scheduling.volcano.sh", "v1beta1", "podgroups", "PodGroup",
                                       short=("pg", "podgroup-v1beta1"), builtin=False)],
    # KAI Scheduler's CRDs (one group, two versions): hierarchical queues and the pod groups its pod-grouper makes;
    # and the priority classes it installs. Served only when asked for (`kai=True`: node/kai.py schedules).
    "scheduling.run.ai": [Resource("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False, builtin=False),
                          Resource("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", short=("pg",),
                                   builtin=False)],
    "scheduling.k8s.io": [Resource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", namespaced=False,
                                   short=("pc",), status=False)],
    "storage.k8s.io": [Resource("storage.k8s.io", "v1", "storageclasses", "StorageClass", namespaced=False,
                                short=("sc",), status=False)],
    "metrics.k8s.io": [Resource("metrics.k8s.io", "v1beta1", "pods", "PodMetrics", status=False, verbs=RO),
                       Resource("metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", namespaced=False,
                                status=False, verbs=RO)],
}
METRICS_GROUP = "metrics.k8s.io"
GANG_GROUPS = {"scheduler-plugins": "scheduling.x-k8s.io", "volcano": "scheduling.volcano.sh"}


class Registry:
    def __init__(self, knative: bool, kubeflow: bool = True, gang: str | None = None, kai: bool = False):
        left_out = {g for g in GANG_GROUPS.values() if g != GANG_GROUPS.get(gang or "")}
        left_out |= set() if kai else {"scheduling.run.ai", "scheduling.k8s.io"}
        left_out |= ({"serving.knative.dev"} if not knative else set()) | ({"kubeflow.org"} if not kubeflow else set())
        self.groups = {g: rs for g, rs in GROUPS.items() if g not in left_out}
        self.all = CORE + [r for rs in self.groups.values() for r in rs]
        self._by_path = {(r.group, r.version, r.plural): r for r in self.all}
        self.by_key = {r.key: r for r in self.all}
        self._by_kind = {(r.api_version, r.kind): r for r in self.all}
        core_plurals = {r.plural for r in CORE}
        # Request counters are keyed by plural, qualified only where two groups share one (ksvc vs services).
        self.stat_name = {r.key: (r.plural if not r.group or r.plural not in core_plurals else r.key)
                          for r in self.all}

    def lookup(self, group: str, version: str, plural: str) -> Resource | None:
        return self._by_path.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> Resource | None:
        return self._by_kind.get((api_version, kind))

    def has_version(self, group: str, version: str) -> bool:
        rs = CORE if not group else self.groups.get(group, [])
        return any(r.version == version for r in rs)

    def versions(self, group: str) -> list[str]:
        """The group's versions, preferred first (the first resource's)."""
        return list(dict.fromkeys(r.version for r in self.groups[group]))

    # --- discovery documents -------------------------------------------------------------------------------

    def api_versions(self, server_address: str) -> dict:
        return {"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}

    def group_doc(self, group: str) -> dict:
        gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in self.versions(group)]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": gvs, "preferredVersion": gvs[0]}

    def group_list(self) -> dict:
        groups = []
        for group in self.groups:
            doc = self.group_doc(group)
            groups.append({k: doc[k] for k in ("name", "versions", "preferredVersion")})
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}

    def subresources(self, res: Resource) -> dict[str, tuple[str, tuple[str, ...], tuple[str, str] | None]]:
        """name -> (kind, verbs, (group, version) when not the resource's own)."""
        subs = dict(SUBRESOURCES.get(res.key, {}))
        if res.status:
            subs["status"] = (res.kind, ("get", "patch", "update"), None)
        if res.scale:
            subs["scale"] = ("Scale", ("get", "patch", "update"), ("autoscaling", "v1"))
        return subs

    def resource_list(self, group: str, version: str) -> dict:
        resources = []
        for r in CORE if not group else [r for r in self.groups[group] if r.version == version]:
            entry = {"name": r.plural, "singularName": r.kind.lower(), "namespaced": r.namespaced, "kind": r.kind,
                     "verbs": list(r.verbs)}
            if r.short:
                entry["shortNames"] = list(r.short)
            if r.categories:
                entry["categories"] = list(r.categories)
            resources.append(entry)
            for sub, (kind, verbs, other) in self.subresources(r).items():
                sub_entry = {"name": f"{r.plural}/{sub}", "singularName": "", "namespaced": r.namespaced}
                if other:
                    sub_entry["group"], sub_entry["version"] = other
                resources.append({**sub_entry, "kind": kind, "verbs": list(verbs)})
        resources.sort(key=lambda e: e["name"])
        gv = f"{group}/{version}" if group else version
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}
