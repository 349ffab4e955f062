"""kubesim's pods/exec and pods/portforward as the official client speaks them (kubernetes.stream: WebSocket,
`v4.channel.k8s.io`): a command run in the pod's own folder, its exit code on the error channel, and a pod port
served by a local stand-in (KubeSim.forward_port)."""

import http.server
import threading
import time

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.stream import portforward, stream

from tests.conftest import official_client


@pytest.fixture
def pod(kubesim):
    api = client.CoreV1Api(official_client(kubesim))
    namespace = f"streams-{time.monotonic_ns()}"
    api.create_namespace({"metadata": {"name": namespace}})
    api.create_namespaced_pod(namespace, {"metadata": {"name": "box"}, "spec": {
        "containers": [{"name": "main", "image": "busybox"}, {"name": "side", "image": "busybox"}]}})
    deadline = time.monotonic() + 30
    while api.read_namespaced_pod("box", namespace).status.phase != "Running":
        assert time.monotonic() < deadline, "the pod did not start"
        time.sleep(0.1)
    yield api, namespace
    api.delete_namespace(namespace)


def test_exec_runs_in_the_pods_folder_and_reports_the_exit_code(pod):
    api, namespace = pod
    listing = stream(api.connect_get_namespaced_pod_exec, "box", namespace, container="main", command=["ls", "/"],
                     stdout=True, stderr=True, stdin=False, tty=False)
    assert listing.split() == ["etc", "home", "tmp", "workspace"]
    assert stream(api.connect_get_namespaced_pod_exec, "box", namespace, container="main",
                  command=["cat", "/etc/hostname"], stdout=True, stderr=False).strip() == "box"
    session = stream(api.connect_get_namespaced_pod_exec, "box", namespace, container="main",
                     command=["sh", "-c", "cat; exit 7"], stdin=True, stdout=True, stderr=True, tty=False,
                     _preload_content=False)
    session.write_stdin("typed\n")
    session.update(timeout=5)
    assert session.read_stdout(timeout=5) == "typed\n"
    session.close()


def test_exec_refuses_what_a_real_server_refuses(pod):
    api, namespace = pod
    with pytest.raises(ApiException) as unnamed:  # two containers: which one?
        stream(api.connect_get_namespaced_pod_exec, "box", namespace, command=["ls"], stdout=True)
    # The client reports a refused upgrade as the handshake's status line and the server's Status body.
    assert "Handshake status 400" in unnamed.value.reason
    assert "a container name must be specified for pod box, choose one of: [main side]" in unnamed.value.reason
    with pytest.raises(ApiException) as missing:
        stream(api.connect_get_namespaced_pod_exec, "nosuch", namespace, container="main", command=["ls"],
               stdout=True)
    assert "Handshake status 404" in missing.value.reason and 'pods \\"nosuch\\" not found' in missing.value.reason


def test_port_forward_reaches_the_local_stand_in_of_the_pods_port(pod, kubesim):
    api, namespace = pod

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", "3")
            self.end_headers()
            self.wfile.write(b"hi\n")

        def log_message(self, *args):
            pass

    served = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    kubesim.forward_port(8888, served.server_address[1], namespace=namespace, pod="box")
    try:
        forward = portforward(api.connect_get_namespaced_pod_portforward, "box", namespace, ports="8888")
        sock = forward.socket(8888)
        sock.setblocking(True)
        sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        answer = b""
        while not answer.endswith(b"hi\n"):
            chunk = sock.recv(1024)
            if not chunk:
                break
            answer += chunk
        sock.close()
        assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(b"hi\n"), answer
        assert forward.error(8888) is None
        forward.close()
    finally:
        kubesim.runtime.forwards.pop((namespace, "box", 8888), None)
        served.shutdown()
