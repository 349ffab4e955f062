"""Every list a member can ask for reads in the same number of queries for 1 row as for 100, and in few: the
cost of a page is a fixed set of queries, never one per row."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import (
    ApplicationFactory,
    ApplicationProfileFactory,
    ApplicationVersionFactory,
    DepartmentFactory,
    EnvironmentTemplateFactory,
    MembershipFactory,
    ProjectFactory,
    ServiceProfileFactory,
    TemplateVersionFactory,
)
from workloads.models import Pod, Workload, WorkloadEvent

pytestmark = pytest.mark.django_db
MOST = 12  # authentication, authorization, the count and the page, and a prefetch or two


def _workloads(org, n, start, kind="training"):
    Workload.objects.bulk_create([
        Workload(kind=kind, name=f"{kind}{start + i}", requested_name="w", project=org.a, department=org.department,
                 cluster=org.cluster, created_by_name="bob", spec={"image": "python:3.11"})
        for i in range(n)])


def _pods(org, n, start):
    workload = Workload.objects.get(name="owner")
    Pod.objects.bulk_create([Pod(workload=workload, uid=f"u{start + i}", name=f"p{start + i}", phase="Running",
                                 node_name="n0", created_at=timezone.now()) for i in range(n)])


def _events(org, n, start):
    workload = Workload.objects.get(name="owner")
    now = timezone.now()
    WorkloadEvent.objects.bulk_create([WorkloadEvent(workload=workload, at=now + timedelta(seconds=start + i),
                                                     reason="Tick", message="m") for i in range(n)])


def _catalog_profiles(org, n, start):
    version = TemplateVersionFactory()
    for i in range(n):  # every way in: owned, shared with all, shared with the project among others
        ways = [{"owner_project": org.a}, {"sharing_mode": "all"},
                {"sharing_mode": "selected", "shared_with": [org.a, org.b]}]
        ServiceProfileFactory(template_version=version, **ways[(start + i) % 3])


def _templates(org, n, start):
    for _ in range(n):
        template = EnvironmentTemplateFactory(owner_project=org.a)
        TemplateVersionFactory(template=template)


def _kit_apps(org, n, start):
    for _ in range(n):
        ApplicationVersionFactory(application=ApplicationFactory())


def _kit_profiles(org, n, start):
    for i in range(n):
        ApplicationProfileFactory(sharing_mode="all" if i % 2 else "none",
                                  owner_project=org.a)


def _projects(org, n, start):
    # Projects the member sees (a membership each), in departments it sees, with workloads holding GPUs.
    for i in range(n):
        project = ProjectFactory(name=f"p{start + i}", department=DepartmentFactory(name=f"d{start + i}"),
                                 cluster=org.cluster)
        MembershipFactory(user=org.users.member, project=project)
        Workload.objects.create(kind="training", name="w", project=project, department=project.department,
                                cluster=org.cluster, actual_phase="Running", gpu_request=1)


def _node_pools(org, n, start):
    # Pools of the member's cluster, each with a project's quota in it and a workload placed in it.
    from studio.models import NodePool

    for i in range(n):
        pool = NodePool.objects.create(cluster=org.cluster, name=f"pool{start + i}", label_key="run.ai/node-pool",
                                       label_value=f"pool{start + i}")
        Workload.objects.create(kind="training", name=f"w{start + i}", project=org.a, department=org.department,
                                cluster=org.cluster, actual_phase="Running", gpu_request=1, node_pool=pool.name)


def _subscriptions(org, n, start):
    from notifications.models import Subscription

    Subscription.objects.bulk_create([Subscription(user=org.users.member, project=org.a, channels=["email"], events=[
        {"category": "Quota", "types": ["QuotaReached"]}]) for _ in range(n)])


def _channels(org, n, start):
    from notifications.models import Channel

    Channel.objects.bulk_create([Channel(name=f"hook{start + i}", type="webhook", config={"url": "http://h"})
                                 for i in range(n)])


def _notifications(org, n, start):
    from notifications.models import Notification

    Notification.objects.bulk_create([Notification(user=org.users.member, key=f"k{start + i}", category="Quota",
                                                   type="QuotaReached", title="t", project=org.a)
                                      for i in range(n)])


LISTS = {
    "workloads": ("/api/v1/workloads?limit=500", _workloads),
    "pods": ("/api/v1/workloads/{owner}/pods?limit=500", _pods),
    "all pods": ("/api/v1/workloads/pods?limit=500", _pods),
    "events": ("/api/v1/workloads/{owner}/events?limit=500", _events),
    "history": ("/api/v1/workloads/{owner}/history?limit=500", _events),
    "catalog": ("/api/v1/catalog?projectId={project}&limit=500", _catalog_profiles),
    "service profiles": ("/api/v1/service-profiles?limit=500", _catalog_profiles),
    "environment templates": ("/api/v1/environment-templates?limit=500", _templates),
    "kit apps": ("/cfg/apps?limit=500", _kit_apps),
    "kit profiles": ("/cfg/profiles?limit=500", _kit_profiles),
    "projects": ("/api/v1/org-unit/projects?limit=500", _projects),
    "departments": ("/api/v1/org-unit/departments?limit=500", _projects),
    "node pools": ("/api/v1/node-pools?limit=500", _node_pools),
    "subscriptions": ("/api/v1/subscriptions", _subscriptions),
    "notification channels": ("/api/v1/notification-channels", _channels),
    "notifications": ("/api/v1/notifications?limit=500&unread=true", _notifications),
}


def _rows(body) -> int:
    if isinstance(body, list):
        return len(body)
    lists = [len(value) for value in body.values() if isinstance(value, list)]
    assert lists, body
    return max(lists)


@pytest.mark.parametrize("name", list(LISTS))
def test_a_list_reads_in_the_same_few_queries_for_1_and_100_rows(name, client_for, org,
                                                                  django_assert_num_queries):
    path, make = LISTS[name]
    owner = Workload.objects.create(kind="training", name="owner", requested_name="owner", project=org.a,
                                    department=org.department, cluster=org.cluster, created_by_name="bob")
    url = path.format(owner=owner.pk, project=org.a.pk)
    api = client_for(org.users.member)
    base = _rows(api.get(url).json())
    make(org, 1, 0)
    with CaptureQueriesContext(connection) as one:
        answer = api.get(url)
    assert answer.status_code == 200 and _rows(answer.json()) == base + 1
    assert len(one) <= MOST, "\n".join(q["sql"][:200] for q in one)
    make(org, 99, 1)
    with django_assert_num_queries(len(one)):
        assert _rows(api.get(url).json()) == base + 100
