"""Metrics of running pods and nodes: metrics.k8s.io/v1beta1 (PodMetrics, NodeMetrics) and a tiny Prometheus
HTTP API for GPU (DCGM exporter) and Knative request metrics.

Prometheus subset: `GET|POST /prometheus/api/v1/query?query=<expr>` answers an instant vector. `<expr>` is one
metric name with optional label matchers, nothing else: `name`, `name{}`, `name{l="v", l!="v", l=~"re",
l!~"re"}` (regular expressions fully anchored, as in PromQL). Functions, operators, aggregations, range vectors
and `query_range` are not supported and answer 400 `bad_data`. An unknown metric is an empty vector.

  DCGM_FI_DEV_*                    the DCGM exporter's default counter set (its etc/default-counters.csv):
      GPU_UTIL (percent), FB_USED / FB_FREE (MiB), SM_CLOCK / MEM_CLOCK (MHz), GPU_TEMP / MEMORY_TEMP (C),
      POWER_USAGE (W), TOTAL_ENERGY_CONSUMPTION (mJ), PCIE_TX_THROUGHPUT / PCIE_RX_THROUGHPUT (KB),
      PCIE_REPLAY_COUNTER, MEM_COPY_UTIL / ENC_UTIL / DEC_UTIL (percent), XID_ERRORS,
      NVLINK_BANDWIDTH_TOTAL, VGPU_LICENSE_STATUS, (UN)CORRECTABLE_REMAPPED_ROWS, ROW_REMAP_FAILURE;
      one series per GPU device, or per (device, pod) for shared devices; labels gpu, UUID, pci_bus_id, device,
      modelName, Hostname, DCGM_FI_DRIVER_VERSION, instance, job, plus namespace, pod, container while a running
      pod holds it
  revision_app_request_count      requests per second served by a running Knative pod (a gauge here)
  revision_app_request_latencies  mean request latency of that pod, milliseconds
      labels namespace, pod, service_name, configuration_name, revision_name, container="queue-proxy"

Values follow smooth per-series waves over time, so successive samples differ plausibly.
"""

import json
import math
import re
import time
import uuid
import zlib

from .. import quantity
from ..errors import ApiError
from ..selectors import match_fields, match_labels, parse_fields, parse_labels
from ..store import now_rfc3339
from .scheduler import GPU_MEMORY_MIB, GPU_MODEL

# The exporter's default counters, each from (utilisation %, framebuffer MiB used, device seed, time); counters
# grow with time since a boot an hour before the epoch of the simulation.
_BOOT = time.time() - 3600
DCGM_COUNTERS = {
    "DCGM_FI_DEV_GPU_UTIL": lambda u, fb, seed, t: u,
    "DCGM_FI_DEV_FB_USED": lambda u, fb, seed, t: fb,
    "DCGM_FI_DEV_FB_FREE": lambda u, fb, seed, t: GPU_MEMORY_MIB - fb,
    "DCGM_FI_DEV_SM_CLOCK": lambda u, fb, seed, t: 1410 if u else 210,
    "DCGM_FI_DEV_MEM_CLOCK": lambda u, fb, seed, t: 1593,
    "DCGM_FI_DEV_GPU_TEMP": lambda u, fb, seed, t: round(32 + 0.4 * u),
    "DCGM_FI_DEV_MEMORY_TEMP": lambda u, fb, seed, t: round(36 + 0.3 * u),
    "DCGM_FI_DEV_POWER_USAGE": lambda u, fb, seed, t: round(58 + 3.4 * u, 3),
    "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": lambda u, fb, seed, t: round((t - _BOOT) * (58 + 1.7 * u) * 1000),
    "DCGM_FI_DEV_PCIE_TX_THROUGHPUT": lambda u, fb, seed, t: round((t - _BOOT) * (20 + 90 * wave(seed + "tx", t))),
    "DCGM_FI_DEV_PCIE_RX_THROUGHPUT": lambda u, fb, seed, t: round((t - _BOOT) * (30 + 120 * wave(seed + "rx", t))),
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": lambda u, fb, seed, t: 0,
    "DCGM_FI_DEV_MEM_COPY_UTIL": lambda u, fb, seed, t: round(0.6 * u),
    "DCGM_FI_DEV_ENC_UTIL": lambda u, fb, seed, t: 0,
    "DCGM_FI_DEV_DEC_UTIL": lambda u, fb, seed, t: 0,
    "DCGM_FI_DEV_XID_ERRORS": lambda u, fb, seed, t: 0,
    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL": lambda u, fb, seed, t: round((t - _BOOT) * 40 * u),
    "DCGM_FI_DEV_VGPU_LICENSE_STATUS": lambda u, fb, seed, t: 0,
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": lambda u, fb, seed, t: 0,
    "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS": lambda u, fb, seed, t: 0,
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": lambda u, fb, seed, t: 0,
}
DCGM = tuple(DCGM_COUNTERS)
KNATIVE = ("revision_app_request_count", "revision_app_request_latencies")
_NAME = re.compile(r"\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*")
_MATCHER = re.compile(r"\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*')\s*")


