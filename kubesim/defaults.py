"""Defaulting the real API server applies on create and update, so objects read back the way they would from a
real cluster (restartPolicy, imagePullPolicy, Job completions/parallelism/backoffLimit, Service ports, ...)."""


def _image_pull_policy(image: str) -> str:
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return "IfNotPresent"
    return "Always" if ":" not in tail or tail.endswith(":latest") else "IfNotPresent"


def pod_spec(spec: dict, restart_policy: str = "Always") -> None:
    spec.setdefault("restartPolicy", restart_policy)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    for field in ("initContainers", "containers"):
        for c in spec.get(field) or []:
            if not isinstance(c, dict):
                continue
            c.setdefault("imagePullPolicy", _image_pull_policy(c.get("image") or ""))
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            resources = c.setdefault("resources", {})
            limits = resources.get("limits") or {}
            if limits:  # requests default to limits, as the real defaulter does
                resources["requests"] = {**limits, **(resources.get("requests") or {})}
            for port in c.get("ports") or []:
                port.setdefault("protocol", "TCP")


def _template(spec: dict, restart_policy: str) -> dict:
    template = spec.setdefault("template", {})
    template.setdefault("metadata", {})
    pod_spec(template.setdefault("spec", {}), restart_policy)
    return template


def job(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
        spec["parallelism"] = 1
    spec.setdefault("parallelism", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")
    template = _template(spec, "Always")  # then rejected by validation, exactly as the real server does
    uid, name = obj["metadata"]["uid"], obj["metadata"]["name"]
    if not spec.get("selector"):
        spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = template["metadata"].setdefault("labels", {})
    labels.setdefault("batch.kubernetes.io/controller-uid", uid)
    labels.setdefault("batch.kubernetes.io/job-name", name)
    labels.setdefault("controller-uid", uid)
    labels.setdefault("job-name", name)


def deployment(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    _template(spec, "Always")


def replicaset(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    _template(spec, "Always")


def service(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if spec["type"] == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))


def knative_service(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    template = spec.setdefault("template", {})
    template.setdefault("metadata", {})
    tspec = template.setdefault("spec", {})
    tspec.setdefault("containerConcurrency", 0)
    tspec.setdefault("timeoutSeconds", 300)
    tspec.setdefault("enableServiceLinks", False)
    containers = tspec.get("containers") or []
    for c in containers:
        if isinstance(c, dict):
            c.setdefault("name", "user-container")
            c.setdefault("resources", {})
            c.setdefault("readinessProbe", {"successThreshold": 1, "tcpSocket": {"port": 0}})
    spec.setdefault("traffic", [{"latestRevision": True, "percent": 100}])


def namespace(obj: dict) -> None:
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])


def pvc(obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("volumeMode", "Filesystem")
    spec.setdefault("storageClassName", "standard")


def pod(obj: dict) -> None:
    pod_spec(obj.setdefault("spec", {}))


APPLY = {"pods": pod, "jobs.batch": job, "deployments.apps": deployment, "replicasets.apps": replicaset,
         "services": service, "services.serving.knative.dev": knative_service, "namespaces": namespace,
         "persistentvolumeclaims": pvc}


def qos_class(spec: dict) -> str:
    containers = spec.get("containers") or []
    requests = [((c.get("resources") or {}).get("requests") or {}) for c in containers]
    limits = [((c.get("resources") or {}).get("limits") or {}) for c in containers]
    pairs = list(zip(requests, limits, strict=True))
    if not any(req.get("cpu") or req.get("memory") or lim.get("cpu") or lim.get("memory") for req, lim in pairs):
        return "BestEffort"
    guaranteed = all(lim.get("cpu") and lim.get("memory") and req.get("cpu", lim["cpu"]) == lim["cpu"]
                     and req.get("memory", lim["memory"]) == lim["memory"] for req, lim in pairs)
    return "Guaranteed" if guaranteed else "Burstable"


def initial_status(res_key: str, obj: dict) -> dict | None:
    if res_key == "pods":
        return {"phase": "Pending", "qosClass": qos_class(obj.get("spec") or {})}
    if res_key == "namespaces":
        return {"phase": "Active"}
    if res_key == "persistentvolumeclaims":
        return {"phase": "Pending"}
    if res_key in ("services", "ingresses.networking.k8s.io"):
        return {"loadBalancer": {}}
    if res_key == "replicasets.apps":
        return {"replicas": 0}  # not omitempty in the Go type, required by typed clients
    if res_key == "horizontalpodautoscalers.autoscaling":
        return {"desiredReplicas": 0}
    if res_key in ("jobs.batch", "deployments.apps", "services.serving.knative.dev"):
        return {}
    return None
