"""A server binary the tests start on loopback (Dex, the CNCF distribution registry): its YAML config and log in a
folder of its own, ready once a URL answers, stopped with SIGTERM (SIGKILL after 10 s)."""

import socket
import subprocess
import tempfile
import time
from pathlib import Path

import requests
import yaml


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServedBinary:
    name = "server"

    def __init__(self, binary: str):
        self.binary = binary
        self.folder = Path(tempfile.mkdtemp(prefix=f"{self.name}-"))
        self.process: subprocess.Popen | None = None

    def serve(self, config: dict, *, ready_url: str, ready_codes=(200,), env: dict | None = None) -> None:
        """`<binary> serve <config>`; back once `ready_url` answers one of `ready_codes` (30 s at most)."""
        path = self.folder / "config.yaml"
        path.write_text(yaml.safe_dump(config))
        log = (self.folder / f"{self.name}.log").open("ab")
        self.process = subprocess.Popen([self.binary, "serve", str(path)], stdout=log, stderr=subprocess.STDOUT,
                                        env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}): {self.log()[-2000:]}")
            try:
                if requests.get(ready_url, timeout=1).status_code in ready_codes:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not answer in 30 s: {self.log()[-2000:]}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def log(self) -> str:
        path = self.folder / f"{self.name}.log"
        return path.read_text(errors="replace") if path.exists() else ""
