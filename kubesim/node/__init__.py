"""kubesim's node side, as KWOK has one: the scheduler (GPUs, MIG, node pools, taints), the kubelet's pod
lifecycle (image pull, running, completion, failure, crash loop, logs), the Events they record, and metrics.
It drives kubesim's own API server in process, or any API server over HTTP (remote.py)."""
