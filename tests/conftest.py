"""Shared fixtures: users in every role, API clients that authenticate with real bearer tokens."""

import base64
import copy
import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.conf import settings
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from rest_framework.test import APIClient

from profiles import services as profile_services
from studio.iam.auth import issue_token
from studio.models import Level
from tests import docs_output
from tests.factories import ClusterFactory, DepartmentFactory, MembershipFactory, ProjectFactory, UserFactory

# Hypothesis judges examples, not speed: on a shared 2-core CI machine its timing checks (the per-example
# deadline, "input generation is slow") fail by load alone. Tests that set their own settings keep them.
hypothesis_settings.register_profile("ci", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("ci")


def pytest_report_header(config):
    db = settings.DATABASES["default"]
    return [
        f"database: {db['ENGINE'].rsplit('.', 1)[-1]} {db.get('HOST') or ''} {db['NAME']}".rstrip(),
        f"celery broker: {settings.CELERY_BROKER_URL}",
    ]


@pytest.fixture(scope="session", autouse=True)
def _docs_output(tmp_path_factory):
    """Screenshots and transcripts go to this run's own folder unless STUDIO_REFRESH_DOCS=1 (tests/docs_output)."""
    docs_output.use_scratch(tmp_path_factory.mktemp("docs"))


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _fresh_throttling_counters():
    from django.core.cache import cache

    cache.clear()  # login throttles count per address: every test starts below the rates


def bearer_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer " + issue_token(user=user)["accessToken"])
    return client


@pytest.fixture
def anon():
    return APIClient()


@pytest.fixture
def client_for():
    return bearer_client


@pytest.fixture
def org(db):
    """Two projects on one cluster, and a user in each role; `org.a` is project A, `org.b` project B."""
    return make_org()


def make_org() -> SimpleNamespace:
    """What the `org` fixture gives, for fixtures that build it once for many tests (tests/api/conftest.py)."""
    cluster = ClusterFactory(name="main")
    department = DepartmentFactory(name="research")
    a = ProjectFactory(name="alpha", department=department, cluster=cluster)
    b = ProjectFactory(name="beta", department=department, cluster=cluster)
    users = SimpleNamespace(
        platform_admin=UserFactory(username="root", platform_admin=True),
        admin=UserFactory(username="alice"),
        member=UserFactory(username="bob"),
        viewer=UserFactory(username="carol"),
        other=UserFactory(username="dave"),
    )
    MembershipFactory(user=users.admin, project=a, role=Level.ADMIN)
    MembershipFactory(user=users.member, project=a, role=Level.MEMBER)
    MembershipFactory(user=users.viewer, project=a, role=Level.VIEWER)
    MembershipFactory(user=users.other, project=b, role=Level.MEMBER)
    return SimpleNamespace(cluster=cluster, department=department, a=a, b=b, users=users)


# --- a real OpenID Connect provider: Dex (tests/iam/dex_support.py), for single sign-on -------------------------

@pytest.fixture(scope="session")
def dex_path():
    """The pinned Dex binary, built once into a cache outside the tree (scripts/dex/build.sh; `make test` builds
    it before pytest starts, so that a cold build does not count against a test's timeout)."""
    from tests.iam.dex_support import dex_binary

    return dex_binary()


@pytest.fixture
def start_dex(dex_path):
    """Start a Dex with these users (and the portal's redirect URIs) on a free loopback port; stopped after the
    test."""
    from tests.iam.dex_support import Dex

    started = []

    def start(users, redirect_uris=()):
        started.append(Dex(dex_path, redirect_uris=list(redirect_uris), users=users).start())
        return started[-1]

    yield start
    for dex in started:
        dex.stop()


# --- the real cluster (`make e2e-real`): a current Kubernetes, KAI Scheduler, KWOK, the training operator -------

def _say(config, line: str) -> None:
    """A line in pytest's own output (not captured): what the real tests ran against."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    capture = config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)


@pytest.fixture(scope="session")
def real_apiserver(pytestconfig):
    """One real cluster for the session (scripts/kube_stack.py): etcd, kube-apiserver and kube-controller-manager of
    a current release, KAI Scheduler (scheduler, binder, pod grouper, pod-group controller, queue controller,
    admission), KWOK with 4 GPU nodes of 8 (node pool `default`) and the Kubeflow training operator. `.url`,
    `.token` (admin, system:masters), `.ca_file`, `.ca_pem`, `.kubeconfig` (admin, a file), `.compact()` (etcd
    compaction: old continue tokens and watch versions answer 410), `.gpu_node_objects()`. Tests that use it are
    marked `real` and run in `make e2e-real` only."""
    from scripts.kube_stack import Stack
    from scripts.realkube import versions

    # Only pods that name KAI's scheduler reach KWOK's nodes (clusters of the legacy real tests are registered with
    # gpuScheduler "none": kubesim's node side plays their pods); the KAI scenario's trainings run until it deletes
    # them, so Job pods on KWOK do not end by themselves.
    kube = Stack(job_run_ms=3_600_000).start()
    built = versions()
    _say(pytestconfig, f"\nreal cluster: GET {kube.url}/version -> {kube.get('/version')['gitVersion']}; "
                       f"etcd {built['etcd']}, KAI Scheduler {built['kai-scheduler']}, KWOK {built['kwok']}, "
                       f"training operator {built['training-operator']}; running: {', '.join(kube.processes)} "
                       f"({kube.workdir})")
    yield kube
    kube.stop()


@pytest.fixture(scope="session")
def real_cluster(real_apiserver, pytestconfig):
    """The real cluster with kubesim's node side beside KWOK (4 more nodes x 8 GPUs, over HTTP, as the admin: it
    registers Nodes, binds the pods that do not name KAI's scheduler, writes pods/status, serves the kubelet's logs
    and the metrics APIs, plays Knative where its CRD is installed), and deploy/rbac.yaml applied. Its nodes are in
    a KAI node pool of their own (`kai.scheduler/node-pool=kubesim`) that no KAI shard serves, so KAI binds to
    KWOK's nodes only. The Kubeflow jobs are the real training operator's. `.product_token` is the token of
    deploy/'s ServiceAccount: the least-privilege identity the product uses; `.nodes` the node side."""
    from kubernetes import client, utils

    from kubesim.node.remote import RemoteNodes
    from scripts.kube_objects import KAI_NODE_POOL_LABEL, KAI_SCHEDULER_NAME
    from tests.workloads.cluster_support import wait_for

    # Pods run 4 s: the real training operator says a job is Running a moment after its pods are, which on a
    # loaded machine took longer than pods of 2 s lived.
    nodes = RemoteNodes(real_apiserver.url, real_apiserver.token, ca_file=real_apiserver.ca_file,
                        pull_seconds=0.2, run_seconds=4.0, node_labels={KAI_NODE_POOL_LABEL: "kubesim"},
                        other_schedulers={KAI_SCHEDULER_NAME},
                        operators=("serving.knative.dev", "scheduling.x-k8s.io", "scheduling.volcano.sh")).start()
    api = real_official_client(real_apiserver)
    utils.create_from_yaml(api, str(Path(__file__).resolve().parent.parent / "deploy" / "rbac.yaml"))
    core = client.CoreV1Api(api)
    secret = wait_for(lambda: (core.read_namespaced_secret("paas-studio-token", "paas-studio").data or {}).get("token"),
                      what="the token controller to fill deploy/'s paas-studio-token")
    token = base64.b64decode(secret).decode()
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    _say(pytestconfig, f"product identity: {claims['sub']} (deploy/rbac.yaml, RoleBindings in project namespaces); "
                       f"nodes: {', '.join(o['metadata']['name'] for o in nodes.node_objects)} (kubesim's node side), "
                       f"{', '.join(n['metadata']['name'] for n in real_apiserver.gpu_node_objects())} (KWOK)")
    yield SimpleNamespace(server=real_apiserver, nodes=nodes, product_token=token, api=api)
    nodes.stop()
    api.close()


