"""A simulated Kubernetes cluster for tests and the embedded default: a protocol-faithful API server over real
HTTP (for the official `kubernetes` client and kubectl) with a controller that moves Jobs, Deployments, Knative
Services and their pods through their lives, and serves metrics. Pure Python: no Django here.

    sim = KubeSim(nodes=4, gpus_per_node=8, token="kubesim-token").start()
    # kubernetes.client.Configuration(host=sim.url, api_key={"authorization": "Bearer kubesim-token"})
    sim.set_faults(outage=True)        # every API call answers 503 until outage=False
    sim.stats()                        # {("list", "jobs"): 3, ("create", "jobs"): 2, ("get", "discovery"): 1, ...}
    sim.stop()

Conventions the simulation relies on:
  images     a reference containing `does-not-exist` fails to pull (ErrImagePull, then ImagePullBackOff); one
             containing `crashloop` exits 1 after each start (CrashLoopBackOff; phase Failed under
             restartPolicy Never). `set_faults(pull_fail_images=..., crash_images=...)` add references or
             repositories ("nginx" matches "nginx:1.27").
  run time   a Job's pods succeed after `run_seconds`, or after the `kubesim.paas-studio/run-seconds`
             annotation on the Job or its pod template; other pods run until deleted.
  GPUs       `nvidia.com/gpu` requests/limits take whole devices; the pod annotation `gpu-fraction` ("0.5") or
             `gpu-memory` (MiB) takes a share of one device; `nvidia.com/mig-<profile>` takes MIG slices
             (`mig_per_node={"1g.10gb": 7}`). Nodes are `sim-node-<i>`, labelled `node-type: gpu|cpu`,
             `nvidia.com/gpu.product`, `kubernetes.io/hostname`, ...; nodeSelector and required node affinity
             are honoured.
  knative    `autoscaling.knative.dev/min-scale` / `max-scale` on the template set the pod count (at least 1).
  deletion   propagation as on a real server: Background by default, except batch/v1 Jobs, which orphan
             their pods unless asked otherwise (with the server's Warning header).
  TLS        `tls_cert`/`tls_key` serve HTTPS; kubectl sends bearer tokens only over TLS.

HTTP extras (same bearer token): `GET /_sim/stats`, `POST /_sim/stats/reset`, `GET|POST /_sim/faults` with
`{"outage", "latencyMs", "pullFailImages", "crashImages"}` (they keep answering during an outage), and a
Prometheus instant-query API at `/prometheus/api/v1/query` (see metrics.py for the supported subset).
"""

from .sim import KubeSim

__all__ = ["KubeSim"]
