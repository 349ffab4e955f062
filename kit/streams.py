"""Streaming sessions as workloads of kind "stream". Pure: plain values in, plain dicts out.

* `stream_spec` — the workload spec of a session: the application version's image, the profile's deployment
  settings and the caller's `arguments`, in the keys `workloads.manifests` renders for kind "stream"
  (Deployment + Service of the profile's type, `serviceAnnotations`, `runtimeClassName`, `nodeSelector`,
  `tlsSecret` mounted at /etc/tls). Kit's signaling port is TCP and its media port UDP (NVIDIA's WebRTC
  livestream), so the one Service publishes both protocols.
* `session_status` — the Kit status object `{"condition", "message", "status"}` of a workload phase.
* `session_routes` — the Kit routes `{"<address>": {"routes": [{"description", "destination_port", "protocol",
  "source_port"}]}}` from the Service the sync saw (`Workload.endpoints`), as Kit App Streaming answers them and
  NVIDIA's web-viewer-sample reads them.
"""

from __future__ import annotations

from collections.abc import Mapping

# Kit's WebRTC livestream ports, used when a profile names none: signaling over TCP, media over UDP.
DEFAULT_PORTS = ({"name": "signaling", "port": 49100, "protocol": "TCP"},
                 {"name": "media", "port": 47998, "protocol": "UDP"})
MEDIA = "media"
# Read by the load balancer / gateway in front of the session, which authorizes and terminates TLS.
AUTHORIZATION_ANNOTATION = "paas-studio/stream-authorization"
ENCRYPTION_ANNOTATION = "paas-studio/stream-encryption"
SETTINGS = (
    "compute", "node_selector", "tolerations", "runtime_class_name", "authorization", "service_type",
    "service_annotations", "encryption", "tls_secret", "environment", "ports",
)

QUEUED, STARTING, READY, DEGRADED, FAILED = "queued", "starting", "ready", "degraded", "failed"
TERMINATING, TERMINATED, UNKNOWN = "terminating", "terminated", "unknown"
CONDITIONS = {
    "Creating": STARTING, "Pending": STARTING, "Initializing": STARTING, "Resuming": STARTING, "Updating": STARTING,
    "Running": READY,
    "Degraded": DEGRADED,
    "Failed": FAILED,
    "Deleting": TERMINATING, "Terminating": TERMINATING, "Stopping": TERMINATING,
    "Deleted": TERMINATED, "Stopped": TERMINATED, "Completed": TERMINATED,
}
MESSAGES = {
    QUEUED: "Session is waiting for a free stream slot of its project",
    STARTING: "Session is starting",
    READY: "Session is active",
    DEGRADED: "Session is degraded",
    FAILED: "Session failed",
    TERMINATING: "Session is terminating",
    TERMINATED: "Session has ended",
    UNKNOWN: "Session state is unknown",
}
WAITING_FOR_ADDRESS = "Session is starting: waiting for the address of its Service"


def port_protocol(port: Mapping) -> str:
    """A profile port's protocol: as given, else UDP for Kit's media port and TCP for every other."""
    given = port.get("protocol")
    if given in ("TCP", "UDP"):
        return given
    return "UDP" if port.get("name") == MEDIA else "TCP"


def argument_list(arguments: Mapping) -> list[str]:
    """`{"/app/auto_load_usd": "x.usd", "fps": 60}` -> `["--/app/auto_load_usd=x.usd", "--fps=60"]`: Kit's
    `--<setting>=<value>` command line, in the caller's order; booleans as Kit spells them."""
    def text(value) -> str:
        return str(value).lower() if isinstance(value, bool) else str(value)

    return [f"--{key}={text(value)}" for key, value in arguments.items()]


def stream_spec(*, image: str, settings: Mapping, arguments: Mapping | None = None) -> dict:
    """The workload spec of a session; `settings` holds the profile's SETTINGS by field name."""
    service_type = settings.get("service_type") or "LoadBalancer"
    ports = settings.get("ports") or DEFAULT_PORTS
    annotations = {str(k): str(v) for k, v in (settings.get("service_annotations") or {}).items()}
    encryption = settings.get("encryption") or "none"
    annotations[AUTHORIZATION_ANNOTATION] = "required" if settings.get("authorization") else "none"
    annotations[ENCRYPTION_ANNOTATION] = encryption
    spec: dict = {
        "image": image,
        "ports": [{"container": p["port"], "serviceType": service_type, "name": p["name"],
                   "protocol": port_protocol(p)} for p in ports],
        "serviceAnnotations": annotations,
    }
    optional = {
        "compute": dict(settings.get("compute") or {}),
        "environmentVariables": [dict(e) for e in settings.get("environment") or ()],
        "nodeSelector": dict(settings.get("node_selector") or {}),
        "tolerations": [dict(t) for t in settings.get("tolerations") or ()],
        "runtimeClassName": settings.get("runtime_class_name") or "",
        "tlsSecret": settings.get("tls_secret") if encryption == "pod" else "",
        "args": argument_list(arguments or {}),
    }
    spec.update({key: value for key, value in optional.items() if value})
    return spec


def session_routes(endpoints: Mapping | None, spec: Mapping) -> dict:
    """Where a client reaches the session: at the Service's address, `source_port` is the port to dial
    (the node port of a NodePort Service, else the Service port) and `destination_port` the Kit app's port
    in the pod, with the port's protocol (media: UDP). Empty until the Service has an address."""
    endpoints = endpoints or {}
    address = endpoints.get("serviceAddress")
    if not address:
        return {}
    names = {(p.get("container"), p.get("protocol") or "TCP"): p.get("name")
             for p in spec.get("ports") or () if isinstance(p, Mapping)}
    node_port_service = endpoints.get("serviceType") == "NodePort"
    routes = []
    for port in endpoints.get("ports") or ():
        number, protocol = port.get("port"), port.get("protocol") or "TCP"
        source = port.get("nodePort") if node_port_service and port.get("nodePort") else number
        routes.append({"description": names.get((number, protocol)) or port.get("name") or "",
                       "destination_port": number, "protocol": protocol, "source_port": source})
    return {address: {"routes": routes}} if routes else {}


def session_status(phase: str, phase_message: str = "", *, routes: Mapping | None = None) -> dict:
    """Kit's `{"condition", "message", "status"}`; `status` is true only when a client can connect: the
    workload runs and its routes are known."""
    condition = CONDITIONS.get(phase, UNKNOWN)
    if condition == READY and not routes:
        return {"condition": STARTING, "message": WAITING_FOR_ADDRESS, "status": False}
    message = MESSAGES[condition]
    if condition != READY:
        message = f"{message} ({phase}{': ' + phase_message if phase_message else ''})"
    return {"condition": condition, "message": message, "status": condition == READY}


def session_view(*, session_id: str, phase: str, phase_message: str, endpoints: Mapping | None,
                 spec: Mapping) -> dict:
    """A session as `/streaming/stream` answers it: `{"id", "status", "routes"}`."""
    routes = session_routes(endpoints, spec) if CONDITIONS.get(phase) == READY else {}
    return {"id": session_id, "status": session_status(phase, phase_message, routes=routes), "routes": routes}
