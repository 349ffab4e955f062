"""Slow bodies against the production web start (security round 3, S21), on loopback and bounded in time.

    python -m scripts.slow_bodies [--clients 50] [--seconds 8] [--body-timeout 4] [--worker-class gevent|sync]

Starts the web tier as the image does (`gunicorn config.wsgi:application --workers 3`, reading gunicorn.conf.py
from the checkout, DEBUG off) on a free loopback port, opens `--clients` connections that each send the headers of
a 100 kB POST and the first byte of its body, then nothing more; while they hang, asks `/healthz` once every 0.2 s
for `--seconds` and prints its latencies; then says how each slow client was answered (408 after the body
deadline) and whether a whole POST still gets through. `--worker-class sync` overrides the file (command-line
options win), which is how the tier ran before: /healthz then stops answering. Prints one JSON object."""

import argparse
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BODY = 100_000


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_web(port: int, *, worker_class: str | None, body_timeout: float, folder: str) -> subprocess.Popen:
    """The image's command (Dockerfile CMD), on a loopback port; a sync override when asked."""
    from cryptography.fernet import Fernet

    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL")}
    env.update(DEBUG="false", SECRET_KEY=secrets.token_urlsafe(50), FIELD_ENCRYPTION_KEY=Fernet.generate_key().decode(),
               ALLOWED_HOSTS="127.0.0.1,localhost", STUDIO_VAR_DIR=folder, LOG_LEVEL="WARNING",
               REQUEST_BODY_TIMEOUT_SECONDS=str(body_timeout))
    command = [sys.executable, "-m", "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}",
               "--workers", "3", "--access-logfile", "-"]
    if worker_class:
        command += ["--worker-class", worker_class]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
            return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("the web tier did not start within 60 s")


class SlowClient(threading.Thread):
    """Sends a POST's headers and one byte of its body, then waits for whatever the server answers."""

    def __init__(self, port: int, wait: float):
        super().__init__(daemon=True)
        self.port, self.wait, self.status, self.answered_after = port, wait, None, None

    def run(self):
        started = time.monotonic()
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=self.wait) as sock:
                sock.sendall(b"POST /api/v1/token HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                             + f"Content-Length: {BODY}\r\n\r\n".encode() + b"{")
                answer = sock.recv(200)
                if answer:
                    self.status = int(answer.split(b" ", 2)[1])
                    self.answered_after = round(time.monotonic() - started, 2)
        except (OSError, ValueError, IndexError):
            pass


def healthz_latencies(port: int, seconds: float, *, patience: float = 2) -> tuple[list[float], int]:
    """(latency in ms of each /healthz that answered 200, how many did not within `patience` seconds)."""
    answered, failed = [], 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=patience) as response:
                if response.status == 200:
                    answered.append((time.monotonic() - started) * 1000)
                else:
                    failed += 1
        except OSError:
            failed += 1
        time.sleep(0.2)
    return answered, failed


def whole_post(port: int) -> int | None:
    """A complete 100 kB form POST to the login page while the slow ones hang: read whole and answered (403: a
    post without the CSRF cookie is refused — after its body was read); None when nothing answered in 5 s."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/login", data=b"username=x&password=" + b"y" * BODY,
                                     method="POST", headers={"Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def measure(*, clients: int = 50, seconds: float = 8, body_timeout: float = 4, worker_class: str | None = None,
            patience: float = 2) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        port = free_port()
        process = start_web(port, worker_class=worker_class, body_timeout=body_timeout, folder=folder)
        try:
            baseline, _ = healthz_latencies(port, 1)
            slow = [SlowClient(port, wait=body_timeout + seconds + 10) for _ in range(clients)]
            for client in slow:
                client.start()
            time.sleep(0.5)  # every slow client connected and sent its first byte
            answered, failed = healthz_latencies(port, seconds, patience=patience)
            post = whole_post(port)
            for client in slow:
                client.join(timeout=body_timeout + 5)
        finally:
            os.killpg(process.pid, 9)
            process.wait(timeout=10)
    statuses = [c.status for c in slow]
    return {
        "start": "gunicorn config.wsgi:application --workers 3 (gunicorn.conf.py"
                 + (f", --worker-class {worker_class})" if worker_class else ")"),
        "slow_clients": clients,
        "healthz_before_ms": {"median": _ms(statistics.median(baseline)) if baseline else None},
        "healthz_during": {"answered": len(answered), "failed": failed,
                           "median_ms": _ms(statistics.median(answered)) if answered else None,
                           "max_ms": _ms(max(answered)) if answered else None},
        "whole_post_during": post,
        "slow_clients_answered": {str(s): statuses.count(s) for s in sorted(set(statuses), key=str)},
        "slow_clients_answered_after_s": sorted({c.answered_after for c in slow if c.answered_after})[:3],
    }


def _ms(value: float) -> float:
    return round(value, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=8)
    parser.add_argument("--body-timeout", type=float, default=4)
    parser.add_argument("--worker-class", default=None)
    args = parser.parse_args()
    print(json.dumps(measure(clients=args.clients, seconds=args.seconds, body_timeout=args.body_timeout,
                             worker_class=args.worker_class), indent=2))


if __name__ == "__main__":
    main()
