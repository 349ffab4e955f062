"""Name and format rules of Kubernetes and of this API, as predicates and as DRF validators (Kubernetes' own
name rules are studio.clusters.names', re-exported here)."""

import re

from rest_framework.exceptions import ValidationError

from studio.clusters.names import is_dns_subdomain, is_label_value, is_qualified_name

KINDS = ("training", "workspace", "inference")
NAME_MAX = 63
NAME_RULE_MESSAGE = "Must be 1 to 63 characters of lowercase letters, digits and '-', starting with a letter and not ending with '-'."
PREFIX_SUFFIX = 6  # useGivenNameAsPrefix appends "-" and 5 random characters
MIG_PROFILES = tuple("1g.5gb 1g.10gb 2g.10gb 2g.20gb 3g.20gb 3g.40gb 4g.20gb 4g.40gb 7g.40gb 7g.80gb".split())
CAPABILITIES = tuple(  # Linux capabilities as Kubernetes spells them, without CAP_
    "AUDIT_CONTROL AUDIT_READ AUDIT_WRITE BLOCK_SUSPEND BPF CHECKPOINT_RESTORE CHOWN DAC_OVERRIDE DAC_READ_SEARCH "
    "FOWNER FSETID IPC_LOCK IPC_OWNER KILL LEASE LINUX_IMMUTABLE MAC_ADMIN MAC_OVERRIDE MKNOD NET_ADMIN "
    "NET_BIND_SERVICE NET_BROADCAST NET_RAW PERFMON SETFCAP SETGID SETPCAP SETUID SYS_ADMIN SYS_BOOT SYS_CHROOT "
    "SYS_MODULE SYS_NICE SYS_PACCT SYS_PTRACE SYS_RAWIO SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG SYSLOG WAKE_ALARM".split()
)
INT32_MAX = 2**31 - 1

_NAME_RE = re.compile(r"[a-z](?:[-a-z0-9]*[a-z0-9])?")
_ENV_NAME_RE = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_CONFIG_KEY_RE = re.compile(r"[-._a-zA-Z0-9]+")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_GROUPS_RE = re.compile(r"[0-9]+(?: *, *[0-9]+)*")
MIG_SLICES_RE = re.compile(r"([0-9]+)g\.")


def is_valid_name(name) -> bool:
    """The name rule for workloads, projects and profiles (a DNS-1123 label that starts with a letter)."""
    return isinstance(name, str) and len(name) <= NAME_MAX and _NAME_RE.fullmatch(name) is not None


# --- fields that reach a pod and that only the product may set (security round 3) ---------------------------

# The label of a node's pool (studio.models.NODE_POOL_LABEL, workloads.manifests.parts.NODE_POOL_LABEL): a workload's
# pools are its `nodePools`, which the project's per-pool quotas govern, never a node affinity of its own.
NODE_POOL_LABEL = "run.ai/node-pool"
# Resources the quota counts (GPUs, whole or sliced, of any vendor) or that have fields of their own (cpu, memory,
# hugepages: Kubernetes' unprefixed and kubernetes.io names): an extended resource naming one would reach the pod's
# limits and count nothing against the quota.
_GPU_DOMAINS = ("nvidia.com", "amd.com", "gpu.intel.com", "habana.ai")
# Domains whose annotation and label keys the platform or Kubernetes read: Kubernetes reserves kubernetes.io and
# k8s.io for its own components (AppArmor and seccomp profiles are such annotations), the schedulers read their
# queue and pod-group keys, Knative its autoscaling and networking keys, and the product its own.
_RESERVED_DOMAINS = r"(?:[a-z0-9.-]+\.)?(?:kubernetes\.io|(?:x-)?k8s\.io|knative\.dev|run\.ai|kai\.scheduler|volcano\.sh)"
# KAI's unprefixed keys: a pod's group (annotation), its priority class and shared GPU (labels).
_RESERVED_ANNOTATION_RE = re.compile(
    rf"{_RESERVED_DOMAINS}/.*|runai/.*|paas-studio/.*|pod-group-name|runai-gpu-group"
    r"|gpu-(?:fraction|memory)(?:-.*)?",  # the GPU-sharing scheduler's requests, set from `compute`
    re.IGNORECASE)
# Labels: the same, but for Kubernetes' recommended application labels (app.kubernetes.io/name, /version, ...).
_RESERVED_LABEL_RE = re.compile(rf"(?!app\.kubernetes\.io/(?!managed-by$)){_RESERVED_DOMAINS}/.*|runai/.*|paas-studio/.*"
                                r"|priorityClassName|runai-gpu-group", re.IGNORECASE)


