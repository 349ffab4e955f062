"""Pod-level pieces of a workload's manifests: container, compute, scheduling, security.

Pure functions over the Run:ai-shaped spec. The spec was validated by workloads.specs;
these helpers still tolerate missing keys, because profiles and Kit streams build specs internally.
Fields that do not apply to the chosen `gpuRequestType` are ignored, and a `secret` wins over a `value`.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, DecimalException

from studio.clusters.quantities import parse_quantity

MAIN_CONTAINER = "main"
# Run:ai's `preemptibility` as its priority classes: `train` may be preempted, `build` may not.
PREEMPTIBILITY_CLASS = {"preemptible": "train", "non-preemptible": "build"}
# Run:ai's default priority class by workload kind; a spec may name its own.
DEFAULT_PRIORITY_CLASS = {"training": "train", "workspace": "build", "inference": "inference", "stream": "build",
                          "distributed": "train"}


def priority_class_of(kind: str, spec: dict | None) -> str:
    """The workload's Run:ai priority class: the spec's own, else its `preemptibility`'s, else its kind's."""
    spec = spec or {}
    return (spec.get("priorityClass") or PREEMPTIBILITY_CLASS.get(spec.get("preemptibility") or "")
            or DEFAULT_PRIORITY_CLASS.get(kind, "train"))
NODE_TYPE_LABEL = "run.ai/type"
NODE_POOL_LABEL = "run.ai/node-pool"
DEFAULT_NODE_POOL = "default"
GPU_RESOURCE = "nvidia.com/gpu"


# --- small conversions -------------------------------------------------------------------------------

def number_text(value) -> str:
    """1 -> "1", 0.5 -> "0.5", 2.0 -> "2": Kubernetes quantities and Knative annotation numbers."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def cpu_quantity(value) -> str:
    """Cores as a canonical quantity: 0.5 -> "500m", 2 -> "2"; strings ("250m") pass through."""
    if isinstance(value, str):
        return value
    if float(value).is_integer():
        return str(int(value))
    return f"{round(float(value) * 1000)}m"


def mebibytes(quantity) -> int:
    """A memory quantity in whole MiB, rounded up so a request is never cut below what was asked."""
    try:
        value = parse_quantity(quantity) if isinstance(quantity, str) else Decimal(str(quantity))
    except (ValueError, TypeError, DecimalException):
        return 0
    return max(math.ceil(value / (1024 * 1024)), 0)


def enabled(items) -> list[dict]:
    """Entries of a Run:ai list that are dicts and not `exclude: true`."""
    return [item for item in items or () if isinstance(item, dict) and not item.get("exclude")]


def name_value_map(items) -> dict[str, str]:
    """Run:ai `[{name, value, exclude}]` (labels, annotations) -> a Kubernetes string map."""
    return {str(i["name"]): "" if i.get("value") is None else str(i["value"]) for i in enabled(items) if i.get("name")}


def split_args(args) -> list[str]:
    if isinstance(args, list):
        return [str(a) for a in args]
    try:
        return shlex.split(args)
    except ValueError:  # unbalanced quotes: keep the words rather than refuse a validated spec
        return args.split()


# --- container ---------------------------------------------------------------------------------------

def env_vars(spec: dict) -> list[dict]:
    env = []
    for item in enabled(spec.get("environmentVariables")):
        if not item.get("name"):
            continue
        secret, config_map, field_ref = item.get("secret"), item.get("configMap"), item.get("podFieldRef")
        if not (isinstance(secret, dict) and secret.get("name")):
            secret = item.get("userCredential")  # a user's credential is a secret of the namespace too
        if isinstance(secret, dict) and secret.get("name"):
            ref = {"secretKeyRef": {"name": secret["name"], "key": secret.get("key") or item["name"]}}
            env.append({"name": item["name"], "valueFrom": ref})
        elif isinstance(config_map, dict) and config_map.get("name"):
            ref = {"configMapKeyRef": {"name": config_map["name"], "key": config_map.get("key") or item["name"]}}
            env.append({"name": item["name"], "valueFrom": ref})
        elif isinstance(field_ref, dict) and field_ref.get("path"):
            env.append({"name": item["name"], "valueFrom": {"fieldRef": {"fieldPath": field_ref["path"]}}})
        else:
            env.append({"name": item["name"], "value": "" if item.get("value") is None else str(item["value"])})
    return env


