"""A simulated Kubernetes cluster for tests and the embedded default: a protocol-faithful API server over real
HTTP (for the official `kubernetes` client and kubectl) with a controller that moves Jobs, Deployments, Knative
Services and their pods through their lives, and serves metrics. Pure Python: no Django here.

    sim = KubeSim(nodes=4, gpus_per_node=8, token="kubesim-token").start()
    # kubernetes.client.Configuration(host=sim.url, api_key={"authorization": "Bearer kubesim-token"})
    sim.set_faults(outage=True)        # every API call answers 503 until outage=False
    sim.stats()                        # {("list", "jobs"): 3, ("create", "jobs"): 2, ("get", "discovery"): 1, ...}
    sim.stop()

Life cycles are data, as KWOK keeps them: the pod's (the kubelet's steps), the Job controller's and the Training
Operator's decisions are Stage documents under kubesim/stages/ (a selector on the object, a delay, what comes
next), read by node/stages.py, each with input/output test data in kubesim/stages/testdata/ that
tests/kubesim/test_stages.py plays.

Conventions the simulation relies on:
  failures   the pod annotation `kubesim.paas-studio/pull-fails` names the containers ("main,sidecar"; "true": all)
             whose image fails to pull (ErrImagePull, then ImagePullBackOff); `kubesim.paas-studio/crashes`
             those that exit 1 after each start (CrashLoopBackOff; phase Failed under restartPolicy Never).
             As sugar, an image reference containing `does-not-exist` counts as named in the first, one
             containing `crashloop` in the second; `set_faults(pull_fail_images=..., crash_images=...)` add
             references or repositories ("nginx" matches "nginx:1.27").
  run time   a Job's pods succeed after `run_seconds`, or after the `kubesim.paas-studio/run-seconds`
             annotation on the Job or its pod template; other pods run until deleted.
  GPUs       `nvidia.com/gpu` requests/limits take whole devices; the pod annotation `gpu-fraction` ("0.5") or
             `gpu-memory` (MiB) takes a share of one device; `nvidia.com/mig-<profile>` takes MIG slices
             (`mig_per_node={"1g.10gb": 7}`). Nodes are `sim-node-<i>`, labelled `node-type: gpu|cpu`,
             `nvidia.com/gpu.product`, `kubernetes.io/hostname`, ...; nodeSelector and required node affinity
             are honoured. `node_pools={"a": 2, "b": 2}` (`--node-pools a=2,b=2`) labels the first nodes
             `run.ai/node-pool: <pool>`; `node_labels` (`--node-label k=v`) labels every node;
             `node_resources` (`--node-resource vendor.example/foo=8`) adds extended resources to every node.
  knative    `autoscaling.knative.dev/min-scale` / `max-scale` on the template set the pod count (at least 1).
  kubeflow   `kubeflow.org/v1` PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob (`kubeflow=False` leaves them out) run
             as the Training Operator runs them (controllers/kubeflow.py): a pod `<job>-<type>-<index>` per replica,
             success with the master replica. `gang="scheduler-plugins"|"volcano"` serves that PodGroup API, and
             the scheduler then starts a group's pods only all together (minMember) or not at all.
  deletion   propagation as on a real server: Background by default, except batch/v1 Jobs, which orphan
             their pods unless asked otherwise (with the server's Warning header).
  TLS        `tls_cert`/`tls_key` serve HTTPS; kubectl sends bearer tokens only over TLS.

API server: held to the real kube-apiserver v1.20.2 by tests/differential — /openapi/v2 (JSON, and gnostic
protobuf for kubectl's validation; openapi.py), server-side apply with managedFields and conflicts (managed.py),
list snapshots and continue expiry, resourceVersionMatch, watch bookmarks, request-option and decoding errors,
core/v1 discovery with its subresources (subresources.py), events.k8s.io/v1 as a view of core Events
(eventsv1.py). Bodies are JSON or YAML; protobuf (kubectl's typed `create` commands) is 415.

History: the last `history` writes are kept, for watches that resume and for paged lists, whose later pages show
the kind as it was at the first page; `sim.compact()` (or `POST /_sim/compact`) forgets them all, as etcd's
compaction does, so that old continue tokens and watch resourceVersions answer 410 Expired.

Layout: the API server (api, store, server, patch, validation, tables, …) at the top; its controller manager
(loop, garbage collection, Jobs, Deployments, Knative-style serving) in controllers/; the node side (scheduler,
kubelet, events, metrics) in node/ — which also drives any other API server over HTTP, as KWOK does
(`python -m kubesim.node.remote --server URL --token T`, node/remote.py; `make e2e-real` runs it against a
real kube-apiserver).

HTTP extras (same bearer token): `GET /_sim/stats`, `POST /_sim/stats/reset`, `POST /_sim/compact`, `GET|POST /_sim/faults` with
`{"outage", "latencyMs", "pullFailImages", "crashImages"}` (they keep answering during an outage), and a
Prometheus instant-query API at `/prometheus/api/v1/query` (see node/metrics.py for the supported subset).
"""

from .sim import KubeSim

__all__ = ["KubeSim"]