def wave(seed: str, t: float, period: float = 60.0) -> float:
    """A smooth value in [0, 1] that differs per seed and drifts over time."""
    phase = (zlib.crc32(seed.encode()) % 6283) / 1000.0
    value = 0.5 + 0.35 * math.sin(2 * math.pi * t / period + phase) + 0.15 * math.sin(2 * math.pi * t / (period / 3.7)
                                                                                      + 1.3 * phase)
    return min(1.0, max(0.0, value))


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.3f}".rstrip("0").rstrip(".")


def parse_query(expr: str) -> tuple[str, list]:
    match = _NAME.match(expr)
    if not match:
        raise ValueError(f"unsupported query {expr!r}: only a metric name with optional label matchers is supported")
    name, pos, matchers = match.group(1), match.end(), []
    if pos < len(expr) and expr[pos] == "{":
        pos += 1
        while True:
            if expr[pos:].lstrip().startswith("}"):
                pos = len(expr) - len(expr[pos:].lstrip()) + 1
                break
            m = _MATCHER.match(expr, pos)
            if not m:
                raise ValueError(f"parse error at char {pos + 1}: unexpected character in label matchers")
            label, op, raw = m.groups()
            value = json.loads(raw) if raw[0] == '"' else raw[1:-1].replace("\\'", "'")
            matchers.append((label, op, re.compile(value) if "~" in op else value))
            pos = m.end()
            if expr[pos:pos + 1] == ",":
                pos += 1
    if expr[pos:].strip():
        raise ValueError(f"unsupported query {expr!r}: only a metric name with optional label matchers is supported")
    return name, matchers


def _matches(labels: dict, matchers: list) -> bool:
    for label, op, value in matchers:
        actual = labels.get(label, "")
        if (op == "=" and actual != value) or (op == "!=" and actual == value):
            return False
        if (op == "=~" and not value.fullmatch(actual)) or (op == "!~" and value.fullmatch(actual)):
            return False
    return True


