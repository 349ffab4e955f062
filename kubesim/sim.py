"""KubeSim: the simulated cluster as one object — store, API, HTTP server, controller and metrics — plus the
fault switches and request counters tests use."""

import copy
import ssl
import threading
import time
from collections import Counter

from . import quantity, streams
from .api import Api
from .controllers.controller import Controller
from .node.metrics import Metrics
from .node.podgrouper import seed_priority_classes
from .node.scheduler import GPU_MEMORY_MIB, GPU_MODEL
from .resources import Registry
from .server import Server
from .store import Store, now_rfc3339

PULL_FAIL_MARK, CRASH_MARK = "does-not-exist", "crashloop"
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _image_listed(image: str, listed: set) -> bool:
    repository = image.split("@", 1)[0]
    if ":" in repository.rsplit("/", 1)[-1]:
        repository = repository.rsplit(":", 1)[0]
    return image in listed or repository in listed


STANDARD_STORAGE_CLASS = {
    "metadata": {"name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    "provisioner": "rancher.io/local-path", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate",
    "allowVolumeExpansion": False}


class KubeSim:
    def __init__(self, nodes: int = 4, gpus_per_node: int = 8, cpu_per_node: str = "64",
                 memory_per_node: str = "512Gi", knative: bool = True, token: str | None = "kubesim-token",
                 pull_seconds: float = 0.3, run_seconds: float = 1.0, schedule_seconds: float = 0.0, tick: float = 0.05, history: int = 1000,
                 host: str = "127.0.0.1", port: int = 0, mig_per_node: dict[str, int] | None = None,
                 tls_cert: str | None = None, tls_key: str | None = None, tls_port: int | None = None,
                 node_pools: dict[str, int] | None = None, node_labels: dict[str, str] | None = None,
                 node_resources: dict[str, str] | None = None, kubeflow: bool = True, gang: str | None = None,
                 node_side: bool = True, kai: bool = False, exec_root: str | None = None):
        self.token, self.pull_seconds, self.run_seconds, self.tick = token, pull_seconds, run_seconds, tick
        self.schedule_seconds = schedule_seconds  # how long a new pod waits before the scheduler sees it
        # node_side=False: the API server and a real control plane's controllers only — no Nodes, nobody running
        # pods, no Knative or Training Operator — for a node side elsewhere (kubesim.node.remote) to register its
        # nodes and play them, as on a real server.
        self.node_side = node_side
        if not node_side:
            nodes, node_pools = 0, {}
        self.host, self.port = host, port
        self._tls = None
        # kubectl sends bearer tokens only over TLS: serve HTTPS when given a certificate — on `port`, or, with
        # `tls_port`, on that second port beside plain HTTP on `port` (one cluster, two doors).
        self.tls_port, self._side_tls = tls_port, None
        if tls_cert:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls_cert, tls_key)
            if tls_port is None:
                self._tls = context
            else:
                self._side_tls = context
        self.stopping = False
        # What stands in for containers in exec and port-forward (kubesim/streams.py): a folder per pod, and the
        # local addresses of forwarded ports (`forward_port`).
        self.runtime = streams.Runtime(exec_root)
        self.forward_port = self.runtime.forward_port
        self._faults = {"outage": False, "latency_ms": 0, "pull_fail_images": frozenset(), "crash_images": frozenset()}
        self._stats, self._stats_lock = Counter(), threading.Lock()
        # kubeflow: serve the Training Operator's jobs; gang: "scheduler-plugins" or "volcano" serves its PodGroup.
        # kai: serve KAI Scheduler's CRDs and priority classes, and schedule `kai-scheduler` pods as KAI does.
        self.kai = kai and node_side
        self.registry = Registry(knative, kubeflow=kubeflow, gang=gang, kai=kai)
        self.store = Store(history)
        self.api = Api(self.store, self.registry)
        if tls_cert:
            with open(tls_cert) as cert:
                self.api.root_ca_pem = cert.read()
        node_objects = [node_object(i, gpus_per_node, cpu_per_node, memory_per_node, mig_per_node or {})
                        for i in range(max(nodes, sum((node_pools or {}).values())))]
        _label_nodes(node_objects, node_pools or {}, node_labels or {}, node_resources or {})
        self.controller = Controller(self, [(obj, gpus_per_node, mig_per_node or {}) for obj in node_objects])
        self.metrics = Metrics(self)
        with self.store.lock:
            for name in SYSTEM_NAMESPACES:
                self.api.create(self.registry.by_key["namespaces"], None, {"metadata": {"name": name}}, internal=True)
            for obj in node_objects:
                self.store.create("nodes", obj)
            kubernetes = {"metadata": {"name": "kubernetes", "labels": {"component": "apiserver",
                                                                         "provider": "kubernetes"}},
                          "spec": {"clusterIP": "10.96.0.1", "ports": [{"name": "https", "port": 443,
                                                                        "targetPort": 6443}]}}
            self.api.create(self.registry.by_key["services"], "default", kubernetes, internal=True)
            # The default storage class, as kind's local-path provisioner installs it.
            self.api.create(self.registry.by_key["storageclasses.storage.k8s.io"], None,
                            copy.deepcopy(STANDARD_STORAGE_CLASS), internal=True)
            if self.kai:
                seed_priority_classes(self.controller)
        self._server = self._server_thread = self._side = None

    # --- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> "KubeSim":
        self._server = Server((self.host, self.port), self, self._tls)
        self.port = self._server.server_address[1]
        self._server_thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                               name="kubesim-http", daemon=True)
        self._server_thread.start()
        if self._side_tls is not None:
            self._side = Server((self.host, self.tls_port), self, self._side_tls)
            self.tls_port = self._side.server_address[1]
            threading.Thread(target=self._side.serve_forever, kwargs={"poll_interval": 0.1}, name="kubesim-https",
                             daemon=True).start()
        self.controller.start()
        return self

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("KubeSim.url is known once start() has bound the port")
        return f"{'https' if self._tls else 'http'}://{self.host}:{self.port}"

    def stop(self) -> None:
        self.stopping = True
        with self.store.changed:
            self.store.changed.notify_all()  # open watches notice and end
        for server in (self._server, self._side):
            if server is not None:
                server.shutdown()
                server.server_close()
        self.controller.stop()
        self.runtime.cleanup()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def compact(self) -> int:
        """Forget the history up to now, as the real server's etcd compaction does: watches and continue tokens
        from before it answer 410 Expired. Returns the resourceVersion compacted to."""
        with self.store.lock:
            return self.store.compact()

    # --- faults ----------------------------------------------------------------------------------------------

    def set_faults(self, outage: bool | None = None, latency_ms: float | None = None,
                   pull_fail_images=None, crash_images=None) -> None:
        """Change only the switches given; the rest keep their values."""
        updates = {"outage": None if outage is None else bool(outage),
                   "latency_ms": None if latency_ms is None else max(0.0, float(latency_ms)),
                   "pull_fail_images": None if pull_fail_images is None else frozenset(pull_fail_images),
                   "crash_images": None if crash_images is None else frozenset(crash_images)}
        self._faults = {**self._faults, **{k: v for k, v in updates.items() if v is not None}}

    def faults_snapshot(self) -> dict:
        f = self._faults
        return {"outage": f["outage"], "latencyMs": f["latency_ms"], "pullFailImages": sorted(f["pull_fail_images"]),
                "crashImages": sorted(f["crash_images"])}

    def pull_fails(self, image: str) -> bool:
        return PULL_FAIL_MARK in image or _image_listed(image, self._faults["pull_fail_images"])

    def crashes(self, image: str) -> bool:
        return CRASH_MARK in image or _image_listed(image, self._faults["crash_images"])

    # --- request counters ------------------------------------------------------------------------------------

    def count(self, verb: str, resource: str) -> None:
        with self._stats_lock:
            self._stats[(verb, resource)] += 1

    def stats(self) -> dict:
        with self._stats_lock:
            return dict(self._stats)

    def reset_stats(self) -> None:
        with self._stats_lock:
            self._stats.clear()

    def stats_document(self) -> dict:
        stats = self.stats()
        return {"total": sum(stats.values()),
                "requests": [{"verb": v, "resource": r, "count": n} for (v, r), n in sorted(stats.items())]}


