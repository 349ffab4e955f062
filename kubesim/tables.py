"""Server-side printing (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`), which `kubectl get` asks for:
the columns kubectl shows for the kinds the product uses, Name and Age for the rest."""

import time

from .store import parse_rfc3339


def wanted(accept: str) -> bool:
    return "as=Table" in accept and "g=meta.k8s.io" in accept


def _age(obj) -> str:
    created = obj["metadata"].get("creationTimestamp")
    if not created:
        return "<unknown>"
    seconds = max(0, int(time.time() - parse_rfc3339(created)))
    for unit, size, below in (("s", 1, 120), ("m", 60, 7200), ("h", 3600, 172800)):
        if seconds < below:
            return f"{seconds // size}{unit}"
    return f"{seconds // 86400}d"


def _pod(obj):
    status = obj.get("status") or {}
    statuses = status.get("containerStatuses") or []
    reason = status.get("reason") or status.get("phase") or "Pending"
    for cs in statuses:
        state = cs.get("state") or {}
        if state.get("waiting", {}).get("reason"):
            reason = state["waiting"]["reason"]
        elif state.get("terminated"):
            reason = state["terminated"].get("reason") or reason
    if obj["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    ready = sum(1 for cs in statuses if cs.get("ready"))
    total = len((obj.get("spec") or {}).get("containers") or [])
    restarts = sum(cs.get("restartCount", 0) for cs in statuses)
    return [f"{ready}/{total}", reason, restarts, _age(obj), status.get("podIP") or "<none>",
            obj["spec"].get("nodeName") or "<none>"]


def _job(obj):
    status, spec = obj.get("status") or {}, obj.get("spec") or {}
    conditions = {c["type"]: c["status"] for c in status.get("conditions") or []}
    state = next((t for t in ("Complete", "Failed", "Suspended") if conditions.get(t) == "True"), "Running")
    return [state, f"{status.get('succeeded', 0)}/{spec.get('completions', 1)}", _age(obj)]


def _deployment(obj):
    status = obj.get("status") or {}
    return [f"{status.get('readyReplicas', 0)}/{obj['spec'].get('replicas', 1)}", status.get("updatedReplicas", 0),
            status.get("availableReplicas", 0), _age(obj)]


def _service(obj):
    spec = obj.get("spec") or {}
    ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    external = ",".join(i.get("ip") or i.get("hostname", "") for i in ingress) or (
        "<pending>" if spec.get("type") == "LoadBalancer" else "<none>")
    ports = ",".join(f"{p['port']}{':' + str(p['nodePort']) if p.get('nodePort') else ''}/{p.get('protocol', 'TCP')}"
                     for p in spec.get("ports") or [])
    return [spec.get("type"), spec.get("clusterIP"), external, ports or "<none>", _age(obj)]


def _knative(obj):
    status = obj.get("status") or {}
    ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
    return [status.get("url", ""), status.get("latestCreatedRevisionName", ""),
            status.get("latestReadyRevisionName", ""), ready.get("status", "Unknown"), ready.get("reason", "")]


def _node(obj):
    ready = next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"), {})
    version = ((obj.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion", "")
    return ["Ready" if ready.get("status") == "True" else "NotReady", "<none>", _age(obj), version]


def _namespace(obj):
    return [(obj.get("status") or {}).get("phase", "Active"), _age(obj)]


def _event(obj):
    involved = obj.get("involvedObject") or {}
    last = obj.get("lastTimestamp") or obj["metadata"].get("creationTimestamp")
    return [_age({"metadata": {"creationTimestamp": last}}), obj.get("type", ""), obj.get("reason", ""),
            f"{(involved.get('kind') or '').lower()}/{involved.get('name', '')}", obj.get("message", "")]


def _data_count(obj):
    return len(obj.get("data") or {}) + len(obj.get("binaryData") or {})


def _config_map(obj):
    return [_data_count(obj), _age(obj)]


def _secret(obj):
    return [obj.get("type") or "Opaque", _data_count(obj), _age(obj)]


def _service_account(obj):
    return [len(obj.get("secrets") or []), _age(obj)]


COLUMNS = {
    "configmaps": (["Data", "Age"], _config_map),
    "secrets": (["Type", "Data", "Age"], _secret),
    "serviceaccounts": (["Secrets", "Age"], _service_account),
    "events": (["Last Seen", "Type", "Reason", "Object", "Message"], _event),
    "pods": (["Ready", "Status", "Restarts", "Age", "IP", "Node"], _pod),
    "jobs.batch": (["Status", "Completions", "Age"], _job),
    "deployments.apps": (["Ready", "Up-to-date", "Available", "Age"], _deployment),
    "services": (["Type", "Cluster-IP", "External-IP", "Port(s)", "Age"], _service),
    "services.serving.knative.dev": (["URL", "LatestCreated", "LatestReady", "Ready", "Reason"], _knative),
    "nodes": (["Status", "Roles", "Age", "Version"], _node),
    "namespaces": (["Status", "Age"], _namespace),
}
_TYPES = {"Restarts": "integer", "Up-to-date": "integer", "Available": "integer"}
_WIDE = {"IP", "Node"}


def convert(res, body: dict, include_object: str = "Metadata") -> dict:
    names, cells = COLUMNS.get(res.key, (["Age"], lambda o: [_age(o)]))
    name = {"name": "Name", "type": "string", "format": "name", "description": "Name", "priority": 0}
    columns = [{"name": n, "type": _TYPES.get(n, "string"), "format": "", "description": n,
                "priority": 1 if n in _WIDE else 0} for n in names]
    items = body["items"] if body.get("kind", "").endswith("List") and "items" in body else [body]
    if res.key == "events":  # kubectl shows events by time and reason; their names are a wide-only column
        columns.append({**name, "priority": 1})
        rows = [{"cells": [*cells(o), o["metadata"]["name"]], "object": _row_object(res, o, include_object)}
                for o in items]
    else:
        columns.insert(0, name)
        rows = [{"cells": [o["metadata"]["name"], *cells(o)], "object": _row_object(res, o, include_object)}
                for o in items]
    meta = {k: v for k, v in (body.get("metadata") or {}).items() if k in ("resourceVersion", "continue")} \
        if "items" in body else {"resourceVersion": body["metadata"].get("resourceVersion", "")}
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": columns,
            "rows": rows}



def _row_object(res, obj: dict, include: str):
    """includeObject=Object (kubectl --sort-by asks for it), None, or the default Metadata."""
    if include == "Object":
        return {"apiVersion": res.api_version, "kind": res.kind, **obj}
    if include == "None":
        return None
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]}
