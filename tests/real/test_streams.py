"""exec and port-forward through PaaS Studio on the real API server: config.asgi (uvicorn) relays the session to
the API server's pods/exec and pods/portforward, which reach KWOK's kubelet server — KWOK's ClusterExec runs the
command as a local process in its work folder, its ClusterPortForward connects container port 8888 to a local
port (scripts/kube_stack.py) — with the product's least-privilege identity (deploy/rbac.yaml)."""

import http.server
import json
import threading

import pytest
from kubernetes import client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from studio.audit import AuditEvent
from studio.iam.auth import issue_token
from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
GREETING = b"served for the pod's port 8888\n"


def session(server, workload_id, kind, query, token, protocols):
    url = server.url.replace("http://", "ws://") + f"/api/v1/workloads/{workload_id}/{kind}?{query}"
    return connect(url, additional_headers={"Authorization": f"Bearer {token}"}, subprotocols=protocols,
                   open_timeout=30)


def test_exec_and_port_forward_reach_kwok_through_the_real_api_server(worker, real_org, real_apiserver,
                                                                       asgi_server):
    body = training_body(real_org.project, "shell", annotations=run_seconds(600))
    workload_id = real_org.api.post("/api/v1/workloads/trainings", body, format="json").json()["workloadId"]
    wait_for(lambda: tasks.cluster_sync.apply(args=[str(real_org.cluster.pk)]) and
             real_org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"], what="the pod row")
    # A pod of the workload on a KWOK node (KAI's alone otherwise): KWOK plays it, and serves its exec.
    labels = {"app.kubernetes.io/managed-by": "paas-studio", "paas-studio/workload-id": workload_id}
    node = real_apiserver.gpu_node_objects()[0]["metadata"]["name"]
    client.CoreV1Api(real_org.k8s).create_namespaced_pod(real_org.namespace, {
        "metadata": {"name": "on-kwok", "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "busybox"}],
                 "tolerations": [{"operator": "Exists"}]}})

    def kwok_pod_running():
        tasks.cluster_sync.apply(args=[str(real_org.cluster.pk)])
        pods = real_org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        return any(p["name"] == "on-kwok" and p["phase"] == "Running" for p in pods)

    wait_for(kwok_pod_running, timeout=60, what="the pod on KWOK's node running")
    token = issue_token(user=real_org.user)["accessToken"]
    for protocol in ("v5.channel.k8s.io", "v4.channel.k8s.io"):  # v5: the API server speaks SPDY to KWOK
        channels = {}
        with session(asgi_server, workload_id, "exec", "command=pwd&pod=on-kwok", token, [protocol]) as ws:
            assert ws.subprotocol == protocol
            try:
                for message in ws:
                    channels[message[0]] = channels.get(message[0], b"") + message[1:]
            except ConnectionClosed:
                pass
        assert channels[1].decode().strip() == str(real_apiserver.workdir / "kwok-exec"), channels
        assert json.loads(channels[3])["status"] == "Success"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Length", str(len(GREETING)))
            self.end_headers()
            self.wfile.write(GREETING)

        def log_message(self, *args):
            pass

    served = http.server.ThreadingHTTPServer(("127.0.0.1", real_apiserver.ports["pod-8888"]), Handler)
    threading.Thread(target=served.serve_forever, daemon=True).start()
    try:
        with session(asgi_server, workload_id, "portforward", "port=8888&pod=on-kwok", token,
                     ["v4.channel.k8s.io"]) as ws:
            assert [ws.recv(timeout=30), ws.recv(timeout=30)] == [b"\x00\xb8\x22", b"\x01\xb8\x22"]  # port 8888
            ws.send(b"\x00GET / HTTP/1.0\r\nHost: pod\r\n\r\n")
            answer = b""
            try:
                while GREETING not in answer:
                    message = ws.recv(timeout=30)
                    if message[0] == 0:
                        answer += message[1:]
            except ConnectionClosed:
                pass
        assert answer.startswith(b"HTTP/1.0 200") and answer.endswith(GREETING), answer
    finally:
        served.shutdown()
        served.server_close()
    sessions = AuditEvent.objects.filter(object_type__in=["workloads.exec", "workloads.portforward"])
    assert sessions.filter(action="create").count() == 3 and sessions.filter(action="update").count() == 3
