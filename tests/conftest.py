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
