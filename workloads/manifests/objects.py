"""The objects of the built-in kinds (training, workspace, inference, stream), their names and labels. Pure:
plain dicts in, plain dicts out. The package (`workloads.manifests`) chooses between these and the Kubeflow jobs
of `distributed`.

Names are deterministic (`object_name`), so a repeated create answers 409 AlreadyExists and the caller
adopts the object. Every object and pod carries `workload_labels`, so the sync can LIST by label.
Pod-level pieces live in `parts` (container, compute, scheduling, security) and `storage` (volumes, claims,
git init containers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from workloads.manifests import parts, storage

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "paas-studio"
WORKLOAD_ID_LABEL = "paas-studio/workload-id"
PROJECT_LABEL = "paas-studio/project"
KIND_LABEL = "paas-studio/kind"

TERMINATE_AFTER_PREEMPTION_ANNOTATION = "paas-studio/terminate-after-preemption"
URL_ACCESS_ANNOTATION = "paas-studio/exposed-url-access"
CATEGORY_ANNOTATION = "paas-studio/category"
RELATED_URLS_ANNOTATION = "paas-studio/related-urls"
KNATIVE_VISIBILITY_LABEL = "networking.knative.dev/visibility"
KNATIVE_PROGRESS_DEADLINE = "serving.knative.dev/progress-deadline"
AUTOSCALING_METRIC_ANNOTATION = "paas-studio/autoscaling-metric"
AUTOSCALING_TARGET_ANNOTATION = "paas-studio/autoscaling-target"
KNATIVE_API = "serving.knative.dev/v1"
KNATIVE_AUTOSCALING = "autoscaling.knative.dev/"
# Run:ai autoscaling fields (latest) -> Knative autoscaling annotations, with their unit.
KNATIVE_SCALING_EXTRAS = (("initialReplicas", "initial-scale", ""), ("activationReplicas", "activation-scale", ""),
                          ("metricThresholdPercentage", "target-utilization-percentage", ""),
                          ("scaleDownDelaySeconds", "scale-down-delay", "s"))
# Knative has no latency metric: latency scales on concurrency with Knative's default target, and the
# requested metric and threshold (ms) are kept in the paas-studio/autoscaling-* annotations.
KNATIVE_METRICS = {"throughput": "rps", "concurrency": "concurrency", "latency": "concurrency"}
# Without Knative the HPA reads per-pod custom metrics (e.g. served by prometheus-adapter) by these names.
HPA_METRICS = {
    "throughput": "requests_per_second",
    "concurrency": "concurrent_requests",
    "latency": "request_latency_milliseconds",
}
HOME_DIR = "/home/studio"
NAME_LIMIT = 52  # room for the suffixes controllers add to pod names
SERVICE_SUFFIX = {"ClusterIP": "cip", "NodePort": "np", "LoadBalancer": "lb"}
KINDS = ("training", "workspace", "inference", "stream", "distributed")
DISTRIBUTED = "distributed"  # distributed.py: Kubeflow Training Operator jobs

JOB = ("batch/v1", "Job")
DEPLOYMENT = ("apps/v1", "Deployment")
KNATIVE_SERVICE = (KNATIVE_API, "Service")
SERVICE = ("v1", "Service")
INGRESS = ("networking.k8s.io/v1", "Ingress")
HPA = ("autoscaling/v2", "HorizontalPodAutoscaler")
PVC = ("v1", "PersistentVolumeClaim")


@dataclass(frozen=True)
class WorkloadRef:
    id: str  # UUID string
    name: str  # workload name (DNS-1123 label, <= 63)
    kind: str  # "training" | "workspace" | "inference" | "stream" | "distributed"
    project: str
    namespace: str  # "studio-<project>"
    suspended: bool = False  # desired phase Stopped
    url_host: str = ""  # the project's host for exposed URLs (`<project>.<EXPOSED_URL_DOMAIN>`), "" for any host


def object_name(ref: WorkloadRef) -> str:
    """`<name>-<first 8 hex of the id>`, the name cut so the whole fits NAME_LIMIT."""
    id8 = ref.id.replace("-", "").lower()[:8]
    return f"{ref.name[: NAME_LIMIT - len(id8) - 1].rstrip('-')}-{id8}"


def workload_labels(ref: WorkloadRef) -> dict[str, str]:
    return {
        MANAGED_BY_LABEL: MANAGED_BY,
        WORKLOAD_ID_LABEL: ref.id,
        PROJECT_LABEL: ref.project,
        KIND_LABEL: ref.kind,
    }


def primary(kind: str, *, knative: bool) -> tuple[str, str]:
    """The object whose status defines the phase of a workload of a built-in kind."""
    if kind == "training":
        return JOB
    if kind == "inference" and knative:
        return KNATIVE_SERVICE
    if kind in KINDS:
        return DEPLOYMENT
    raise ValueError(f"Unknown workload kind {kind!r}.")


def build(ref: WorkloadRef, spec: dict, *, knative: bool, gpu_scheduler: str, node_pools=None) -> list[dict]:
    """Every object of a workload of a built-in kind, ordered for creation: claims, the primary object,
    Services, Ingress, HPA."""
    primary_api = primary(ref.kind, knative=knative)
    knative = primary_api == KNATIVE_SERVICE
    template, claims = pod_template(ref, spec, knative=knative, gpu_scheduler=gpu_scheduler, node_pools=node_pools)
    objects = [claim(ref, spec, c) for c in claims]
    if knative:
        return [*objects, _knative_service(ref, spec, template)]
    if primary_api == JOB:
        # A Job's pods may not restart Always (Run:ai latest's value): the container restarts in place on failure.
        template["spec"]["restartPolicy"] = {"Always": "OnFailure"}.get(spec.get("restartPolicy"),
                                                                        spec.get("restartPolicy") or "Never")
        objects.append(_job(ref, spec, template))
    else:
        objects.append(_deployment(ref, spec, template))
    service_objects = services(ref, spec)
    objects += service_objects
    ingress_object = ingress(ref, spec, service_objects)
    if ingress_object:
        objects.append(ingress_object)
    if ref.kind == "inference":
        hpa = _hpa(ref, spec)
        objects += [hpa] if hpa else []
    return objects


# --- metadata ----------------------------------------------------------------------------------------

def _selector(ref: WorkloadRef) -> dict[str, str]:
    return {WORKLOAD_ID_LABEL: ref.id}


def _labels(ref: WorkloadRef, spec: dict) -> dict[str, str]:
    # Ours win: selectors and the sync depend on them.
    return {**parts.name_value_map(spec.get("labels")), **workload_labels(ref)}


def metadata(ref: WorkloadRef, spec: dict, name: str, annotations: dict | None = None) -> dict:
    meta = {"name": name, "namespace": ref.namespace, "labels": _labels(ref, spec)}
    annotations = {**parts.name_value_map(spec.get("annotations")), **(annotations or {})}
    if annotations:
        meta["annotations"] = annotations
    return meta


def k8s_object(api_kind: tuple[str, str], metadata: dict, spec: dict) -> dict:
    return {"apiVersion": api_kind[0], "kind": api_kind[1], "metadata": metadata, "spec": spec}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def workload_annotations(spec: dict) -> dict[str, str]:
    if isinstance(spec.get("terminateAfterPreemption"), bool):
        return {TERMINATE_AFTER_PREEMPTION_ANNOTATION: str(spec["terminateAfterPreemption"]).lower()}
    return {}


def _description_annotations(spec: dict) -> dict[str, str]:
    """Run:ai's descriptive fields, kept on the objects for whoever looks at the cluster: the category and
    the related URLs (links a user attached to the workload)."""
    annotations = {}
    if spec.get("category"):
        annotations[CATEGORY_ANNOTATION] = str(spec["category"])
    related = [{k: u[k] for k in ("name", "type", "url") if u.get(k)} for u in parts.enabled(spec.get("relatedUrls"))]
    if related:
        annotations[RELATED_URLS_ANNOTATION] = json.dumps(related, sort_keys=True)
    return annotations


def _url_access(spec: dict) -> dict[str, str]:
    """Who may open each exposed URL (and an inference's serving port), by container port, for the
    authenticating proxy in front."""
    access = {}
    serving = spec.get("servingPort") if isinstance(spec.get("servingPort"), dict) else {}
    for url in [*parts.enabled(spec.get("exposedUrls")), serving]:
        users, groups = url.get("authorizedUsers") or [], url.get("authorizedGroups") or []
        kind = url.get("authorizationType")
        if url.get("container") and (users or groups or kind):
            entry = {"users": list(users), "groups": list(groups)}
            access[str(url["container"])] = {**entry, "type": kind} if kind else entry
    return {URL_ACCESS_ANNOTATION: json.dumps(access, sort_keys=True)} if access else {}


# --- pod template ------------------------------------------------------------------------------------

def pod_template(ref: WorkloadRef, spec: dict, *, knative: bool, gpu_scheduler: str,
                 node_pools=None) -> tuple[dict, list[dict]]:
    """(pod template, claims to create) shared by Job, Deployment and Knative Service; `node_pools` the cluster's
    pools' node labels (parts.pool_terms)."""
    comp = parts.compute(spec)
    st = storage.storage(spec, base_name=object_name(ref), large_shm=comp.large_shm)
    if spec.get("tlsSecret"):  # Kit streams: the profile's TLS certificate
        st.add({"name": "tls", "secret": {"secretName": str(spec["tlsSecret"])}}, "/etc/tls", read_only=True)
    env = parts.env_vars(spec)
    _home_dir(spec, st, env)
    storage.unique_mounts(st)
    pod_ctx, ctr_ctx, pod_fields = parts.security(spec, knative=knative)
    main = parts.container(spec, resources=comp.resources, mounts=st.mounts, devices=st.devices, env=env,
                           security_context=ctr_ctx, knative=knative)
    pod: dict = {"containers": [main]}
    if st.init_containers:
        pod["initContainers"] = st.init_containers
    if st.volumes:
        pod["volumes"] = st.volumes
    if comp.shared_gpu:
        pod["schedulerName"] = gpu_scheduler
    if spec.get("runtimeClassName"):
        pod["runtimeClassName"] = str(spec["runtimeClassName"])
    pod.update(parts.scheduling(spec, selector=_selector(ref), node_pools=node_pools))
    if pod_ctx:
        pod["securityContext"] = pod_ctx
    pod.update(pod_fields)
    meta = {"labels": _labels(ref, spec)}
    annotations = {**parts.name_value_map(spec.get("annotations")), **comp.pod_annotations,
                   **workload_annotations(spec), **_description_annotations(spec)}
    if annotations:
        meta["annotations"] = annotations
    return {"metadata": meta, "spec": pod}, st.claims


def _home_dir(spec: dict, st: storage.Storage, env: list[dict]) -> None:
    """`createHomeDir`: a writable home for the pod's life (Run:ai: "a temporary home directory"), at the
    HOME the spec sets as a plain value, else at HOME_DIR with HOME pointing there. Not at workingDir:
    an emptyDir there would hide the image's files, often the very script to run. A HOME taken from a
    secret cannot be known here, so the image's own home is left alone."""
    if not spec.get("createHomeDir"):
        return
    home = next((e for e in env if e["name"] == "HOME"), None)
    if home is None:
        env.append({"name": "HOME", "value": HOME_DIR})
        path = HOME_DIR
    elif str(home.get("value", "")).startswith("/"):
        path = home["value"]
    else:
        return
    st.add({"name": "home", "emptyDir": {}}, path)


# --- objects -----------------------------------------------------------------------------------------

def claim(ref: WorkloadRef, spec: dict, claim: dict) -> dict:
    return k8s_object(PVC, metadata(ref, spec, claim["name"]), claim["spec"])


def _job(ref: WorkloadRef, spec: dict, template: dict) -> dict:
    body: dict = {k: spec[k] for k in ("completions", "parallelism", "backoffLimit") if _is_int(spec.get(k))}
    if _is_int(spec.get("autoDeletionTimeAfterCompletionSeconds")):
        body["ttlSecondsAfterFinished"] = spec["autoDeletionTimeAfterCompletionSeconds"]
    body.update(suspend=ref.suspended, template=template)
    return k8s_object(JOB, metadata(ref, spec, object_name(ref), workload_annotations(spec)), body)


def _deployment(ref: WorkloadRef, spec: dict, template: dict) -> dict:
    if ref.kind == "inference":
        replicas = max(_autoscaling(spec)[0], 1)
    else:
        replicas = 0 if ref.suspended and ref.kind == "workspace" else 1
    body = {"replicas": replicas, "selector": {"matchLabels": _selector(ref)}, "template": template}
    if ref.kind != "inference":
        # One pod holding GPUs and ReadWriteOnce claims: a rolling update would wait for a second set.
        body["strategy"] = {"type": "Recreate"}
    return k8s_object(DEPLOYMENT, metadata(ref, spec, object_name(ref), workload_annotations(spec)), body)


def _autoscaling(spec: dict) -> tuple[int, int, dict]:
    auto = spec.get("autoscaling") if isinstance(spec.get("autoscaling"), dict) else {}
    low = max(int(auto.get("minReplicas") or 0), 0)
    high = max(int(auto.get("maxReplicas") or 1), low, 1)
    return low, high, auto


def _knative_service(ref: WorkloadRef, spec: dict, template: dict) -> dict:
    low, high, auto = _autoscaling(spec)
    scale = {f"{KNATIVE_AUTOSCALING}min-scale": str(low), f"{KNATIVE_AUTOSCALING}max-scale": str(high)}
    metric, threshold = auto.get("metric"), auto.get("metricThreshold")
    has_target = _positive(threshold)
    if metric and metric not in KNATIVE_METRICS:
        # Run:ai latest's custom metric (a Prometheus metric name): Knative scales on it with its HPA class,
        # reading the per-pod custom metric as the HPA below does.
        scale[f"{KNATIVE_AUTOSCALING}class"] = "hpa.autoscaling.knative.dev"
        scale[f"{KNATIVE_AUTOSCALING}metric"] = metric
        if has_target:
            scale[f"{KNATIVE_AUTOSCALING}target"] = parts.number_text(threshold)
    elif metric in KNATIVE_METRICS:
        scale[f"{KNATIVE_AUTOSCALING}metric"] = KNATIVE_METRICS[metric]
        if metric == "latency":
            scale[AUTOSCALING_METRIC_ANNOTATION] = metric
            if has_target:
                scale[AUTOSCALING_TARGET_ANNOTATION] = parts.number_text(threshold)
        elif has_target:  # Knative refuses a target of 0; the seed sends 0: keep Knative's default
            scale[f"{KNATIVE_AUTOSCALING}target"] = parts.number_text(threshold)
    retention = auto.get("scaleToZeroRetentionSeconds")
    if low == 0 and isinstance(retention, int) and retention > 0:
        scale[f"{KNATIVE_AUTOSCALING}scale-to-zero-pod-retention-period"] = f"{retention}s"
    for key, annotation, unit in KNATIVE_SCALING_EXTRAS:
        if _is_int(auto.get(key)) or (key == "metricThresholdPercentage" and _positive(auto.get(key))):
            scale[f"{KNATIVE_AUTOSCALING}{annotation}"] = f"{parts.number_text(auto[key])}{unit}"
    serving = spec.get("servingConfiguration") if isinstance(spec.get("servingConfiguration"), dict) else {}
    deadline = serving.get("initializationTimeoutSeconds") or auto.get("initializationTimeoutSeconds")
    if _is_int(deadline):
        scale[KNATIVE_PROGRESS_DEADLINE] = f"{deadline}s"
    if _is_int(serving.get("requestTimeoutSeconds")):
        template["spec"]["timeoutSeconds"] = serving["requestTimeoutSeconds"]
    if _is_int(auto.get("concurrencyHardLimit")):
        template["spec"]["containerConcurrency"] = auto["concurrencyHardLimit"]
    template["metadata"].setdefault("annotations", {}).update(scale)
    annotations = {**workload_annotations(spec), **_url_access(spec), **_description_annotations(spec)}
    meta = metadata(ref, spec, object_name(ref), annotations)
    if (spec.get("servingPort") or {}).get("clusterLocalAccessOnly"):
        meta["labels"][KNATIVE_VISIBILITY_LABEL] = "cluster-local"  # no route from outside the cluster
    return k8s_object(KNATIVE_SERVICE, meta, {"template": template})


def _hpa(ref: WorkloadRef, spec: dict) -> dict | None:
    """An HPA only when there is room to scale. It cannot scale to zero, so min 0 becomes 1. With no
    usable metric (none, or a threshold of 0) it falls back to the HPA default, CPU utilisation."""
    low, high, auto = _autoscaling(spec)
    low = max(low, 1)
    if high <= low:
        return None
    body: dict = {"scaleTargetRef": {"apiVersion": DEPLOYMENT[0], "kind": DEPLOYMENT[1], "name": object_name(ref)},
                  "minReplicas": low, "maxReplicas": high}
    metric, threshold = auto.get("metric"), auto.get("metricThreshold")
    if metric and _positive(threshold):  # Run:ai's three by their adapter names; latest's custom ones as named
        target = {"type": "AverageValue", "averageValue": parts.number_text(threshold)}
        body["metrics"] = [{"type": "Pods", "pods": {"metric": {"name": HPA_METRICS.get(metric, metric)},
                                                     "target": target}}]
    return k8s_object(HPA, metadata(ref, spec, object_name(ref)), body)


# --- networking --------------------------------------------------------------------------------------

def _service_ports(ref: WorkloadRef, spec: dict) -> dict[str, list[dict]]:
    """Service ports grouped by Service type (first seen first). Exposed URLs and an inference's serving
    port get a ClusterIP port unless some Service already reaches their container port."""
    groups: dict[str, list[dict]] = {}
    ports = parts.enabled(spec.get("ports"))
    stream_type = (ports[0].get("serviceType") if ports else None) or "ClusterIP"

    def add(svc_type: str, container: int, external=None, protocol: str = "TCP") -> None:
        port = {"port": external or container, "targetPort": container, "protocol": protocol}
        if svc_type == "NodePort" and external:
            port["nodePort"] = external
        group = groups.setdefault(svc_type, [])
        if all((p["port"], p["protocol"]) != (port["port"], protocol) for p in group):
            suffix = "" if protocol == "TCP" else f"-{protocol.lower()}"
            group.append({"name": f"port-{port['port']}{suffix}", **port})

    for item in ports:
        if item.get("container"):
            svc_type = stream_type if ref.kind == "stream" else item.get("serviceType") or "ClusterIP"
            # A Kit stream's media port is UDP (its profile says so); every other port is TCP.
            protocol = item.get("protocol") if ref.kind == "stream" and item.get("protocol") == "UDP" else "TCP"
            add(svc_type, item["container"], item.get("external"), protocol)
    serving = spec.get("servingPort") if isinstance(spec.get("servingPort"), dict) else {}
    extra = [serving.get("container")] + [url.get("container") for url in parts.enabled(spec.get("exposedUrls"))]
    for container in extra:
        reached = any(p["targetPort"] == container for group in groups.values() for p in group)
        if container and not reached:
            add(stream_type if ref.kind == "stream" else "ClusterIP", container)
    return groups


def services(ref: WorkloadRef, spec: dict) -> list[dict]:
    base, services = object_name(ref), []
    stream_annotations = spec.get("serviceAnnotations") if ref.kind == "stream" else None
    for i, (svc_type, ports) in enumerate(_service_ports(ref, spec).items()):
        name = base if i == 0 else f"{base}-{SERVICE_SUFFIX.get(svc_type, str(i))}"
        annotations = {str(k): str(v) for k, v in (stream_annotations or {}).items()}
        body = {"type": svc_type, "selector": _selector(ref), "ports": ports}
        services.append(k8s_object(SERVICE, metadata(ref, spec, name, annotations), body))
    return services


def ingress(ref: WorkloadRef, spec: dict, services: list[dict]) -> dict | None:
    """One Ingress, one path per exposed URL: the URL's own host and path when it gives one (`url`, held to the
    project's subdomain by workloads.specs.references), else `/<project>/<workload>/<container port>`, on the
    project's host (`ref.url_host`) or, with no domain configured, on any host, as Run:ai routes tool URLs."""
    backends = {}
    for svc in services:
        for port in svc["spec"]["ports"]:
            backends.setdefault(port["targetPort"], (svc["metadata"]["name"], port["port"]))
    hosts: dict[str | None, list[dict]] = {}
    for url in parts.enabled(spec.get("exposedUrls")):
        if url.get("container") not in backends:
            continue
        service, port = backends[url["container"]]
        split = urlsplit(str(url["url"])) if url.get("url") else None
        host = (split.hostname if split else None) or ref.url_host or None
        path = (split.path if split else "") or f"/{ref.project}/{ref.name}/{url['container']}"
        paths = hosts.setdefault(host, [])
        if all(p["path"] != path for p in paths):
            backend = {"service": {"name": service, "port": {"number": port}}}
            paths.append({"path": path, "pathType": "Prefix", "backend": backend})
    if not hosts:
        return None
    rules = [{**({"host": host} if host else {}), "http": {"paths": paths}} for host, paths in hosts.items()]
    return k8s_object(INGRESS, metadata(ref, spec, object_name(ref), _url_access(spec)), {"rules": rules})
