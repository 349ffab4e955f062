"""Findings 2 and 7 of the security review: a cluster registration cannot make the server run a command,
read its files, or reach (and read back) link-local, metadata or, unless allowed, loopback addresses; /readyz
reaches no cluster; /metrics can ask for a token."""

import http.server
import re
import socket
import threading
from pathlib import Path

import pytest
import yaml

from studio.models import Cluster
from tests.factories import ClusterFactory
from workloads.cluster.sync import cluster_sync

ROOT = Path(__file__).resolve().parents[2]


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"  # nothing listens there once closed


def kubeconfig(*, user: dict, cluster: dict | None = None, server: str = "https://10.0.0.1:6443") -> str:
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    })


def exec_user(marker: Path) -> dict:
    return {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "sh",
                     "args": ["-c", f"touch {marker}; echo '{{\"status\":{{\"token\":\"x\"}}}}'"]}}


@pytest.mark.parametrize(("user", "cluster", "field"), [
    ("exec", {}, "kubeconfig.users[0].user.exec"),
    ({"auth-provider": {"name": "oidc", "config": {}}}, {}, "kubeconfig.users[0].user.auth-provider"),
    ({"tokenFile": "/etc/shadow"}, {}, "kubeconfig.users[0].user.tokenFile"),
    ({"client-certificate": "/etc/ssl/private/x.crt", "client-key-data": "eA=="}, {},
     "kubeconfig.users[0].user.client-certificate"),
    ({"client-certificate-data": "eA==", "client-key": "/root/key.pem"}, {}, "kubeconfig.users[0].user.client-key"),
    ({"token": "t"}, {"certificate-authority": "/etc/passwd"}, "kubeconfig.clusters[0].cluster.certificate-authority"),
    ({"token": "t"}, {"proxy-url": "http://169.254.169.254"}, "kubeconfig.clusters[0].cluster.proxy-url"),
])
def test_a_kubeconfig_that_runs_a_command_or_reads_a_file_is_a_400_naming_the_field(
        user, cluster, field, client_for, org, tmp_path):
    marker = tmp_path / "ran"
    body = {"name": "evil", "kubeconfig": kubeconfig(user=exec_user(marker) if user == "exec" else user,
                                                     cluster=cluster)}
    response = client_for(org.users.platform_admin).post("/api/v1/clusters", body, format="json")
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert not Cluster.objects.filter(name="evil").exists() and not marker.exists()


def test_an_inline_kubeconfig_is_accepted_and_reaches_the_cluster(client_for, org, kubesim):
    body = {"name": "inline", "kubeconfig": kubeconfig(user={"token": "kubesim-token"}, server=kubesim.url)}
    api = client_for(org.users.platform_admin)
    created = api.post("/api/v1/clusters", body, format="json")
    assert created.status_code == 201, created.content
    cluster_sync(created.json()["clusterId"])
    assert api.get(f"/api/v1/clusters/{created.json()['clusterId']}").json()["status"]["state"] == "Connected"


def test_a_stored_kubeconfig_with_exec_never_runs_in_the_sync_or_readyz(client, org, tmp_path):
    """A row written before the rules (or by hand) is refused when a client is built, not run."""
    marker = tmp_path / "ran"
    cluster = ClusterFactory(name="old", api_server_url="", kubeconfig=kubeconfig(user=exec_user(marker)))
    cluster_sync(str(cluster.pk))
    client.get("/readyz")
    assert not marker.exists()
    assert "exec" in Cluster.objects.get(pk=cluster.pk).status_message


def test_the_docker_image_runs_as_a_non_root_user():
    users = re.findall(r"^USER\s+(\S+)", (ROOT / "Dockerfile").read_text(), flags=re.M)
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert "useradd" in (ROOT / "Dockerfile").read_text()


# --- finding 7: addresses ------------------------------------------------------------------------------

@pytest.mark.parametrize(("field", "url"), [
    ("apiServerUrl", "http://169.254.169.254/latest/meta-data/"),
    ("apiServerUrl", "https://169.254.10.1:6443"),
    ("apiServerUrl", "http://[fd00:ec2::254]/"),
    ("apiServerUrl", "http://100.100.100.200/"),
    ("apiServerUrl", "http://[fe80::1]:6443"),
    ("apiServerUrl", "http://[::ffff:169.254.169.254]/"),
    ("prometheusUrl", "http://169.254.169.254/"),
])
def test_link_local_and_metadata_addresses_are_refused(field, url, client_for, org):
    body = {"name": "meta", "apiServerUrl": "https://10.1.2.3:6443", field: url}
    response = client_for(org.users.platform_admin).post("/api/v1/clusters", body, format="json")
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == [field]


def test_a_kubeconfig_server_on_a_metadata_address_is_refused(client_for, org):
    body = {"name": "meta", "kubeconfig": kubeconfig(user={"token": "t"}, server="http://169.254.169.254")}
    response = client_for(org.users.platform_admin).post("/api/v1/clusters", body, format="json")
    assert [e["field"] for e in response.json()["errors"]] == ["kubeconfig.clusters[0].cluster.server"]


