"""Shared fixtures: users in every role, API clients that authenticate with real bearer tokens."""

from types import SimpleNamespace

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from studio.auth import issue_token
from studio.models import Membership
from tests.factories import ClusterFactory, DepartmentFactory, MembershipFactory, ProjectFactory, UserFactory


def pytest_report_header(config):
    db = settings.DATABASES["default"]
    return [
        f"database: {db['ENGINE'].rsplit('.', 1)[-1]} {db.get('HOST') or ''} {db['NAME']}".rstrip(),
        f"celery broker: {settings.CELERY_BROKER_URL}",
    ]


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
    MembershipFactory(user=users.admin, project=a, role=Membership.Role.ADMIN)
    MembershipFactory(user=users.member, project=a, role=Membership.Role.MEMBER)
    MembershipFactory(user=users.viewer, project=a, role=Membership.Role.VIEWER)
    MembershipFactory(user=users.other, project=b, role=Membership.Role.MEMBER)
    return SimpleNamespace(cluster=cluster, department=department, a=a, b=b, users=users)


# --- the cluster path: the simulated cluster, a cluster row on it, a real Celery worker ---------------------

SIM_TOKEN = "kubesim-token"
NO_FAULTS = {"outage": False, "latency_ms": 0, "pull_fail_images": [], "crash_images": []}


def start_sim(**options):
    from studio.kubesim import KubeSim

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


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup):
    from tests.workloads.cluster_support import Worker

    worker = Worker()
    worker.start()
    yield worker
    worker.stop()


@pytest.fixture
def worker(celery_worker_process, transactional_db):
    """A real Celery worker on the test database and broker (restarted if a test killed it)."""
    if not celery_worker_process.alive():
        celery_worker_process.start()
    return celery_worker_process


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
    MembershipFactory(user=member, project=project, role=Membership.Role.MEMBER)
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
