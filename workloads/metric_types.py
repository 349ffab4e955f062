"""Metric types of the workloads API and where each comes from."""

# Run:ai latest's NVIDIA NIM types (WorkloadMetricType and PodMetricType): accepted, as the union of both versions'
# fields; PaaS Studio reads no NIM endpoint, so each is answered with no values and the answer is partial (207).
NIM_TYPES = (
    "NIM_NUM_REQUESTS_RUNNING",
    "NIM_NUM_REQUESTS_WAITING",
    "NIM_NUM_REQUEST_MAX",
    "NIM_REQUEST_SUCCESS_TOTAL",
    "NIM_REQUEST_FAILURE_TOTAL",
    "NIM_GPU_CACHE_USAGE_PERC",
    "NIM_TIME_TO_FIRST_TOKEN_SECONDS",
    "NIM_TIME_TO_FIRST_TOKEN_SECONDS_PERCENTILES",
    "NIM_E2E_REQUEST_LATENCY_SECONDS",
    "NIM_E2E_REQUEST_LATENCY_SECONDS_PERCENTILES",
)
NO_SOURCE_TYPES = frozenset(NIM_TYPES)
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
    *NIM_TYPES,
)
INFERENCE_TYPES = (*WORKLOAD_TYPES, "THROUGHPUT", "LATENCY")
# Run:ai's PodMetricType values that a pod's samples answer. A pod's GPU samples are stored per GPU (the DCGM
# exporter's `gpu` label), so the per-GPU types are those samples, one series per GPU. The spec's engine-activity,
# NVLink/PCIe and swap types have no source here and are refused by name; NIM's are accepted (NIM_TYPES).
POD_ALIASES = {"GPU_UTILIZATION_PER_GPU": "GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES_PER_GPU": "GPU_MEMORY_USAGE_BYTES"}
POD_TYPES = ("GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES", "CPU_USAGE_CORES", "CPU_MEMORY_USAGE_BYTES", *POD_ALIASES,
             *NIM_TYPES)
# The seed spells GPU_ALLOCATION as ALLOCATED_GPU: both are accepted, and the answer uses the caller's spelling.
ALIASES = {"ALLOCATED_GPU": "GPU_ALLOCATION"}
# Types read from the cluster's Prometheus (DCGM exporter, Knative): without a prometheus_url they have no source.
PROMETHEUS_TYPES = frozenset({"GPU_UTILIZATION", "GPU_MEMORY_USAGE_BYTES", "THROUGHPUT", "LATENCY"})
