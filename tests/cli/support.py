"""The `studio` command as a user runs it: a separate process (`python -m paas_cli`, from this checkout's cli/),
with its own config file, talking to a live test server over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

CLI_SOURCE = Path(__file__).resolve().parents[2] / "cli"


@dataclass
class Result:
    args: list[str]
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@dataclass
class Cli:
    """Runs `studio ARGS…` with a config file of its own under `home`; `transcript` keeps what a terminal shows."""

    home: Path
    env: dict = field(default_factory=dict)
    transcript: list[str] = field(default_factory=list)

    @property
    def config_file(self) -> Path:
        return self.home / "config.json"

    def environment(self, extra: dict | None = None) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("STUDIO_")}
        env.update(PYTHONPATH=str(CLI_SOURCE), STUDIO_CONFIG=str(self.config_file), HOME=str(self.home),
                   COLUMNS="120", **self.env, **(extra or {}))
        return env

    def __call__(self, *args: str, env: dict | None = None, shown: str | None = None, record: bool = True,
                 timeout: float = 60) -> Result:
        completed = subprocess.run([sys.executable, "-m", "paas_cli", *args], env=self.environment(env),
                                   capture_output=True, text=True, timeout=timeout)
        result = Result(list(args), completed.returncode, completed.stdout, completed.stderr)
        if record:
            self.record(shown or "studio " + " ".join(args), result)
        return result

    def record(self, command: str, result: Result) -> None:
        self.transcript.append(f"$ {command}")
        self.transcript += [line for line in (result.out + result.err).rstrip("\n").splitlines()]
        if result.code:
            self.transcript.append(f"$ echo $?\n{result.code}")

    def popen(self, *args: str) -> subprocess.Popen:
        """The command as a background job of a terminal's shell, which `kill -INT %1` (Ctrl-C) stops. A suite run
        from a script in the background (`make test &`) ignores SIGINT, and an ignored signal stays ignored across
        exec, so the command would never see it; a Python handler does not survive exec: the child starts with
        the default, as in a terminal."""
        ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
        if ignored:
            signal.signal(signal.SIGINT, signal.default_int_handler)
        try:
            # PYTHONFAULTHANDLER: a process that will not stop prints every thread's stack when sent SIGABRT.
            return subprocess.Popen([sys.executable, "-m", "paas_cli", *args],
                                    env={**self.environment(), "PYTHONFAULTHANDLER": "1"},
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        finally:
            if ignored:
                signal.signal(signal.SIGINT, signal.SIG_IGN)