def real_official_client(real_apiserver, token: str | None = None) -> "kubernetes.client.ApiClient":  # noqa: F821
    """The official client on the real server, as its admin (or with `token`), as kubectl would be."""
    from kubernetes import client

    configuration = client.Configuration(host=real_apiserver.url)
    configuration.api_key = {"authorization": f"Bearer {token or real_apiserver.token}"}
    configuration.ssl_ca_cert = real_apiserver.ca_file
    return client.ApiClient(configuration)


# --- the cluster path: the simulated cluster, a cluster row on it, a real Celery worker ---------------------

SIM_TOKEN = "kubesim-token"
NO_FAULTS = {"outage": False, "latency_ms": 0, "pull_fail_images": [], "crash_images": []}


def start_sim(**options):
    from kubesim import KubeSim

    sim = KubeSim(**{"nodes": 4, "gpus_per_node": 8, "knative": True, "token": SIM_TOKEN, "pull_seconds": 0.2,
                     "run_seconds": 2.0, "tick": 0.05, "history": 1000, "port": 0, **options})
    sim.start()
    return sim


@pytest.fixture(scope="session")
def kubesim_session():
    sim = start_sim()
    yield sim
    sim.stop()


@pytest.fixture
def kubesim(kubesim_session):
    """The session's simulated cluster, without faults and with fresh request counts."""
    kubesim_session.set_faults(**NO_FAULTS)
    kubesim_session.reset_stats()
    yield kubesim_session
    kubesim_session.set_faults(**NO_FAULTS)