def probe(raw: dict | None, *, knative: bool) -> dict | None:
    if not isinstance(raw, dict):
        return None
    handler = (raw.get("handler") or {}).get("httpGet")
    if not isinstance(handler, dict):
        return None
    http_get = {k: handler[k] for k in ("path", "host", "scheme") if handler.get(k)}
    if not knative:  # Knative probes its one serving port itself and refuses any other port
        if not handler.get("port"):
            return None
        http_get["port"] = handler["port"]
    keys = ("initialDelaySeconds", "periodSeconds", "timeoutSeconds", "successThreshold", "failureThreshold")
    return {"httpGet": http_get, **{k: raw[k] for k in keys if isinstance(raw.get(k), int)}}


def container_ports(spec: dict, *, knative: bool) -> list[dict]:
    serving = spec.get("servingPort") if isinstance(spec.get("servingPort"), dict) else {}
    numbers = [serving.get("container")] + [p.get("container") for p in enabled(spec.get("ports"))]
    numbers += [url.get("container") for url in enabled(spec.get("exposedUrls"))]
    numbers = list(dict.fromkeys(n for n in numbers if n))
    if not knative:  # a Kit stream's media port is UDP (its spec says so)
        udp = {p.get("container") for p in enabled(spec.get("ports")) if p.get("protocol") == "UDP"}
        return [{"containerPort": n, "protocol": "UDP"} if n in udp else {"containerPort": n} for n in numbers]
    # Knative serves exactly one port, named for its protocol (h2c: gRPC over cleartext HTTP/2).
    name = "h2c" if serving.get("protocol") == "grpc" else "http1"
    return [{"containerPort": numbers[0], "name": name}] if numbers else []


def container(spec: dict, *, resources: dict, mounts: list[dict], devices: list[dict], env: list[dict],
              security_context: dict, knative: bool) -> dict:
    c: dict = {"name": MAIN_CONTAINER, "image": spec.get("image") or ""}
    if spec.get("imagePullPolicy"):
        c["imagePullPolicy"] = spec["imagePullPolicy"]
    command = spec.get("command")
    if command:
        c["command"] = [command] if isinstance(command, str) else [str(part) for part in command]
    if spec.get("args"):
        c["args"] = split_args(spec["args"])
    if spec.get("workingDir"):
        c["workingDir"] = spec["workingDir"]
    if not knative:  # Knative refuses interactive terminals
        for key in ("tty", "stdin"):
            if isinstance(spec.get(key), bool):
                c[key] = spec[key]
    optional = {
        "env": env,
        "ports": container_ports(spec, knative=knative),
        "resources": resources,
        "volumeMounts": mounts,
        "volumeDevices": devices,
        "securityContext": security_context,
    }
    probes = spec.get("probes") if isinstance(spec.get("probes"), dict) else {}
    for kind in ("readiness", "liveness", "startup"):
        optional[f"{kind}Probe"] = probe(probes.get(kind), knative=knative)
    c.update({k: v for k, v in optional.items() if v})
    return c


# --- compute -----------------------------------------------------------------------------------------

@dataclass
class Compute:
    resources: dict
    pod_annotations: dict
    shared_gpu: bool  # the GPU-sharing scheduler must place the pod
    large_shm: bool


def compute(spec: dict) -> Compute:
    comp = spec.get("compute") if isinstance(spec.get("compute"), dict) else {}
    requests, limits, annotations = {}, {}, {}
    for key, target, convert in (
        ("cpuCoreRequest", requests, cpu_quantity), ("cpuCoreLimit", limits, cpu_quantity),
        ("cpuMemoryRequest", requests, number_text), ("cpuMemoryLimit", limits, number_text),
    ):
        if comp.get(key) is not None:
            target["cpu" if key.startswith("cpuCore") else "memory"] = convert(comp[key])
    request_type = comp.get("gpuRequestType")
    devices = comp.get("gpuDevicesRequest")
    if devices is None:
        devices = 1 if request_type in ("portion", "memory", "migProfile") else 0
    shared = False
    if devices and request_type == "portion" and comp.get("gpuPortionRequest") is not None:
        shared = True
        annotations["gpu-fraction"] = number_text(comp["gpuPortionRequest"])
        if comp.get("gpuPortionLimit") not in (None, comp["gpuPortionRequest"]):
            annotations["gpu-fraction-limit"] = number_text(comp["gpuPortionLimit"])
        if devices > 1:
            annotations["gpu-fraction-num-devices"] = str(devices)
    elif devices and request_type == "memory" and comp.get("gpuMemoryRequest") is not None:
        shared = True
        annotations["gpu-memory"] = str(mebibytes(comp["gpuMemoryRequest"]))
        if comp.get("gpuMemoryLimit") not in (None, comp["gpuMemoryRequest"]):
            annotations["gpu-memory-limit"] = str(mebibytes(comp["gpuMemoryLimit"]))
    elif devices and request_type == "migProfile" and comp.get("migProfile"):
        limits[f"nvidia.com/mig-{comp['migProfile']}"] = str(devices)
    elif devices:
        limits[GPU_RESOURCE] = str(devices)
    for item in enabled(comp.get("extendedResources")):
        if item.get("resource") and item.get("quantity") is not None:
            limits[item["resource"]] = number_text(item["quantity"])
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return Compute(resources, annotations, shared, bool(comp.get("largeShmRequest")))


