"""deploy/paas-studio rendered as its users render it: `kubectl kustomize` (any kubectl on PATH)."""

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
FOLDER = ROOT / "deploy" / "paas-studio"


def rendered() -> list[dict]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.fail("No kubectl on PATH. Run `make system-deps` (as root) or install any kubectl.")
    done = subprocess.run([kubectl, "kustomize", str(FOLDER)], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    return [doc for doc in yaml.safe_load_all(done.stdout) if doc]


def by_kind(docs: list[dict], kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in docs if doc["kind"] == kind}