@pytest.mark.parametrize("url", ["http://127.0.0.1:6443", "http://localhost:6443", "http://[::1]:6443"])
def test_loopback_is_refused_unless_the_allow_list_has_it(url, client_for, org, settings):
    settings.CLUSTER_ALLOWED_NETWORKS = ["10.0.0.0/8"]  # the production default lists private ranges only
    api = client_for(org.users.platform_admin)
    refused = api.post("/api/v1/clusters", {"name": "loop", "apiServerUrl": url}, format="json")
    assert refused.status_code == 400 and "CLUSTER_ALLOWED_NETWORKS" in refused.json()["errors"][0]["message"]
    assert api.post("/api/v1/clusters", {"name": "private", "apiServerUrl": "https://10.0.0.7"},
                    format="json").status_code == 201
    settings.CLUSTER_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1/128"]
    assert api.post("/api/v1/clusters", {"name": "loop", "apiServerUrl": url}, format="json").status_code == 201


class NotACluster(http.server.BaseHTTPRequestHandler):
    """Something on the inside network that is not a cluster; it answers every request with its secrets."""

    hits = 0

    def do_GET(self):
        type(self).hits += 1
        body = b"<html>internal admin console: SECRET-INTERNAL-BODY</html>"
        self.send_response(401)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def not_a_cluster():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotACluster)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    NotACluster.hits = 0
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_status_message_carries_a_classified_reason_never_the_remote_body(client_for, org, not_a_cluster):
    api = client_for(org.users.platform_admin)
    created = api.post("/api/v1/clusters", {"name": "inside", "apiServerUrl": not_a_cluster, "token": "t"},
                       format="json").json()
    cluster_sync(created["clusterId"])
    message = api.get(f"/api/v1/clusters/{created['clusterId']}").json()["statusMessage"]
    assert "HTTP 401" in message and "SECRET" not in message, message

    refused = api.post("/api/v1/clusters", {"name": "closed", "apiServerUrl": closed_port_url(), "token": "t"},
                       format="json").json()
    cluster_sync(refused["clusterId"])
    assert "connection refused" in api.get(f"/api/v1/clusters/{refused['clusterId']}").json()["statusMessage"]


def test_readyz_checks_its_own_dependencies_and_counts_clusters_without_contacting_them(client, org, not_a_cluster):
    ClusterFactory(name="inside", api_server_url=not_a_cluster, status=Cluster.Status.DISCONNECTED)
    response = client.get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["database"]["ok"] and body["broker"]["ok"]
    assert body["clusters"] == {"total": 2, "Unknown": 1, "Connected": 0, "Disconnected": 1}
    assert NotACluster.hits == 0 and "SECRET" not in response.content.decode()


@pytest.mark.django_db
def test_metrics_ask_for_the_bearer_token_when_one_is_set(client, settings):
    settings.METRICS_TOKEN = "scrape-me"
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-me")
    assert response.status_code == 200 and b"django_http_requests" in response.content


# Security round 3, S14: YAML reads `2024-01-01` as a date and `1` as a number, keys included.
ODD_KUBECONFIGS = {  # the text, and the field its 400 names
    "a date": ("2024-01-01", "kubeconfig"),
    "a date key": ("2024-01-01: x\nclusters: []\n", "kubeconfig"),
    "a number key in a cluster": ("clusters:\n- name: k\n  cluster: {server: 'https://10.0.0.1:6443', 1: x}\n",
                                  "kubeconfig.clusters[0].cluster"),
    "a date key in a user": ("clusters: []\nusers:\n- name: u\n  user: {token: t, 2024-01-01: x}\n",
                             "kubeconfig.users[0].user"),
    "a null key": ("clusters: []\n~: x\n", "kubeconfig"),
}


@pytest.mark.parametrize(("text", "field"), ODD_KUBECONFIGS.values(), ids=ODD_KUBECONFIGS.keys())
def test_a_kubeconfig_with_dates_or_numbers_for_keys_is_a_400(text, field, client_for, org):
    response = client_for(org.users.platform_admin).post("/api/v1/clusters", {"name": "odd", "kubeconfig": text},
                                                         format="json")
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert not Cluster.objects.filter(name="odd").exists()


@pytest.mark.parametrize("text", [t for t, _ in ODD_KUBECONFIGS.values()] + [kubeconfig(user=exec_user(Path("/x")))],
                         ids=[*ODD_KUBECONFIGS.keys(), "exec"])
def test_the_portal_holds_a_kubeconfig_to_the_same_rules(text, client, org):
    client.force_login(org.users.platform_admin)
    response = client.post("/org/clusters", {"name": "odd", "kubeconfig": text, "verify_tls": "on"})
    assert response.status_code == 200 and b"kubeconfig" in response.content
    assert not Cluster.objects.filter(name="odd").exists()


def test_the_portal_refuses_a_metadata_address(client, org):
    client.force_login(org.users.platform_admin)
    response = client.post("/org/clusters", {"name": "meta", "api_server_url": "http://169.254.169.254"})
    assert response.status_code == 200 and b"never allowed" in response.content
    assert not Cluster.objects.filter(name="meta").exists()
