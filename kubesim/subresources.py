"""The subresources that are actions rather than views of an object: pod binding and eviction, service-account
tokens, namespace finalize, scale, and the streaming ones (exec, attach, port-forward, proxy) that a simulator cannot
serve. Their answers are the real server's."""

from __future__ import annotations

import base64
import json
import secrets
import time

from . import errors, validation
from .errors import ApiError, bad_request
from .store import jcopy, now_rfc3339

TOKEN_SECONDS = 3600


def get_scale(api, res, namespace, name) -> dict:
    obj = api.get(res, namespace, name)
    selector = (obj["spec"].get("selector") or {})
    labels = selector.get("matchLabels", {} if "matchExpressions" in selector else selector)  # RCs: a plain map
    meta = {k: obj["metadata"][k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,
            "spec": {"replicas": obj["spec"].get("replicas", 1)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0),
                       "selector": ",".join(f"{k}={v}" for k, v in (labels or {}).items())}}


def update_scale(api, res, namespace, name, body, dry_run=False) -> dict:
    rv = ((body or {}).get("metadata") or {}).get("resourceVersion")
    if rv not in (None, "", api.get(res, namespace, name)["metadata"]["resourceVersion"]):
        raise errors.conflict(res, name)
    return set_scale(api, res, namespace, name, body, dry_run)


def set_scale(api, res, namespace, name, scale: dict, dry_run: bool) -> dict:
    replicas = ((scale or {}).get("spec") or {}).get("replicas")
    if not isinstance(replicas, int) or replicas < 0:
        raise errors.invalid(res, name, [validation.cause("spec.replicas", f"Invalid value: {json.dumps(replicas)}"
                                                                           ": must be greater than or equal to 0")])
    obj = jcopy(api.get(res, namespace, name))
    obj["spec"]["replicas"] = replicas
    if not dry_run:
        api.update(res, namespace, name, obj, internal=True)
    return get_scale(api, res, namespace, name)


def _created() -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def bind(api, res, namespace: str, name: str, body: dict) -> tuple[int, dict]:
    """POST pods/<name>/binding (or bindings): set the pod's node, once, as the scheduler does."""
    target = (body or {}).get("target") or {}
    if not target.get("name"):
        raise errors.invalid(api.registry.by_key["bindings"], name,
                             [validation.cause("target.name", "Required value", "FieldValueRequired")])
    pod = api.get(api.registry.by_key["pods"], namespace, name)
    node = pod["spec"].get("nodeName")
    if node:
        raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is '
                                        f"already assigned to node \"{node}\"",
                       {"name": name, "kind": "pods/binding"})
    if pod["metadata"].get("deletionTimestamp"):
        raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on pods/binding "{name}": pod {name} is '
                                        "being deleted, cannot be assigned to a host",
                       {"name": name, "kind": "pods/binding"})
    bound = jcopy(pod)
    bound["spec"]["nodeName"] = target["name"]
    conditions = [c for c in (bound.get("status") or {}).get("conditions") or [] if c.get("type") != "PodScheduled"]
    conditions.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                       "lastTransitionTime": now_rfc3339()})
    bound.setdefault("status", {})["conditions"] = conditions
    api.update(api.registry.by_key["pods"], namespace, name, bound, internal=True)
    api.update(api.registry.by_key["pods"], namespace, name, bound, sub="status", internal=True)
    return 201, _created()


def evict(api, namespace: str, name: str, body: dict) -> tuple[int, dict]:
    """POST pods/<name>/eviction: delete the pod with the eviction's delete options."""
    pods = api.registry.by_key["pods"]
    api.get(pods, namespace, name)
    options = dict((body or {}).get("deleteOptions") or {})
    api.delete(pods, namespace, name, options)
    return 201, _created()


def token(api, namespace: str, name: str, body: dict) -> tuple[int, dict]:
    """POST serviceaccounts/<name>/token: a TokenRequest with a token (not a verifiable one: nothing here checks
    service-account tokens) and its expiry."""
    account = api.get(api.registry.by_key["serviceaccounts"], namespace, name)
    spec = dict((body or {}).get("spec") or {})
    seconds = int(spec.get("expirationSeconds") or TOKEN_SECONDS)
    spec["expirationSeconds"] = seconds
    spec.setdefault("audiences", ["https://kubernetes.default.svc.cluster.local"])
    claims = {"sub": f"system:serviceaccount:{namespace}:{name}", "uid": account["metadata"]["uid"],
              "exp": int(time.time()) + seconds}
    raw = [base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
           for part in ({"alg": "none"}, claims)]
    return 201, {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                 "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None}, "spec": spec,
                 "status": {"token": ".".join(raw) + "." + secrets.token_urlsafe(16),
                            "expirationTimestamp": now_rfc3339(time.time() + seconds)}}


def finalize(api, name: str, body: dict) -> tuple[int, dict]:
    """PUT namespaces/<name>/finalize: replace spec.finalizers (what the namespace controller waits on)."""
    res = api.registry.by_key["namespaces"]
    current = jcopy(api.get(res, None, name))
    current.setdefault("spec", {})["finalizers"] = list(((body or {}).get("spec") or {}).get("finalizers") or [])
    return 200, api.update(res, None, name, current, internal=True)


def streaming(sub: str, res, name: str) -> ApiError:
    """exec, attach and port-forward need an upgraded (SPDY/WebSocket) connection; proxy needs a network path to
    the pod or service. A simulator has neither: the first answer the real server's 400 for a request without
    the upgrade, the second a 503 like a server that cannot reach the backend."""
    if sub == "proxy":
        return ApiError(503, "ServiceUnavailable", f'error trying to reach service: {res.kind.lower()} "{name}" is '
                                                   "simulated: kubesim has no network path to it")
    return bad_request("Upgrade request required")


_COMPONENTS = ("controller-manager", "scheduler", "etcd-0")


def component_statuses(name: str | None) -> dict:
    """componentstatuses (deprecated, still served by 1.20): the simulated control plane is always healthy."""
    def status(component: str) -> dict:
        return {"kind": "ComponentStatus", "apiVersion": "v1",
                "metadata": {"name": component, "creationTimestamp": None},
                "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}

    if name is None:
        return {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
                "items": [status(c) for c in _COMPONENTS]}
    if name not in _COMPONENTS:
        raise ApiError(404, "NotFound", f'componentstatuses "{name}" not found',
                       {"name": name, "kind": "componentstatuses"})
    return status(name)
