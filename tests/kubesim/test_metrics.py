"""metrics.k8s.io and the Prometheus endpoint report plausible, moving numbers for running pods."""

import json
import re
import time
import urllib.parse
import urllib.request

import pytest
from kubernetes.client.rest import ApiException

from .conftest import TOKEN, pod_manifest, wait_until


def prometheus(sim, query: str) -> tuple[int, dict]:
    url = f"{sim.url}/prometheus/api/v1/query?{urllib.parse.urlencode({'query': query})}"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {TOKEN}"})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def running(core, ns, name):
    return wait_until(lambda: (p := core.read_namespaced_pod(name, ns)).status.phase == "Running" and p)


def test_pod_and_node_metrics(core, custom, ns):
    busy = pod_manifest("busy")
    busy["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "2", "memory": "4Gi"}}
    core.create_namespaced_pod(ns, busy)
    core.create_namespaced_pod(ns, pod_manifest("stuck", gpus=64))
    running(core, ns, "busy")
    first = custom.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", ns, "pods", "busy")
    assert first["kind"] == "PodMetrics" and first["metadata"]["namespace"] == ns and first["window"]
    usage = first["containers"][0]["usage"]
    assert first["containers"][0]["name"] == "main"
    assert usage["cpu"].endswith("n") and 0 < int(usage["cpu"][:-1]) < 2e9
    assert usage["memory"].endswith("Ki") and 0 < int(usage["memory"][:-2]) * 1024 < 4 * 2**30
    time.sleep(0.2)
    later = custom.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", ns, "pods", "busy")
    assert later["containers"][0]["usage"]["cpu"] != usage["cpu"]

    listed = custom.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", ns, "pods")
    assert listed["kind"] == "PodMetricsList" and [i["metadata"]["name"] for i in listed["items"]] == ["busy"]
    with pytest.raises(ApiException) as exc:  # not running: no metrics yet
        custom.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", ns, "pods", "stuck")
    assert exc.value.status == 404
    assert json.loads(exc.value.body)["message"] == f'podmetrics.metrics.k8s.io "{ns}/stuck" not found'

    nodes = custom.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")["items"]
    assert sorted(n["metadata"]["name"] for n in nodes) == ["sim-node-0", "sim-node-1"]
    assert all(n["usage"]["cpu"].endswith("n") and n["usage"]["memory"].endswith("Ki") for n in nodes)


def test_prometheus_gpu_series(sim, core, ns):
    core.create_namespaced_pod(ns, pod_manifest("trainer", gpus=2))
    pod = running(core, ns, "trainer")
    code, body = prometheus(sim, f'DCGM_FI_DEV_GPU_UTIL{{namespace="{ns}", pod="trainer"}}')
    assert code == 200 and body["status"] == "success" and body["data"]["resultType"] == "vector"
    series = body["data"]["result"]
    assert len(series) == 2 and len({s["metric"]["gpu"] for s in series}) == 2
    for s in series:
        assert s["metric"]["__name__"] == "DCGM_FI_DEV_GPU_UTIL"
        assert (s["metric"]["Hostname"], s["metric"]["container"]) == (pod.spec.node_name, "main")
        timestamp, value = s["value"]
        assert isinstance(timestamp, float) and abs(timestamp - time.time()) < 5 and 0 <= float(value) <= 100

    code, body = prometheus(sim, f'DCGM_FI_DEV_FB_USED{{pod=~"train.*",namespace="{ns}"}}')
    assert code == 200 and all(0 < float(s["value"][1]) <= 81559 for s in body["data"]["result"])
    assert len(body["data"]["result"]) == 2
    idle = prometheus(sim, 'DCGM_FI_DEV_GPU_UTIL{pod=""}')[1]["data"]["result"]
    assert len(idle) == 8 - 2 and all(s["value"][1] == "0" for s in idle)  # 2 nodes x 4 GPUs, 2 in use
    assert prometheus(sim, "no_such_metric")[1]["data"]["result"] == []

    # The exporter's default counter set, each series labelled with its device's PCI bus id.
    for counter in ("DCGM_FI_DEV_SM_CLOCK", "DCGM_FI_DEV_MEM_CLOCK", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_MEMORY_TEMP",
                    "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "DCGM_FI_DEV_PCIE_TX_THROUGHPUT",
                    "DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "DCGM_FI_DEV_MEM_COPY_UTIL",
                    "DCGM_FI_DEV_ENC_UTIL", "DCGM_FI_DEV_DEC_UTIL", "DCGM_FI_DEV_XID_ERRORS",
                    "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
                    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                    "DCGM_FI_DEV_ROW_REMAP_FAILURE"):
        series = prometheus(sim, counter)[1]["data"]["result"]
        assert len(series) == 8 and all(float(s["value"][1]) >= 0 for s in series), counter
    busy = prometheus(sim, f'DCGM_FI_DEV_POWER_USAGE{{pod="trainer",namespace="{ns}"}}')[1]["data"]["result"]
    assert len(busy) == 2 and all(float(s["value"][1]) > 58 for s in busy)
    buses = {s["metric"]["pci_bus_id"] for s in prometheus(sim, "DCGM_FI_DEV_GPU_UTIL")[1]["data"]["result"]}
    assert len(buses) == 4 and all(re.fullmatch(r"00000000:[0-9A-F]{2}:00\.0", b) for b in buses), buses
    code, body = prometheus(sim, "sum(DCGM_FI_DEV_GPU_UTIL)")
    assert code == 400 and (body["status"], body["errorType"]) == ("error", "bad_data")


def test_prometheus_knative_request_series(sim, custom, core, ns):
    custom.create_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", {
        "apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"name": "chat"},
        "spec": {"template": {"spec": {"containers": [{"image": "vllm:1"}]}}}})
    wait_until(lambda: prometheus(sim, f'revision_app_request_count{{namespace="{ns}"}}')[1]["data"]["result"])
    series = prometheus(sim, f'revision_app_request_count{{namespace="{ns}",service_name="chat"}}')[1]["data"]["result"]
    assert len(series) == 1 and series[0]["metric"]["revision_name"] == "chat-00001"
    assert float(series[0]["value"][1]) > 0
    latency = prometheus(sim, f'revision_app_request_latencies{{namespace="{ns}"}}')[1]["data"]["result"]
    assert latency and float(latency[0]["value"][1]) > 0