# --- scheduling and security -------------------------------------------------------------------------

def pool_terms(names: list[str], pools: Mapping[str, tuple[str, str]] | None) -> list[list[dict]]:
    """The node requirements that keep a pod in one of the pools `names`, one list per pool (Kubernetes ORs them);
    [] when any node will do. `pools` maps each of the cluster's pools to its node label (key, value); the default
    pool's key is "" — it holds every node that no other pool's label names. Without `pools` (the cluster's pools
    unknown) a pool is Run:ai's `run.ai/node-pool=<name>`, and naming the default pool means any node."""
    if pools is None:
        named = [n for n in names if n != DEFAULT_NODE_POOL]
        return [[{"key": NODE_POOL_LABEL, "operator": "In", "values": named}]] if named == names and named else []
    terms = []
    for name in names:
        key, value = pools.get(name) or (NODE_POOL_LABEL, name)
        if key:
            terms.append([{"key": key, "operator": "In", "values": [value]}])
            continue
        others: dict[str, list[str]] = {}
        for other, (other_key, other_value) in pools.items():
            if other != name and other_key and other_value not in others.setdefault(other_key, []):
                others[other_key].append(other_value)
        if not others:
            return []  # the default pool is the only one: every node
        terms.append([{"key": k, "operator": "NotIn", "values": sorted(v)} for k, v in sorted(others.items())])
    return terms