NODE_POOL_LABEL = "run.ai/node-pool"  # the label Run:ai's node pools select nodes by


def _label_nodes(nodes: list[dict], pools: dict[str, int], labels: dict[str, str], resources: dict[str, str]) -> None:
    """`labels` and extended `resources` (`{"vendor.example/foo": "8"}`) on every node; then the first nodes go
    to the pools in order (`{"a": 2, "b": 1}`: nodes 0-1 in a, node 2 in b), labelled NODE_POOL_LABEL=<pool>;
    the rest stay in no pool."""
    names = [name for name, count in pools.items() for _ in range(count)]
    for index, node in enumerate(nodes):
        node["metadata"]["labels"].update(labels)
        node["status"]["capacity"].update(resources)
        node["status"]["allocatable"].update(resources)
        if index < len(names):
            node["metadata"]["labels"][NODE_POOL_LABEL] = names[index]


def node_object(index: int, gpus: int, cpu: str, memory: str, mig: dict) -> dict:
    name = f"sim-node-{index}"
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
              "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64",
              "node.kubernetes.io/instance-type": f"sim.{'gpu' if gpus else 'cpu'}-{gpus}x",
              "topology.kubernetes.io/zone": "sim-zone-a", "node-type": "gpu" if gpus else "cpu"}
    capacity = {"cpu": str(cpu), "memory": str(memory), "pods": "110", "ephemeral-storage": "1Ti"}
    if gpus:
        labels.update({"nvidia.com/gpu.present": "true", "nvidia.com/gpu.product": GPU_MODEL.replace(" ", "-"),
                       "nvidia.com/gpu.count": str(gpus), "nvidia.com/gpu.memory": str(GPU_MEMORY_MIB)})
        capacity["nvidia.com/gpu"] = str(gpus)
    if mig:
        labels["nvidia.com/mig.strategy"] = "mixed"
        capacity.update({f"nvidia.com/mig-{profile}": str(count) for profile, count in mig.items()})
    quantity.parse(cpu), quantity.parse(memory)  # fail fast on a malformed size
    now = now_rfc3339(time.time())
    ready = {"type": "Ready", "status": "True", "lastHeartbeatTime": now, "lastTransitionTime": now,
             "reason": "KubeletReady", "message": "kubelet is posting ready status"}
    pressure = [{"type": t, "status": "False", "lastHeartbeatTime": now, "lastTransitionTime": now,
                 "reason": f"KubeletHasSufficient{r}", "message": f"kubelet has sufficient {m}"}
                for t, r, m in (("MemoryPressure", "Memory", "memory available"),
                                ("DiskPressure", "Disk", "disk space available"), ("PIDPressure", "PID", "PID available"))]
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"podCIDR": f"10.244.{index}.0/24", "podCIDRs": [f"10.244.{index}.0/24"]},
            "status": {"capacity": capacity, "allocatable": dict(capacity), "conditions": pressure + [ready],
                       "addresses": [{"type": "InternalIP", "address": f"172.18.0.{index + 2}"},
                                     {"type": "Hostname", "address": name}],
                       "nodeInfo": {"kubeletVersion": "v1.35.0", "kubeProxyVersion": "v1.35.0",
                                    "containerRuntimeVersion": "containerd://2.1.4", "operatingSystem": "linux",
                                    "architecture": "amd64", "osImage": "Ubuntu 24.04.3 LTS",
                                    "kernelVersion": "6.8.0-85-generic", "machineID": f"kubesim{index:024d}",
                                    "systemUUID": f"kubesim-{index}", "bootID": f"kubesim-boot-{index}"}}}
