"""`python -m studio.kubesim`: run the simulated cluster in the foreground, logging one line per request."""

import argparse
import logging
import signal
import threading

from .sim import KubeSim


def _mig(value: str) -> dict[str, int]:
    """`1g.10gb=7,3g.40gb=2` -> {"1g.10gb": 7, "3g.40gb": 2}"""
    out = {}
    for part in filter(None, value.split(",")):
        profile, _, count = part.partition("=")
        out[profile.strip()] = int(count)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m studio.kubesim", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6443)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--cpu-per-node", default="64")
    parser.add_argument("--memory-per-node", default="512Gi")
    parser.add_argument("--mig-per-node", type=_mig, default={}, help="MIG slices per node, e.g. 1g.10gb=7,3g.40gb=2")
    parser.add_argument("--knative", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--token", default="kubesim-token", help="bearer token clients must send")
    parser.add_argument("--no-auth", action="store_true", help="accept requests without a token")
    parser.add_argument("--pull-seconds", type=float, default=0.3)
    parser.add_argument("--run-seconds", type=float, default=1.0)
    parser.add_argument("--schedule-seconds", type=float, default=0.0, help="how long a new pod stays unscheduled")
    parser.add_argument("--tick", type=float, default=0.05)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate (kubectl sends tokens only over TLS)")
    parser.add_argument("--tls-key", help="the certificate's PEM private key")
    parser.add_argument("--quiet", action="store_true", help="log warnings only, not every request")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING if args.quiet else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s %(message)s")
    sim = KubeSim(nodes=args.nodes, gpus_per_node=args.gpus_per_node, cpu_per_node=args.cpu_per_node,
                  memory_per_node=args.memory_per_node, knative=args.knative,
                  token=None if args.no_auth else args.token, pull_seconds=args.pull_seconds,
                  run_seconds=args.run_seconds, schedule_seconds=args.schedule_seconds, tick=args.tick, history=args.history, host=args.host, port=args.port,
                  mig_per_node=args.mig_per_node, tls_cert=args.tls_cert, tls_key=args.tls_key)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    sim.start()
    logging.getLogger("studio.kubesim").warning("kubesim listening on %s (%d nodes x %d GPUs, knative %s)", sim.url,
                                                args.nodes, args.gpus_per_node, "on" if args.knative else "off")
    done.wait()
    sim.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
