"""Clusters: the node pools and nodes API, what a cluster registration may point at, Kubernetes quantities and
name rules (pure), and kube, the only module that talks to Kubernetes."""

from perf.lazy_packages import lazy

# The Kubernetes client's packages import each API class and model on first use, not ~1,500 modules at once: 29 MiB
# less in every process (docs/performance.md). Before any module here imports the client.
lazy("kubernetes", "kubernetes.client", "kubernetes.client.api", "kubernetes.client.models", "kubernetes.utils")