def is_gpu_or_core_resource(name: str) -> bool:
    domain, slash, _ = name.lower().rpartition("/")
    if not slash or domain in ("kubernetes.io", "k8s.io") or domain.endswith((".kubernetes.io", ".k8s.io")):
        return True
    return domain in _GPU_DOMAINS or domain.endswith(tuple(f".{d}" for d in _GPU_DOMAINS)) or "gpu" in name.lower()


def is_reserved_annotation(key: str) -> bool:
    return _RESERVED_ANNOTATION_RE.fullmatch(key) is not None


def is_reserved_label(key: str) -> bool:
    return _RESERVED_LABEL_RE.fullmatch(key) is not None


def _rule(predicate, message):
    def check(value):
        if not predicate(value):
            raise ValidationError(message)

    return check


NAME = _rule(is_valid_name, NAME_RULE_MESSAGE)
QUALIFIED = _rule(
    is_qualified_name, "Must be a Kubernetes qualified name such as 'app' or 'example.com/app'."
)
LABEL_VALUE = _rule(
    is_label_value,
    "Must be at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit.",
)
DNS_SUBDOMAIN = _rule(
    is_dns_subdomain, "Must be lowercase letters, digits, '-' and '.', such as 'high-priority'."
)
SECRET_NAME = _rule(
    is_dns_subdomain, "Must be a Secret's name: lowercase letters, digits, '-' and '.', such as 'my-secret'.")
# An environment variable's Secret: the same, but for '_', which the published example bodies use
# ("postgress_secret", which must be accepted as published); nothing else outside a DNS name passes.
ENV_SECRET_NAME = _rule(
    lambda v: is_dns_subdomain(v.replace("_", "-")),
    "Must be a Secret's name: lowercase letters, digits, '-' and '.', such as 'my-secret'.")
ENV_NAME = _rule(
    lambda v: _ENV_NAME_RE.fullmatch(v),
    "Must be letters, digits, '_', '-' or '.', not starting with a digit.",
)
CONFIG_KEY = _rule(
    lambda v: len(v) <= 253 and _CONFIG_KEY_RE.fullmatch(v), "Must be letters, digits, '-', '_' or '.'."
)
EXTENDED_RESOURCE = _rule(
    lambda v: not is_gpu_or_core_resource(v),
    "Must be a vendor's extended resource such as 'example.com/fpga': GPUs are asked for with gpuDevicesRequest, "
    "gpuRequestType and migProfile (which the project's quota counts), CPU and memory with cpuCore* and "
    "cpuMemory*.")
NOT_NODE_POOL = _rule(
    lambda v: v != NODE_POOL_LABEL,
    f"Must not be {NODE_POOL_LABEL}: a workload's node pools are chosen with nodePools, which the project's "
    "quotas govern.")
FREE_ANNOTATION = _rule(
    lambda v: not is_reserved_annotation(v),
    "Is reserved: AppArmor, seccomp, GPU-sharing, scheduler, Knative, Kubernetes and PaaS Studio annotations are "
    "set from the spec's own fields (security, compute, autoscaling) or by the platform.")
FREE_LABEL = _rule(
    lambda v: not is_reserved_label(v),
    "Is reserved: scheduler, queue, Knative, Kubernetes and PaaS Studio labels are set by the platform.")
UUID = _rule(
    lambda v: _UUID_RE.fullmatch(v), "Must be a UUID such as '71f69d83-ba66-4822-adf5-55ce55efd210'."
)
ABSOLUTE = _rule(lambda v: v.startswith("/"), "Must be an absolute path (starting with '/').")
NO_SPACES = _rule(lambda v: not any(c.isspace() for c in v), "Must not contain spaces.")
FILE_MODE = _rule(lambda v: re.fullmatch(r"0[0-7]{3}", v), "Must be an octal file mode such as '0644'.")
GROUPS = _rule(lambda v: _GROUPS_RE.fullmatch(v), "Must be comma-separated group ids, such as '2,3,5,8'.")
# Run:ai latest's values where 2.18's enum was narrower (fields are the union of both versions):
# an emptyDir's medium as Kubernetes takes it ("" or Memory in 2.18; HugePages, HugePages-<size> too),
_HUGE_PAGES_RE = re.compile(r"HugePages(?:-[0-9]+(?:Ki|Mi|Gi))?")
EMPTY_DIR_MEDIUM = _rule(lambda v: v in ("", "Memory") or _HUGE_PAGES_RE.fullmatch(v),
                         "Must be empty (the node's disk), Memory, HugePages or HugePages-<size> such as HugePages-2Mi.")
# and an autoscaling metric: 2.18's throughput, concurrency, latency, or latest's any Prometheus metric name.
_METRIC_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
METRIC_NAME = _rule(lambda v: _METRIC_NAME_RE.fullmatch(v) and len(v) <= 253,
                    "Must be throughput, concurrency, latency or a Prometheus metric name such as "
                    "http_requests_total.")