class Metrics:
    def __init__(self, sim):
        self.sim = sim

    def _running(self, pod: dict) -> bool:
        return (pod.get("status") or {}).get("phase") == "Running" and not pod["metadata"].get("deletionTimestamp")

    def _container_usage(self, pod: dict, t: float) -> list[tuple[str, float, float]]:
        running = {cs["name"] for cs in pod["status"].get("containerStatuses") or [] if "running" in cs.get("state", {})}
        out = []
        for c in pod["spec"]["containers"]:
            if c["name"] not in running:
                continue
            resources = c.get("resources") or {}
            wanted = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
            cpu = quantity.parse_or_zero(wanted.get("cpu")) or 0.5
            memory = quantity.parse_or_zero(wanted.get("memory")) or 512 * 2**20
            seed = pod["metadata"]["uid"] + c["name"]
            out.append((c["name"], cpu * (0.2 + 0.7 * wave(seed, t)), memory * (0.4 + 0.4 * wave(seed + "m", t, 300))))
        return out

    # --- metrics.k8s.io --------------------------------------------------------------------------------------

    def resource(self, res, namespace, name, query) -> dict:
        t, store = time.time(), self.sim.store
        labels = parse_labels(query.get("labelSelector"))
        fields = parse_fields(query.get("fieldSelector"), "pods" if res.plural == "pods" else "nodes")
        with store.lock:
            if res.plural == "pods":
                pods = [store.get("pods", namespace, name)] if name else list(store.iter("pods", namespace))
                items = [self._pod_metrics(p, t) for p in pods if p and self._running(p)
                         and match_labels(labels, p["metadata"].get("labels")) and match_fields(fields, p)]
                what = f"{namespace}/{name}"
            else:
                nodes = [store.get("nodes", None, name)] if name else list(store.iter("nodes"))
                items = [self._node_metrics(n, t) for n in nodes if n
                         and match_labels(labels, n["metadata"].get("labels")) and match_fields(fields, n)]
                what = name
        if name:
            if not items:
                raise ApiError(404, "NotFound", f'{res.kind.lower()}.{res.group} "{what}" not found',
                               {"name": name, "group": res.group, "kind": res.plural})
            return items[0]
        return {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": {},
                "items": [{k: v for k, v in i.items() if k not in ("kind", "apiVersion")} for i in items]}

    def _pod_metrics(self, pod: dict, t: float) -> dict:
        meta = pod["metadata"]
        return {"kind": "PodMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
                "metadata": {"name": meta["name"], "namespace": meta["namespace"], "creationTimestamp": now_rfc3339(t),
                             "labels": meta.get("labels") or {}},
                "timestamp": now_rfc3339(t - 5), "window": "15.023s",
                "containers": [{"name": n, "usage": {"cpu": quantity.cpu_nanocores(cpu),
                                                     "memory": quantity.memory_kibibytes(mem)}}
                               for n, cpu, mem in self._container_usage(pod, t)]}

    def _node_metrics(self, node: dict, t: float) -> dict:
        name, store = node["metadata"]["name"], self.sim.store
        cpu, memory = 0.4 + 0.2 * wave(name, t), 2.5 * 2**30
        for pod in store.list("pods"):
            if pod["spec"].get("nodeName") == name and self._running(pod):
                for _, c, m in self._container_usage(pod, t):
                    cpu, memory = cpu + c, memory + m
        return {"kind": "NodeMetrics", "apiVersion": "metrics.k8s.io/v1beta1",
                "metadata": {"name": name, "creationTimestamp": now_rfc3339(t),
                             "labels": node["metadata"].get("labels") or {}},
                "timestamp": now_rfc3339(t - 5), "window": "20.05s",
                "usage": {"cpu": quantity.cpu_nanocores(cpu), "memory": quantity.memory_kibibytes(memory)}}

    # --- Prometheus ------------------------------------------------------------------------------------------

    def prometheus(self, expr: str) -> tuple[int, dict]:
        try:
            name, matchers = parse_query(expr or "")
        except (ValueError, re.error) as exc:
            return 400, {"status": "error", "errorType": "bad_data", "error": str(exc)}
        t = time.time()
        with self.sim.store.lock:
            series = self._dcgm(name, t) if name in DCGM else self._knative(name, t) if name in KNATIVE else []
        result = [{"metric": {"__name__": name, **labels}, "value": [round(t, 3), _fmt(value)]}
                  for labels, value in series if _matches({"__name__": name, **labels}, matchers)]
        return 200, {"status": "success", "data": {"resultType": "vector", "result": result}}

    def _dcgm(self, name: str, t: float) -> list[tuple[dict, float]]:
        store, scheduler = self.sim.store, self.sim.controller.scheduler
        users = {}  # (node, device index) -> [(pod, share)]
        for uid, (node, _req, devices) in scheduler.alloc.items():
            found = store.get_uid(uid)
            if found and self._running(found[1]):
                for index, share in devices:
                    users.setdefault((node.name, index), []).append((found[1], share))
        out = []
        for n, node in enumerate(scheduler.nodes):
            for index in range(len(node.devices)):
                base = {"gpu": str(index), "UUID": "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{node.name}/{index}")),
                        "pci_bus_id": f"00000000:{0x07 + 0x10 * index:02X}:00.0",
                        "device": f"nvidia{index}", "modelName": GPU_MODEL, "Hostname": node.name,
                        "DCGM_FI_DRIVER_VERSION": "550.127.08", "instance": f"10.244.{n}.250:9400",
                        "job": "nvidia-dcgm-exporter"}
                holders = users.get((node.name, index)) or [(None, 0.0)]
                for pod, share in holders:
                    labels, util, used = dict(base), 0.0, 0.0
                    if pod is not None:
                        seed = f"{pod['metadata']['uid']}/{index}"
                        labels.update(namespace=pod["metadata"]["namespace"], pod=pod["metadata"]["name"],
                                      container=_gpu_container(pod))
                        util = _pinned_utilisation(pod)
                        if util is None:
                            util = round(30 + 65 * wave(seed, t, 45))
                        used = round(share * GPU_MEMORY_MIB * (0.5 + 0.4 * wave(seed + "fb", t, 240)))
                    out.append((labels, DCGM_COUNTERS[name](util, used, base["UUID"], t)))
        return out

    def _knative(self, name: str, t: float) -> list[tuple[dict, float]]:
        out = []
        for pod in self.sim.store.list("pods"):
            service = (pod["metadata"].get("labels") or {}).get("serving.knative.dev/service")
            if not service or not self._running(pod):
                continue
            seed = pod["metadata"]["uid"]
            value = (round(2 + 18 * wave(seed, t, 90), 2) if name == "revision_app_request_count"
                     else round(15 + 60 * wave(seed + "lat", t, 120), 2))
            out.append(({"namespace": pod["metadata"]["namespace"], "pod": pod["metadata"]["name"],
                         "service_name": service, "configuration_name": service,
                         "revision_name": pod["metadata"]["labels"].get("serving.knative.dev/revision", ""),
                         "container": "queue-proxy"}, value))
        return out


def _pinned_utilisation(pod: dict) -> float | None:
    """A pod annotated `kubesim.paas-studio/gpu-utilization: "0"` reports that utilisation (an idle notebook, for
    tests of idle GPU reclaim); others follow the wave."""
    value = (pod["metadata"].get("annotations") or {}).get("kubesim.paas-studio/gpu-utilization")
    try:
        return None if value is None else float(value)
    except ValueError:
        return None


def _gpu_container(pod: dict) -> str:
    for c in pod["spec"]["containers"]:
        limits = (c.get("resources") or {}).get("limits") or {}
        if any(k.startswith("nvidia.com/") for k in limits):
            return c["name"]
    return pod["spec"]["containers"][0]["name"]
