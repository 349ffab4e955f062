"""Metric types of the workloads API and where each comes from."""

WORKLOAD_TYPES = (
    "GPU_UTILIZATION",
    "GPU_MEMORY_USAGE_BYTES",
    "GPU_MEMORY_REQUEST_BYTES",
    "CPU_USAGE_CORES",
    "CPU_REQUEST_CORES",
    "CPU_LIMIT_CORES",
    "CPU_MEMORY_USAGE_BYTES",
    "CPU_MEMORY_REQUEST_BYTES",
    "CPU_MEMORY_LIMIT_BYTES",
    "POD_COUNT",
    "RUNNING_POD_COUNT",
    "GPU_ALLOCATION",
)
INFERENCE_TYPES = (*WORKLOAD_TYPES, "THROUGHPUT", "LATENCY")
# Run:ai's PodMetricType values that a pod's samples answer. A pod's GPU samples are stored per GPU (the DCGM
# exporter's `gpu` label), so the per-GPU types are those samples, one series per GPU. The spec's engine-activity,
# NVLink/PCIe, swap and NIM types have no source here and are refused by name.
POD_ALIASES = {"GPU_UTILIZATION_PER_GPU": "GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES_PER_GPU": "GPU_MEMORY_USAGE_BYTES"}
POD_TYPES = ("GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES", "CPU_USAGE_CORES", "CPU_MEMORY_USAGE_BYTES", *POD_ALIASES)
# The seed spells GPU_ALLOCATION as ALLOCATED_GPU: both are accepted, and the answer uses the caller's spelling.
ALIASES = {"ALLOCATED_GPU": "GPU_ALLOCATION"}
# Types read from the cluster's Prometheus (DCGM exporter, Knative): without a prometheus_url they have no source.
PROMETHEUS_TYPES = frozenset({"GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES", "THROUGHPUT", "LATENCY"})
