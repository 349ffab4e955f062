"""A bounded closed-loop HTTP load generator: N keep-alive connections, each sending requests back to back
until a request count or a time limit is reached. Loopback only."""

import http.client
import statistics
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit


@dataclass
class Result:
    requests: int
    errors: int
    seconds: float
    latencies_ms: list[float]

    @property
    def throughput(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile(self, p: float) -> float:
        if not self.latencies_ms:
            return float("nan")
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]

    @property
    def p50(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")

    @property
    def p99(self) -> float:
        return self.percentile(99)


def run(url: str, *, connections: int = 16, max_requests: int = 4000, max_seconds: float = 20.0,
        method: str = "GET", headers: dict | None = None, body_factory=None, expect=(200,)) -> Result:
    """Send up to `max_requests` requests (shared by all connections) for at most `max_seconds`."""
    parts = urlsplit(url)
    assert parts.hostname in ("127.0.0.1", "localhost"), "load is only ever sent to loopback"
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    remaining = [max_requests]
    lock = threading.Lock()
    latencies: list[float] = []
    errors = [0]
    deadline = time.monotonic() + max_seconds

    def worker():
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        local, local_errors = [], 0
        while time.monotonic() < deadline:
            with lock:
                if remaining[0] <= 0:
                    break
                remaining[0] -= 1
            body = body_factory() if body_factory else None
            started = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=headers or {})
                response = conn.getresponse()
                response.read()
                ok = response.status in expect
            except (OSError, http.client.HTTPException):
                ok = False
                conn.close()
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
            local.append((time.perf_counter() - started) * 1000)
            local_errors += 0 if ok else 1
        conn.close()
        with lock:
            latencies.extend(local)
            errors[0] += local_errors

    threads = [threading.Thread(target=worker) for _ in range(connections)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return Result(len(latencies), errors[0], time.monotonic() - started, latencies)