def scheduling(spec: dict, *, selector: dict, node_pools: Mapping[str, tuple[str, str]] | None = None) -> dict:
    """nodeSelector, affinity, tolerations and priority class of the pod spec; `node_pools` the cluster's pools'
    labels (pool_terms)."""
    pod: dict = {}
    node_selector = dict(spec["nodeSelector"]) if isinstance(spec.get("nodeSelector"), dict) else {}
    if spec.get("nodeType"):
        node_selector[NODE_TYPE_LABEL] = str(spec["nodeType"])
    if node_selector:
        pod["nodeSelector"] = node_selector
    affinity = {}
    in_pools = pool_terms([str(p) for p in spec.get("nodePools") or () if p], node_pools)
    if in_pools:
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": term} for term in in_pools]}}
    pod_affinity = spec.get("podAffinity") if isinstance(spec.get("podAffinity"), dict) else {}
    if pod_affinity.get("key"):
        term = {"labelSelector": {"matchLabels": dict(selector)}, "topologyKey": str(pod_affinity["key"])}
        if pod_affinity.get("type") == "Preferred":
            rule = {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": term}]}
        else:
            rule = {"requiredDuringSchedulingIgnoredDuringExecution": [term]}
        affinity["podAffinity"] = rule
    required = spec.get("nodeAffinityRequired") if isinstance(spec.get("nodeAffinityRequired"), dict) else {}
    terms = [t for t in required.get("nodeSelectorTerms") or () if isinstance(t, dict)]
    if terms:
        # Kubernetes ORs the terms: each of the user's terms is held to each pool, so a pod stays in its pools
        # whichever term matches.
        terms = [{"matchExpressions": [_requirement(e) for e in t.get("matchExpressions") or ()] + pool}
                 for t in terms for pool in in_pools or [[]]]
        affinity["nodeAffinity"] = {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}
    if affinity:
        pod["affinity"] = affinity
    tolerations = [toleration(t) for t in enabled(spec.get("tolerations"))]
    if tolerations:
        pod["tolerations"] = tolerations
    if spec.get("priorityClass"):
        pod["priorityClassName"] = str(spec["priorityClass"])
    elif spec.get("preemptibility") in PREEMPTIBILITY_CLASS:
        # Run:ai's classes: `train` may be preempted, `build` not. The cluster must define them (Run:ai's do).
        pod["priorityClassName"] = PREEMPTIBILITY_CLASS[spec["preemptibility"]]
    secrets = [{"name": str(s["name"])} for s in enabled(spec.get("imagePullSecrets")) if s.get("name")]
    if secrets:
        pod["imagePullSecrets"] = secrets
    if isinstance(spec.get("terminationGracePeriodSeconds"), int):
        pod["terminationGracePeriodSeconds"] = spec["terminationGracePeriodSeconds"]
    return pod


def _requirement(raw: dict) -> dict:
    requirement = {"key": str(raw.get("key") or ""), "operator": raw.get("operator") or "In"}
    if raw.get("values"):
        requirement["values"] = [str(v) for v in raw["values"]]
    return requirement


def toleration(raw: dict) -> dict:
    """Run:ai's `name` is only a label for the UI; `seconds` only means something for NoExecute."""
    operator = raw.get("operator") or "Equal"
    tol = {"operator": operator}
    if raw.get("key"):
        tol["key"] = str(raw["key"])
    if operator == "Equal" and raw.get("value") is not None:
        tol["value"] = str(raw["value"])
    if raw.get("effect") and raw["effect"] != "Any":  # latest's Any: no effect, which Kubernetes matches to all
        tol["effect"] = raw["effect"]
        if raw["effect"] == "NoExecute" and isinstance(raw.get("seconds"), int):
            tol["tolerationSeconds"] = raw["seconds"]
    return tol


def _groups(value) -> list[int]:
    parts = value.split(",") if isinstance(value, str) else value or ()
    return [int(p) for p in parts if str(p).strip().isdigit()]


def security(spec: dict, *, knative: bool) -> tuple[dict, dict, dict]:
    """(pod securityContext, container securityContext, other pod fields).

    uid/gid/supplementalGroups apply with `uidGidSource: custom`, and with "fromIdpToken", whose ids the submit
    wrote from the user's identity provider (studio.iam.pod_identity); "fromTheImage" keeps the image's user.
    They sit on the pod so the git init container writes files the main container owns.
    """
    sec = spec.get("security") if isinstance(spec.get("security"), dict) else {}
    pod_ctx, ctr_ctx, pod_fields = {}, {}, {}
    if sec.get("uidGidSource") in ("custom", "fromIdpToken"):
        for src, dst in (("runAsUid", "runAsUser"), ("runAsGid", "runAsGroup")):
            if isinstance(sec.get(src), int):
                pod_ctx[dst] = sec[src]
        groups = _groups(sec.get("supplementalGroups"))
        if groups:
            pod_ctx["supplementalGroups"] = groups
    seccomp = sec.get("seccompProfileType") or (sec.get("seccompProfile") or {}).get("type")
    if seccomp:
        pod_ctx["seccompProfile"] = {"type": seccomp}
    # On the main container only: an init container running as root (git) must not trip runAsNonRoot.
    for key in ("runAsNonRoot", "readOnlyRootFilesystem", "allowPrivilegeEscalation"):
        if isinstance(sec.get(key), bool):
            ctr_ctx[key] = sec[key]
    caps = sec.get("capabilities")
    add = caps.get("add") if isinstance(caps, dict) else caps
    drop = caps.get("drop") if isinstance(caps, dict) else None
    if sec.get("runAsNonRoot") is True and sec.get("allowPrivilegeEscalation") is not True:
        # A non-root process has no use for the runtime's default capabilities (no ambient ones) nor for
        # setuid escalation: dropping both is what Pod Security "restricted" asks of every container.
        ctr_ctx["allowPrivilegeEscalation"] = False
        drop = ["ALL"]
    if add or drop:
        ctr_ctx["capabilities"] = {k: [str(c) for c in v] for k, v in (("add", add), ("drop", drop)) if v}
    if not knative:  # Knative has no host namespaces
        for src, dst in (("hostIpc", "hostIPC"), ("hostIPC", "hostIPC"), ("hostNetwork", "hostNetwork")):
            if isinstance(sec.get(src), bool):
                pod_fields[dst] = sec[src]
    # No service-account token unless the spec asks (and its policy let it): Kubernetes mounts the namespace's
    # default one otherwise. Knative refuses `true` (it takes only false); there, asking leaves Kubernetes' default.
    if sec.get("automountServiceAccountToken") is not True:
        pod_fields["automountServiceAccountToken"] = False
    elif not knative:
        pod_fields["automountServiceAccountToken"] = True
    return pod_ctx, ctr_ctx, pod_fields
