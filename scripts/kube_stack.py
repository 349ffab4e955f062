"""The real cluster of `make e2e-real`: scripts/realkube.py's control plane (etcd, kube-apiserver,
kube-controller-manager of a current release) with, on loopback ports:

- KWOK playing `gpu_nodes` GPU nodes (`kwok-gpu-N`, `nvidia.com/gpu` capacity, `run.ai/node-pool=<node_pool>`);
- KAI Scheduler: scheduler, binder, pod grouper, pod-group controller, queue controller and its admission webhook
  (GPU sharing on), with its CRDs, ClusterRoles (one ServiceAccount each), priority classes and default queues;
- the Kubeflow training operator with its CRDs (optional: `training_operator=False` leaves kubeflow.org to
  whoever else plays it, e.g. kubesim's node side);
- kube-scheduler only when asked (`kube_scheduler=True`): pods that do not name KAI are bound by kubesim's node
  side in the tests, and KWOK's nodes are KAI's alone.

    python -m scripts.kube_stack [--gpu-nodes 4] [--no-training-operator] [WORKDIR]
    # prints the admin kubeconfig's path and what runs; Ctrl-C stops it all

Each component logs to WORKDIR/<name>.log. Binaries and manifests: scripts/kube/build_stack.sh (cached)."""

import argparse
import signal
import sys
import threading
import time
from pathlib import Path

import yaml

from scripts import kube_objects as objs
from scripts.realkube import RealKube, binary, ensure_stack, free_port, kubeconfig_text, versions


