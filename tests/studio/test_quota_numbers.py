"""The organisation's GPU numbers, defined once (studio/org/numbers.py): allocated is what holds GPUs on nodes,
requested what runs plus what waits, both in the pool each workload was placed in ("" is the cluster's default
pool), beside the per-pool deserved and limit; read in two queries however many units."""

from decimal import Decimal

import pytest

from studio.models import NodePool
from studio.org.numbers import quota_numbers
from tests.factories import ProjectFactory
from workloads.models import Workload

pytestmark = pytest.mark.django_db


def _workload(project, name, phase, gpus, pool="", desired="Running", deleted=False):
    from django.utils import timezone

    Workload.objects.create(project=project, department=project.department, cluster=project.cluster, name=name,
                            kind="training", actual_phase=phase, desired_phase=desired, gpu_request=gpus,
                            node_pool=pool, deleted_at=timezone.now() if deleted else None)


def test_allocated_and_requested_per_unit_and_pool(org, django_assert_num_queries):
    default = NodePool.objects.create(cluster=org.cluster, name="main-pool", is_default=True)
    a100 = NodePool.objects.create(cluster=org.cluster, name="a100", label_key="k", label_value="a100")
    org.a.node_pool_resources = [{"nodePool": {"id": str(a100.pk), "name": "a100"},
                                  "gpu": {"deserved": 2, "limit": -1, "overQuotaWeight": 3}}]
    org.a.save()
    org.b.gpu_deserved, org.b.gpu_limit = Decimal(1), Decimal(4)  # totals only: its cluster's default pool
    org.b.save()
    _workload(org.a, "runs", "Running", 2, "a100")
    _workload(org.a, "starts", "Initializing", 0.5, "a100")
    _workload(org.a, "waits", "Pending", 1, "a100")
    _workload(org.a, "stopping", "Stopping", 1, "a100", desired="Stopped")  # on nodes, no longer meant to run
    _workload(org.a, "done", "Completed", 8, "a100")
    _workload(org.a, "gone", "Running", 8, "a100", deleted=True)
    _workload(org.b, "old", "Running", 3)  # placed before pools were: the default pool
    other = ProjectFactory(name="other", department=org.department, cluster=org.cluster)
    _workload(other, "elsewhere", "Running", 5, "a100")
    with django_assert_num_queries(2):
        found = quota_numbers(projects=[org.a, org.b], departments=[org.department], clusters=[org.cluster.pk])
    a, b = found.project(org.a.pk), found.project(org.b.pk)
    # allocated: runs, starts, stopping (2 + 0.5 + 1); requested: runs, starts, waits (2 + 0.5 + 1)
    assert (a.total.allocated, a.total.requested) == (Decimal("3.5"), Decimal("3.5"))
    assert list(a.pools) == ["a100"] and a.pools["a100"].deserved == 2 and a.pools["a100"].limit is None
    assert a.pools["a100"].over_quota_weight == 3.0 and a.pools["a100"].waiting == Decimal(0)
    assert list(b.pools) == ["main-pool"]
    assert b.pools["main-pool"].as_dict() == {"allocated": 3.0, "requested": 3.0, "deserved": 1.0, "limit": 4.0}
    department = found.department(org.department.pk)
    assert {name: (n.allocated, n.requested) for name, n in department.pools.items()} == {
        "a100": (Decimal("8.5"), Decimal("8.5")), "main-pool": (Decimal(3), Decimal(3))}
    assert found.pool(org.cluster.pk, "a100").allocated == Decimal("8.5")
    assert found.pool_ids_of(org.cluster.pk) == {"main-pool": str(default.pk), "a100": str(a100.pk)}


def test_waiting_work_is_requested_not_allocated(org):
    _workload(org.a, "runs", "Running", 2)
    _workload(org.a, "waits", "Pending", 1)
    _workload(org.a, "creating", "Creating", 1)
    numbers = quota_numbers(projects=[org.a]).project(org.a.pk).total
    assert (numbers.allocated, numbers.requested, numbers.waiting) == (Decimal(2), Decimal(4), Decimal(2))


def test_one_units_numbers_are_those_it_has_among_others(org):
    """A submission's check (one project) and a department's page (one department) read their use with SQL written
    once (perf.keyed_rows), run again with each unit's id: the same numbers as the grouped read of many units,
    GPUs, CPU and memory, for each unit asked in turn."""
    a100 = NodePool.objects.create(cluster=org.cluster, name="a100", label_key="k", label_value="a100")
    _workload(org.a, "runs", "Running", 2, "a100")
    _workload(org.a, "waits", "Pending", 1)
    _workload(org.b, "runs-b", "Running", 3)
    Workload.objects.filter(name="runs").update(cpu_request=1500, memory_request=2 * 10**9)
    together = quota_numbers(projects=[org.a, org.b], departments=[org.department])
    for project in (org.a, org.b, org.a):
        alone = quota_numbers(projects=[project])
        assert alone.project(project.pk) == together.project(project.pk)
    alone = quota_numbers(departments=[org.department], pools_of=[org.cluster.pk])
    assert alone.department(org.department.pk) == together.department(org.department.pk)
    assert alone.department(org.department.pk).pools["a100"].cpu_allocated == 1500
    assert alone.pool_ids_of(org.cluster.pk)["a100"] == str(a100.pk)
    assert quota_numbers(projects=[org.a]).project(org.a.pk).total.requested == Decimal(3)
