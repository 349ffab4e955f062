"""`python -m kubesim`: run the simulated cluster in the foreground, logging one line per request."""

import argparse
import logging
import signal
import tempfile
import threading
from pathlib import Path

from . import certs
from .sim import KubeSim


def _mig(value: str) -> dict[str, int]:
    """`1g.10gb=7,3g.40gb=2` -> {"1g.10gb": 7, "3g.40gb": 2}"""
    out = {}
    for part in filter(None, value.split(",")):
        profile, _, count = part.partition("=")
        out[profile.strip()] = int(count)
    return out


def _label(value: str) -> tuple[str, str]:
    """`run.ai/type=a100` -> ("run.ai/type", "a100")"""
    key, sep, val = value.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"{value!r}: give key=value")
    return key.strip(), val.strip()


def _forward(text: str) -> tuple[int, tuple[str, int]]:
    port, _, address = text.partition("=")
    host, _, target = address.rpartition(":")
    if not (port.isdigit() and target.isdigit() and host):
        raise argparse.ArgumentTypeError(f"{text!r} is not PORT=HOST:PORT")
    return int(port), (host, int(target))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kubesim", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6443)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--cpu-per-node", default="64")
    parser.add_argument("--memory-per-node", default="512Gi")
    parser.add_argument("--mig-per-node", type=_mig, default={}, help="MIG slices per node, e.g. 1g.10gb=7,3g.40gb=2")
    parser.add_argument("--node-pools", type=_mig, default={},
                        help="nodes per node pool, labelled run.ai/node-pool=<pool>, e.g. pool-a=2,pool-b=2")
    parser.add_argument("--node-label", type=_label, action="append", default=[],
                        help="a label of every node, e.g. run.ai/type=a100 (repeatable)")
    parser.add_argument("--node-resource", type=_label, action="append", default=[],
                        help="an extended resource every node offers, e.g. hardware-vendor.example/foo=8 (repeatable)")
    parser.add_argument("--knative", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--kubeflow", action=argparse.BooleanOptionalAction, default=True,
                        help="serve the Kubeflow Training Operator's kubeflow.org/v1 jobs")
    parser.add_argument("--gang", choices=["scheduler-plugins", "volcano"],
                        help="serve this gang scheduler's PodGroup API")
    parser.add_argument("--kai", action=argparse.BooleanOptionalAction, default=False,
                        help="run KAI Scheduler's queues, pod groups and preemption for kai-scheduler pods")
    parser.add_argument("--token", default="kubesim-token", help="bearer token clients must send")
    parser.add_argument("--no-auth", action="store_true", help="accept requests without a token")
    parser.add_argument("--pull-seconds", type=float, default=0.3)
    parser.add_argument("--run-seconds", type=float, default=1.0)
    parser.add_argument("--schedule-seconds", type=float, default=0.0, help="how long a new pod stays unscheduled")
    parser.add_argument("--tick", type=float, default=0.05)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (kubectl sends tokens only over TLS)")
    parser.add_argument("--tls-key", help="the certificate's PEM private key")
    parser.add_argument("--tls-port", type=int, help="also serve HTTPS on this port (a throwaway certificate unless "
                                                     "--tls-cert is given), for kubectl")
    parser.add_argument("--kubeconfig", help="with --tls-port: write an admin kubeconfig for kubectl here")
    parser.add_argument("--quiet", action="store_true", help="log warnings only, not every request")
    parser.add_argument("--exec-root", help="the folder under which exec runs, a folder per pod (default: a new "
                                            "temporary one)")
    parser.add_argument("--port-forward", type=_forward, action="append", default=[], metavar="PORT=HOST:PORT",
                        help="a pod port's stand-in for port-forward, for every pod, e.g. 8888=127.0.0.1:8888")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if args.tls_port is not None and not args.tls_cert:
        folder = Path(args.kubeconfig).parent if args.kubeconfig else Path(tempfile.mkdtemp(prefix="kubesim-tls-"))
        args.tls_cert, args.tls_key = certs.self_signed(folder)
    sim = KubeSim(nodes=args.nodes, gpus_per_node=args.gpus_per_node, cpu_per_node=args.cpu_per_node,
                  memory_per_node=args.memory_per_node, knative=args.knative,
                  token=None if args.no_auth else args.token, pull_seconds=args.pull_seconds,
                  run_seconds=args.run_seconds, schedule_seconds=args.schedule_seconds, tick=args.tick, history=args.history, host=args.host, port=args.port,
                  mig_per_node=args.mig_per_node, tls_cert=args.tls_cert, tls_key=args.tls_key,
                  tls_port=args.tls_port, node_pools=args.node_pools, node_labels=dict(args.node_label),
                  node_resources=dict(args.node_resource), kubeflow=args.kubeflow, gang=args.gang,
                  kai=args.kai, exec_root=args.exec_root)
    for port, (host, target) in args.port_forward:
        sim.forward_port(port, target, host)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    sim.start()
    if args.kubeconfig and args.tls_port is not None:
        certs.write_kubeconfig(args.kubeconfig, server=f"https://{args.host}:{sim.tls_port}", ca_file=args.tls_cert,
                               token=None if args.no_auth else args.token)
    logging.getLogger("kubesim").warning("kubesim listening on %s (%d nodes x %d GPUs, knative %s, KAI %s)",
                                         sim.url, args.nodes, args.gpus_per_node, "on" if args.knative else "off",
                                         "on" if args.kai else "off")
    done.wait()
    sim.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
