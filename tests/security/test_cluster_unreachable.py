"""A cluster that cannot be reached, in every way we could make one, never turns a read of a pod's log into a 500
(security round 3, S13): the API answers a JSON 503 (or 409 where the cluster's address or credentials are
refused for good), the portal's log panel a note. Each cluster here is a real socket or a real refusal, no stub."""

import socket
import threading

import pytest

from studio.models import Cluster
from tests.security.test_cluster_access import closed_port_url, exec_user, kubeconfig


def _listener(handle) -> str:
    """A TCP server on loopback that does `handle(conn)` with each connection; its http:// URL."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)

    def serve():
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}"


def _garbage(conn):
    conn.recv(65536)
    conn.sendall(b"\x00\x01 not http at all\r\n\r\n")
    conn.close()


def _hang(conn):
    conn.recv(65536)
    threading.Event().wait(30)
    conn.close()


def _reset(conn):
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    conn.close()


CLUSTERS = {
    "a closed port": lambda: {"api_server_url": closed_port_url()},
    "a name that does not resolve": lambda: {"api_server_url": "http://cluster.does-not-exist.invalid:6443"},
    "a server that is not HTTP": lambda: {"api_server_url": _listener(_garbage)},
    "a server that never answers": lambda: {"api_server_url": _listener(_hang)},
    "a server that resets": lambda: {"api_server_url": _listener(_reset)},
    "a metadata address stored before the rules": lambda: {"api_server_url": "http://169.254.169.254"},
    "a kubeconfig with exec stored before the rules": lambda: {
        "api_server_url": "", "kubeconfig": kubeconfig(user=exec_user(__import__("pathlib").Path("/nonexistent")))},
    "no address at all": lambda: {"api_server_url": "", "kubeconfig": ""},
}


@pytest.fixture
def unreachable(world, settings, request):
    settings.KUBE_REQUEST_TIMEOUT_SECONDS = 1
    Cluster.objects.filter(pk=world.org.cluster.pk).update(**request.param())
    return world


@pytest.mark.parametrize("unreachable", CLUSTERS.values(), ids=CLUSTERS.keys(), indirect=True)
@pytest.mark.parametrize("query", ["?tailLines=5", "?follow=true"])
def test_a_pod_log_from_an_unreachable_cluster_is_a_json_503_or_409(unreachable, query, client_for):
    world = unreachable
    api = client_for(world.org.users.platform_admin)
    response = api.get(f"/api/v1/workloads/{world.inference.pk}/pods/{world.pod.uid}/logs{query}")
    assert response.status_code in (409, 503), (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == response.status_code and response.json()["message"]


@pytest.mark.parametrize("unreachable", CLUSTERS.values(), ids=CLUSTERS.keys(), indirect=True)
def test_the_portal_log_panel_says_why_it_has_no_log(unreachable, client):
    world = unreachable
    client.force_login(world.org.users.platform_admin)
    response = client.get(f"/workloads/{world.inference.pk}/logs", {"pod": world.pod.name})
    assert response.status_code == 200 and response["X-Log-Problem"] == "1", response.content[:300]
