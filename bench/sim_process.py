"""The simulated cluster in a process of its own, driven through a pipe: the benchmark writes objects into its
store directly (HTTP would time the simulator's request path for 100,000 objects) while its API server, watch
streams and controllers run on their own interpreter, not on the benchmark's."""

import multiprocessing
import threading
import time


def _serve(conn, options: dict) -> None:
    from kubesim import KubeSim

    sim = KubeSim(**options)
    sim.start()
    conn.send(sim.url)
    lock = threading.Lock()

    def handle(name, args):
        if name == "create":  # [(apiVersion, kind, namespace or None, object)]
            with sim.store.lock:
                for api_version, kind, namespace, obj in args[0]:
                    sim.api.create(sim.registry.by_kind(api_version, kind), namespace, obj)
            return None
        if name == "condition":  # (apiVersion, kind, [(namespace, name)], condition): add it to each status
            api_version, kind, names, condition = args
            key = sim.registry.by_kind(api_version, kind).key
            with sim.store.lock:
                for namespace, object_name in names:
                    obj = sim.store.get(key, namespace, object_name)
                    status = dict(obj.get("status") or {})
                    status["conditions"] = [*(status.get("conditions") or []), condition]
                    sim.store.update(key, {**obj, "metadata": dict(obj["metadata"]), "status": status})
            return None
        if name == "count":  # (key, field path, value): objects of a kind whose field has the value
            key, path, value = args
            with sim.store.lock:
                found = 0
                for obj in sim.store.iter(key):
                    for part in path:
                        obj = (obj or {}).get(part)
                    found += obj == value
            return found
        if name == "requests":
            return sum(sim.stats().values())
        if name == "stop":
            sim.stop()
            return None
        raise ValueError(name)

    while True:
        name, args = conn.recv()
        try:
            with lock:
                conn.send(("ok", handle(name, args)))
        except Exception as exc:  # noqa: BLE001 - reported to the caller, which raises it
            conn.send(("error", repr(exc)))
        if name == "stop":
            return


class SimProcess:
    def __init__(self, **options):
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, options), daemon=True)
        self.process.start()
        self.url = self.conn.recv()

    def call(self, name: str, *args):
        self.conn.send((name, args))
        status, value = self.conn.recv()
        if status != "ok":
            raise RuntimeError(f"simulated cluster: {value}")
        return value

    def wait_for(self, predicate, *, timeout: float, what: str, interval: float = 2.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                raise TimeoutError(f"the simulated cluster: no {what} after {timeout:.0f}s")
            time.sleep(interval)

    def stop(self) -> None:
        try:
            self.call("stop")
        finally:
            self.process.join(timeout=30)
            if self.process.is_alive():
                self.process.kill()
