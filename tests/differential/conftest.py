"""Differential tests: the same HTTP request to kubesim and to the real kube-apiserver (the release of
scripts/kube/stack/versions.env), compared on status,
reason and body shape. `apiserver` is kubesim always, and the real control plane of `make e2e-real` under the
`real` marker (`pytest -m real`), so `make test` runs the kubesim side only.

Requests go out as plain HTTP (requests), not through the official client, so what is compared is what the
servers answer. Each test states the real server's answer once (as probed on v1.35.8) and holds both to it."""

import json
import time
import uuid

import pytest
import requests

from kubesim import KubeSim

TOKEN = "differential-token"


class Target:
    """One API server under test: `request()` sends as its admin; `compact()` forgets the history (etcd's
    compaction on the real server, `KubeSim.compact` on kubesim)."""

    def __init__(self, name: str, url: str, token: str, verify, compact):
        self.name, self.url, self._compact = name, url, compact
        self.session, self.verify = requests.Session(), verify
        self.session.headers["Authorization"] = f"Bearer {token}"

    def request(self, method: str, path: str, *, body=None, content_type: str = "application/json",
                accept: str = "application/json", params=None, raw: bytes | None = None, stream: bool = False,
                timeout: float = 30) -> requests.Response:
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        headers = {"Accept": accept}
        if data is not None:
            headers["Content-Type"] = content_type
        # verify per request: a session-level setting loses to REQUESTS_CA_BUNDLE in the environment.
        return self.session.request(method, self.url + path, data=data, headers=headers, params=params,
                                    stream=stream, timeout=timeout, verify=self.verify)

    def json(self, method: str, path: str, **kwargs) -> tuple[int, dict]:
        response = self.request(method, path, **kwargs)
        return response.status_code, response.json()

    def namespace(self) -> str:
        """A new namespace, once it holds what the controller manager puts in each: the `default`
        ServiceAccount (pods need it) and the `kube-root-ca.crt` ConfigMap."""
        name = f"d-{uuid.uuid4().hex[:8]}"
        response = self.request("POST", "/api/v1/namespaces", body={"metadata": {"name": name}})
        assert response.status_code == 201, response.text
        deadline = time.monotonic() + 30
        for path in (f"/api/v1/namespaces/{name}/serviceaccounts/default",
                     f"/api/v1/namespaces/{name}/configmaps/kube-root-ca.crt"):
            while self.request("GET", path).status_code != 200:
                assert time.monotonic() < deadline, f"{path} did not appear"
                time.sleep(0.1)
        return name

    def compact(self) -> None:
        self._compact()


@pytest.fixture(scope="session")
def kubesim_target():
    sim = KubeSim(nodes=1, gpus_per_node=1, token=TOKEN, history=500, pull_seconds=0.05, run_seconds=0.2,
                  tick=0.02).start()
    yield Target("kubesim", sim.url, TOKEN, True, sim.compact)
    sim.stop()


@pytest.fixture(params=["kubesim", pytest.param("real", marks=pytest.mark.real)])
def apiserver(request, kubesim_target):
    if request.param == "kubesim":
        return kubesim_target
    real = request.getfixturevalue("real_apiserver")
    return Target("real", real.url, real.token, real.ca_file, real.compact)


def status_shape(body: dict) -> dict:
    """What two Status bodies must share: kind, status, reason, code, and the keys of their details."""
    details = body.get("details") or {}
    return {"kind": body.get("kind"), "status": body.get("status"), "reason": body.get("reason"),
            "code": body.get("code"), "details": sorted(details),
            "causes": [(c.get("reason"), c.get("field")) for c in details.get("causes") or []]}
