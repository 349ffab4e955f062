"""Where a workload can be reached, from the objects a sync round saw. Pure: plain dicts in, a plain dict out.

`{"url", "serviceAddress", "serviceType", "ports": [{"name", "port", "nodePort"?, "protocol"?}]}` (a protocol only
where it is not TCP), read by Kit sessions (routes) and profile outputs (`workload.url`, `workload.serviceAddress`); `{}` while there is nothing to reach.

- url: a Knative Service's `status.url`; else the Ingress's first rule (`http(s)://host/path`, its load
  balancer's address when the rule has no host); else the in-cluster DNS URL of the workload's Service.
- serviceAddress: a LoadBalancer's external IP or hostname (empty until assigned), a NodePort's node (the
  host IP of a running pod), a ClusterIP's cluster IP; for Knative, the host of its URL.
"""

from urllib.parse import urlsplit

from workloads import manifests


def _first(items) -> dict:
    return next((item for item in items or () if isinstance(item, dict)), {})


def endpoints_of(ref: manifests.WorkloadRef, objects: dict, pods: list[dict]) -> dict:
    """`objects`: (apiVersion, kind) -> [objects of the workload], as the sync groups them."""
    name = manifests.object_name(ref)
    knative = next((o for o in objects.get(manifests.KNATIVE_SERVICE, ()) if o["metadata"]["name"] == name), None)
    if knative is not None:
        url = (knative.get("status") or {}).get("url") or ""
        return {"url": url, "serviceAddress": urlsplit(url).hostname or "", "serviceType": "Knative",
                "ports": [{"name": "http", "port": 80}] if url else []}
    services = sorted(objects.get(manifests.SERVICE, ()), key=lambda s: s["metadata"]["name"] != name)
    if not services:
        return {}
    service = services[0]
    spec, kind = service.get("spec") or {}, (service.get("spec") or {}).get("type") or "ClusterIP"
    ports = [{k: p[k] for k in ("name", "port", "nodePort") if p.get(k) is not None} for p in spec.get("ports") or ()]
    for port, given in zip(ports, spec.get("ports") or (), strict=True):
        if given.get("protocol") not in (None, "TCP"):  # TCP, as Kubernetes, unless said otherwise (a stream's UDP)
            port["protocol"] = given["protocol"]
    return {"url": _ingress_url(objects) or _service_url(service, ports), "serviceAddress":
            _address(service, kind, pods), "serviceType": kind, "ports": ports}


def _address(service: dict, kind: str, pods: list[dict]) -> str:
    if kind == "LoadBalancer":
        ingress = _first(((service.get("status") or {}).get("loadBalancer") or {}).get("ingress"))
        return ingress.get("ip") or ingress.get("hostname") or ""
    if kind == "NodePort":
        running = (p for p in pods if (p.get("status") or {}).get("phase") == "Running")
        return next((p["status"]["hostIP"] for p in running if p["status"].get("hostIP")), "")
    return (service.get("spec") or {}).get("clusterIP") or ""


def _ingress_url(objects: dict) -> str:
    ingress = _first(objects.get(manifests.INGRESS))
    rule = _first((ingress.get("spec") or {}).get("rules"))
    if not rule:
        return ""
    path = _first((rule.get("http") or {}).get("paths")).get("path") or "/"
    host = rule.get("host") or ""
    if not host:
        balancer = _first(((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress"))
        host = balancer.get("hostname") or balancer.get("ip") or ""
    scheme = "https" if (ingress.get("spec") or {}).get("tls") else "http"
    return f"{scheme}://{host}{path}" if host else ""


def _service_url(service: dict, ports: list[dict]) -> str:
    meta = service["metadata"]
    port = f":{ports[0]['port']}" if ports and ports[0]["port"] != 80 else ""
    return f"http://{meta['name']}.{meta['namespace']}.svc.cluster.local{port}"