@pytest.fixture
def start_kubesim():
    """Start another simulated cluster (no Knative, a short history, ...); stopped after the test."""
    started = []

    def start(**options):
        started.append(start_sim(**options))
        return started[-1]

    yield start
    for sim in started:
        sim.stop()


def official_client(sim) -> "kubernetes.client.ApiClient":  # noqa: F821
    """The official client on a simulated cluster, for tests to look at the cluster as kubectl would."""
    from kubernetes import client

    configuration = client.Configuration(host=sim.url)
    configuration.api_key = {"authorization": f"Bearer {SIM_TOKEN}"}
    return client.ApiClient(configuration)


@pytest.fixture
def worker(transactional_db):
    """A real Celery worker on the test database and broker, for this test alone: started after the queue is
    purged, and stopped (its tasks finished) before the database is flushed. A worker that outlived its test
    would take the tasks of later tests that push in-process, and its transactions would deadlock their flush."""
    from tests.workloads.cluster_support import Worker

    process = Worker()
    process.start()
    yield process
    process.stop()


@pytest.fixture
def sim_org(transactional_db, kubesim):
    """A cluster row on the session kubesim, a project on it with room for GPUs (its own namespace, removed
    afterwards), a member and the member's API client; `sim_org.k8s` is the official client on the cluster."""
    import uuid

    from kubernetes import client

    name = f"p{uuid.uuid4().hex[:8]}"
    cluster = ClusterFactory(name=f"sim-{name}", api_server_url=kubesim.url, token=SIM_TOKEN, verify_tls=False,
                             prometheus_url=kubesim.url + "/prometheus")
    project = ProjectFactory(name=name, cluster=cluster, gpu_deserved=64, gpu_limit=64)
    member = UserFactory(username=f"member-{name}")
    MembershipFactory(user=member, project=project, role=Level.MEMBER)
    k8s = official_client(kubesim)
    yield SimpleNamespace(sim=kubesim, cluster=cluster, project=project, user=member, api=bearer_client(member),
                          k8s=k8s, namespace=project.namespace)
    kubesim.set_faults(**NO_FAULTS)
    try:
        client.CoreV1Api(k8s).delete_namespace(project.namespace)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    k8s.close()