class Stack(RealKube):
    def __init__(self, *, workdir: str | Path | None = None, gpu_nodes: int = 4, gpus_per_node: int = 8,
                 node_pool: str | None = "default", kai: bool = True, training_operator: bool = True,
                 kube_scheduler: bool = False, pod_start_ms: int = 200, job_run_ms: int = 2000):
        super().__init__(workdir=workdir)
        self.gpu_nodes, self.gpus_per_node, self.node_pool = gpu_nodes, gpus_per_node, node_pool
        self.kai, self.training_operator, self.kube_scheduler = kai, training_operator, kube_scheduler
        self.pod_start_ms, self.job_run_ms = pod_start_ms, job_run_ms
        self.ports: dict[str, int] = {}  # component -> the loopback port it serves (metrics, webhook, ...)
        self._shards_stop = threading.Event()

    @property
    def manifests(self) -> Path:
        return ensure_stack() / "manifests"

    def start(self, timeout: float = 180) -> "Stack":
        super().start(timeout)
        self._wait(lambda: self.get("/api/v1/namespaces/default/serviceaccounts/default"), timeout,
                   "the service-account controller")
        if self.kai:
            self._install_kai(timeout)
        if self.training_operator:
            self._start_training_operator(timeout)
        if self.gpu_nodes:
            self._start_kwok(timeout)
        if self.kube_scheduler:
            self._spawn("kube-scheduler", [binary("kube-scheduler"), f"--kubeconfig={self.kubeconfig}",
                                           f"--authentication-kubeconfig={self.kubeconfig}",
                                           f"--authorization-kubeconfig={self.kubeconfig}",
                                           "--leader-elect=false", "--secure-port=0"])
        return self

    def stop(self) -> None:
        self._shards_stop.set()  # no scheduler started for a shard while the stack goes down
        time.sleep(0.1)
        super().stop()

    # --- writing objects ---------------------------------------------------------------------------------------

    def create(self, obj: dict) -> dict:
        """Create `obj`; one that exists already is left as it is."""
        return self.call("POST", objs.api_path(obj), obj, ok_statuses=(409,))

    def install_crds(self, folder: Path, timeout: float) -> list[str]:
        names = []
        for path in sorted(folder.glob("*.yaml")):
            for crd in objs.load_yaml(path):
                self.create(crd)
                names.append(crd["metadata"]["name"])
        for name in names:
            self._wait(lambda n=name: any(
                c["type"] == "Established" and c["status"] == "True" for c in (self.get(
                    f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{n}").get("status") or {})
                .get("conditions") or ()), timeout, f"CRD {name}")
        return names

    def identity(self, account: str, ns: str, *, cluster_role: str | None = None, name: str | None = None) -> str:
        """A ServiceAccount (bound to `cluster_role`), and a kubeconfig file with a token of it: the component
        runs as KAI's chart or the operator's manifests would run it, under RBAC."""
        self.create(objs.namespace(ns))
        self.create(objs.service_account(account, ns))
        if cluster_role:
            self.create(objs.cluster_role_binding(cluster_role, account, ns))
        token = self.call("POST", f"/api/v1/namespaces/{ns}/serviceaccounts/{account}/token",
                          {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                           "spec": {"expirationSeconds": 7 * 24 * 3600}})["status"]["token"]
        path = self.workdir / f"{name or account}.kubeconfig"
        path.write_text(kubeconfig_text(server=self.url, ca_pem=self.ca_pem, token=token, user=account))
        return str(path)

    def _spawn_as(self, name: str, argv: list[str], kubeconfig: str, **env: str) -> None:
        """`_spawn` with the component's own kubeconfig (controller-runtime reads KUBECONFIG)."""
        self._spawn(name, argv, env={"KUBECONFIG": kubeconfig, **env})

    def _port(self, component: str) -> int:
        self.ports[component] = port = free_port()
        return port

    def _addr(self, component: str) -> str:
        return f"127.0.0.1:{self._port(component)}"

    # --- KAI Scheduler -------------------------------------------------------------------------------------------

    def _install_kai(self, timeout: float) -> None:
        kai = self.manifests / "kai"
        self.install_crds(kai / "crds", timeout)
        for folder in ("rbac", "priorityclasses"):
            for path in sorted((kai / folder).glob("*.yaml")):
                for obj in objs.load_yaml(path):
                    self.create(obj)
        self.create(objs.nvidia_runtime_class())
        for queue in objs.kai_default_queues():
            self.create(queue)
        self.create(objs.namespace(objs.KAI_RESERVATION_NAMESPACE))
        self.create(objs.service_account(objs.KAI_RESERVATION_NAMESPACE, objs.KAI_RESERVATION_NAMESPACE))
        self.create(objs.role_binding("kai-resource-reservation", objs.KAI_RESERVATION_NAMESPACE,
                                      objs.KAI_RESERVATION_NAMESPACE))
        configs = {}
        for process, (role_file, account) in objs.KAI_COMPONENTS.items():
            role = objs.load_yaml(kai / "rbac" / f"{role_file}.yaml")[0]["metadata"]["name"]
            configs[process] = self.identity(account, objs.KAI_NAMESPACE, cluster_role=role, name=process)
        common = ["--scheduler-name", objs.KAI_SCHEDULER_NAME]
        probes = lambda c: ["--metrics-bind-address", self._addr(c + "/metrics"),  # noqa: E731
                            "--health-probe-bind-address", self._addr(c + "/probes")]
        self._start_admission(configs["kai-admission"], common, probes, timeout)
        self._scheduler_config = (common, configs["kai-scheduler"])
        self._start_scheduler(None)
        threading.Thread(target=self._follow_shards, name="kai-shards", daemon=True).start()
        self._spawn_as("kai-binder", [
            binary("kai-binder"), *common, *probes("kai-binder"),
            "--resource-reservation-namespace", objs.KAI_RESERVATION_NAMESPACE,
            "--resource-reservation-service-account", objs.KAI_RESERVATION_NAMESPACE,
            "--resource-reservation-app-label", objs.KAI_RESERVATION_NAMESPACE,
            "--resource-reservation-pod-image", "ghcr.io/nvidia/kai-scheduler/resource-reservation",
            "--fake-gpu-nodes"], configs["kai-binder"])
        self._spawn_as("kai-podgrouper", [
            binary("kai-podgrouper"), *common, *probes("kai-podgrouper"), "--queue-label-key", objs.KAI_QUEUE_LABEL,
            "--nodepool-label-key", objs.KAI_NODE_POOL_LABEL], configs["kai-podgrouper"])
        # Their validating webhooks (Queue, PodGroup) stay off: they listen on 9443 on every interface, with no flag
        # to move them, which two controllers (or two stacks) on one machine cannot share; the CRDs' schemas
        # still validate. Its metrics listen on :8080 whatever --metrics-bind-address says (v0.12.0 reads the flag
        # and does not pass it on), so one machine runs one stack at a time: `make e2e-real` in one process.
        self._spawn_as("kai-podgroupcontroller", [
            binary("kai-podgroupcontroller"), *common, *probes("kai-podgroupcontroller"),
            "--enable-podgroup-webhook=false"], configs["kai-podgroupcontroller"])
        self._spawn_as("kai-queuecontroller", [
            binary("kai-queuecontroller"), "--queue-label-key", objs.KAI_QUEUE_LABEL,
            "--metrics-listen-address", self._addr("kai-queuecontroller"), "--enable-webhook=false"],
            configs["kai-queuecontroller"])

    def _start_scheduler(self, shard: str | None) -> None:
        """A KAI scheduler for one shard (None: the default shard, the nodes, queues and pod groups without the
        partition label), as KAI's operator runs one per SchedulingShard."""
        common, kubeconfig = self._scheduler_config
        name = "kai-scheduler" + (f"-{shard}" if shard else "")
        partition = ["--partition-label-value", shard] if shard else []
        self._spawn_as(name, [
            binary("kai-scheduler"), *common, "--namespace", objs.KAI_NAMESPACE,
            "--nodepool-label-key", objs.KAI_NODE_POOL_LABEL, *partition, "--listen-address", self._addr(name),
            "--plugin-server-port", str(self._port(name + "/plugins")),
            "--resource-reservation-app-label", objs.KAI_RESERVATION_NAMESPACE, "--schedule-period", "1s",
            # an evicted pod gets DisruptionTarget (reason PreemptionByScheduler) before its delete, which a Job's
            # podFailurePolicy can ignore: a reclaimed training is recreated, not counted as a failure
            "--update-pod-eviction-condition=true", "--leader-elect=false", "--v=1"], kubeconfig)

    def _follow_shards(self) -> None:
        """KAI's operator's part for SchedulingShards (the operator itself deploys images; here the binaries run):
        a scheduler for each shard's `partitionLabelValue`, started when the shard appears."""
        while not self._shards_stop.wait(1.0):
            try:
                shards = self.get("/apis/kai.scheduler/v1/schedulingshards").get("items") or []
            except Exception:  # noqa: BLE001 — the API server restarting (fault scenarios): next second
                continue
            for shard in shards:
                value = (shard.get("spec") or {}).get("partitionLabelValue")
                if value and f"kai-scheduler-{value}" not in self.processes:
                    self._start_scheduler(value)

    def _start_admission(self, kubeconfig: str, common: list, probes, timeout: float) -> None:
        """KAI's admission webhook (GPU sharing's pod mutation: without it the binder refuses fractional pods).
        Its serving certificate is the API server's (127.0.0.1), in the folder controller-runtime reads under
        TMPDIR; the webhook configurations point at its loopback port."""
        tmp = self.workdir / "kai-admission-tmp"
        certs = tmp / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True, exist_ok=True)
        (certs / "tls.crt").write_bytes((self.workdir / "pki" / "server.crt").read_bytes())
        (certs / "tls.key").write_bytes((self.workdir / "pki" / "server.key").read_bytes())
        port = self._port("kai-admission")
        self._spawn_as("kai-admission", [
            binary("kai-admission"), *common, *probes("kai-admission"), "--webhook-addr", str(port),
            "--gpu-sharing-enabled=true", "--fake-gpu-nodes"], kubeconfig, TMPDIR=str(tmp))
        self._wait(lambda: self._listening(port), timeout, "kai-admission's webhook")
        for config in objs.kai_webhooks(port, self.ca_pem):
            self.create(config)

    @staticmethod
    def _listening(port: int) -> bool:
        import socket

        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    # --- the training operator ---------------------------------------------------------------------------------

    def _start_training_operator(self, timeout: float) -> None:
        folder = self.manifests / "training-operator"
        self.install_crds(folder / "crds", timeout)
        role = objs.load_yaml(folder / "rbac" / "role.yaml")[0]
        self.create(role)
        ns = objs.TRAINING_OPERATOR_NAMESPACE
        kubeconfig = self.identity("training-operator", ns, cluster_role=role["metadata"]["name"])
        # Its certificate rotator fills this Secret and waits for the files a pod would mount from it, at a fixed
        # /tmp path: they are written there (any valid pair: no webhook configuration sends it requests — its
        # validating webhook is not registered; the CRDs' schemas still validate).
        self.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "training-operator-webhook-cert",
                                                                         "namespace": ns}})
        certs = Path("/tmp/k8s-webhook-server/serving-certs")
        certs.mkdir(parents=True, exist_ok=True)
        for name, source in (("tls.crt", "server.crt"), ("tls.key", "server.key")):
            if not (certs / name).exists():
                (certs / name).write_bytes((self.workdir / "pki" / source).read_bytes())
        self._spawn_as("training-operator", [
            binary("training-operator"), "--metrics-bind-address", self._addr("training-operator/metrics"),
            "--health-probe-bind-address", self._addr("training-operator/probes"),
            "--webhook-server-port", str(self._port("training-operator/webhook"))],
            kubeconfig, MY_POD_NAMESPACE=ns)

    # --- KWOK's GPU nodes --------------------------------------------------------------------------------------

    def _start_kwok(self, timeout: float) -> None:
        config = self.workdir / "kwok.yaml"
        # exec and port-forward into KWOK's pods (the API server reaches KWOK's kubelet server): a command runs
        # locally in a folder of its own, and container port 8888 is the local port `ports["pod-8888"]`, where a
        # test serves what the pod would.
        self.ports["pod-8888"] = free_port()
        exec_root = self.workdir / "kwok-exec"
        exec_root.mkdir(exist_ok=True)
        config.write_text(yaml.safe_dump_all([*objs.kwok_stages(
            self.manifests / "kwok" / "stages", start_ms=self.pod_start_ms, complete_ms=self.job_run_ms),
            *objs.kwok_exec_and_forward(exec_root, {8888: self.ports["pod-8888"]})]))
        server_port = self._port("kwok")
        self._spawn("kwok", [
            binary("kwok"), f"--kubeconfig={self.kubeconfig}", f"--config={config}",
            f"--manage-nodes-with-annotation-selector={objs.KWOK_NODE_ANNOTATION}=fake",
            "--cidr=10.246.0.0/16", "--node-ip=127.0.0.1", f"--server-address=127.0.0.1:{server_port}",
            # The nodes' kubelet port is KWOK's server: the API server reaches it there for exec and port-forward.
            f"--node-port={server_port}",
            "--node-lease-duration-seconds=40", "--v=WARN"])
        for index in range(self.gpu_nodes):
            self.create(objs.kwok_node(index, gpus=self.gpus_per_node, cpu="64", memory="512Gi",
                                       pool=self.node_pool))
        self._wait(lambda: all(any(c["type"] == "Ready" and c["status"] == "True"
                                   for c in (n.get("status") or {}).get("conditions") or ())
                               for n in self.gpu_node_objects()), timeout, "KWOK's nodes Ready")

    def gpu_node_objects(self) -> list[dict]:
        return self.get("/api/v1/nodes?labelSelector=type%3Dkwok")["items"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workdir", nargs="?")
    parser.add_argument("--gpu-nodes", type=int, default=4)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--node-pool", default="default")
    parser.add_argument("--no-kai", action="store_true")
    parser.add_argument("--no-training-operator", action="store_true")
    parser.add_argument("--kube-scheduler", action="store_true")
    args = parser.parse_args(argv)
    started = time.monotonic()
    stack = Stack(workdir=args.workdir, gpu_nodes=args.gpu_nodes, gpus_per_node=args.gpus_per_node,
                  node_pool=args.node_pool or None, kai=not args.no_kai,
                  training_operator=not args.no_training_operator, kube_scheduler=args.kube_scheduler)
    try:
        stack.start()
        info = stack.get("/version")
        print(f"kube-apiserver {info['gitVersion']} at {stack.url} (started in {time.monotonic() - started:.0f}s)\n"
              f"versions: {versions()}\nrunning: {', '.join(stack.processes)}\nlogs: {stack.workdir}/*.log\n"
              f"export KUBECONFIG={stack.kubeconfig}   # admin; Ctrl-C stops it all", flush=True)
        signal.sigwait({signal.SIGINT, signal.SIGTERM})
    finally:
        stack.stop()
    return 0


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    sys.exit(main())