@pytest.fixture
def real_org(transactional_db, real_cluster):
    """`sim_org`'s shape on the real API server: the cluster registered through the API (a kubeconfig with
    deploy/'s ServiceAccount token, nothing more), a project on it, a member and the member's client;
    `k8s` is the official client as the cluster's admin, to look at the cluster as an operator would."""
    import uuid

    from kubernetes import client

    from scripts.realkube import kubeconfig_text
    from studio.models import Cluster

    name = f"p{uuid.uuid4().hex[:8]}"
    server = real_cluster.server
    kubeconfig = kubeconfig_text(server=server.url, ca_pem=server.ca_pem, token=real_cluster.product_token,
                                 user="paas-studio")
    root = UserFactory(username=f"root-{name}", platform_admin=True)
    # Prometheus: the node side's (DCGM and Knative series of the pods it plays), on loopback.
    # gpuScheduler "none": the stack serves KAI's API, but these tests' workloads are Kubernetes-scheduled (kubesim's
    # node side plays them); the KAI tests register their own cluster with "auto" (tests/real/test_kai_scenario.py).
    registered = bearer_client(root).post("/api/v1/clusters", {"name": f"real-{name}", "kubeconfig": kubeconfig,
                                                               "prometheusUrl": real_cluster.nodes.prometheus_url,
                                                               "gpuScheduler": "none"},
                                          format="json")
    assert registered.status_code == 201, registered.json()
    cluster = Cluster.objects.get(pk=registered.json()["clusterId"])
    project = ProjectFactory(name=name, cluster=cluster, gpu_deserved=64, gpu_limit=64)
    member = UserFactory(username=f"member-{name}")
    MembershipFactory(user=member, project=project, role=Level.MEMBER)
    k8s = real_official_client(server)
    yield SimpleNamespace(sim=None, kind="real", cluster=cluster, project=project, user=member,
                          api=bearer_client(member), k8s=k8s, namespace=project.namespace, real=real_cluster)
    try:
        client.CoreV1Api(k8s).delete_namespace(project.namespace)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
    k8s.close()


@pytest.fixture(params=["kubesim", pytest.param("real", marks=pytest.mark.real)])
def cluster_org(request):
    """The same end-to-end test on kubesim (`make test`) and on the real cluster with kubesim's node side
    (`make e2e-real`); `cluster_org.kind` says which, for the few lines that differ."""
    if request.param == "kubesim":
        org = request.getfixturevalue("sim_org")
        org.kind = "kubesim"
        return org
    return request.getfixturevalue("real_org")


@pytest.fixture(params=["kubesim", pytest.param("real", marks=pytest.mark.real)])
def knative_org(request):
    """`cluster_org` with Knative Serving: kubesim's session cluster serves it; on the real server its CRD is
    installed for this test alone (the other real tests run without Knative, as a cluster without it) and kubesim's
    node side plays it — a revision's pods, then Ready with the URL and traffic."""
    if request.param == "kubesim":
        org = request.getfixturevalue("sim_org")
        org.kind = "kubesim"
        return org
    from kubesim.node import crds

    real = request.getfixturevalue("real_cluster")
    crds.install(real.nodes.http, "knative")
    request.addfinalizer(lambda: crds.uninstall(real.nodes.http, "knative"))
    return request.getfixturevalue("real_org")


# A template version and finished profiles to build pages and launches on (browser and page tests).
@pytest.fixture
def notebook_version(org):
    """The system Jupyter template's version as an ordinary, active template version. The system profiles
    themselves stay out of these tests: their icons are on the internet, which this browser cannot reach."""
    template = profile_services.template_create(actor=org.users.platform_admin, name="notebook", display_name="Notebook server",
                                        description="JupyterLab with a GPU share and a login token.")
    return profile_services.version_create(actor=org.users.platform_admin, template=template, state="active",
                                   **copy.deepcopy(_jupyter()["versions"][0]))


@pytest.fixture
def make_profile(org, notebook_version):
    """A finished profile on the notebook version, owned by project alpha and shared with no other."""
    def make(name="lab-notebook", **fields):
        fields.setdefault("service_type", "notebook")
        fields.setdefault("owner_project", org.a)
        return profile_services.profile_create(actor=org.users.platform_admin, name=name, template_version=notebook_version,
                                       **fields)

    return make


def _jupyter():
    from profiles.system import TEMPLATES

    return next(t for t in TEMPLATES if t["name"] == "jupyter-notebook")


@pytest.fixture
def start_watcher(transactional_db):
    """Start `manage.py cluster_watch` processes on the test database (env: settings for them); each is stopped
    before the database is flushed."""
    from tests.workloads.cluster_support import Watcher

    started = []

    def start(**env):
        started.append(Watcher(**env).start())
        return started[-1]

    yield start
    for watcher in started:
        watcher.stop()


@pytest.fixture
def asgi_server(transactional_db):
    """config.asgi under uvicorn (HTTP and the WebSocket sessions of exec, attach, port-forward): `.url`."""
    from tests.asgi_support import AsgiServer

    server = AsgiServer().start()
    yield server
    server.stop()
