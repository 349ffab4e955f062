"""workloads 0011: the rows that exist when CPU and memory join the quota numbers get them from their stored create
body (over all their pods, as a submission stores them); a body it cannot read keeps 0."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE, AFTER = ("workloads", "0010_gpus_held_by_pool"), ("workloads", "0011_workload_cpu_memory")


@pytest.mark.django_db(transaction=True)
def test_existing_rows_get_their_cpu_and_memory_from_their_stored_body():
    executor = MigrationExecutor(connection)
    executor.migrate([BEFORE])
    old = executor.loader.project_state([BEFORE]).apps
    cluster = old.get_model("studio", "Cluster").objects.create(name="c", api_server_url="http://x")
    department = old.get_model("studio", "Department").objects.create(name="d")
    project = old.get_model("studio", "Project").objects.create(name="p", department=department, cluster=cluster,
                                                                namespace="studio-p")
    Workload = old.get_model("workloads", "Workload")

    def row(name, kind, request, **extra):
        return Workload.objects.create(name=name, requested_name=name, kind=kind, project=project,
                                       department=department, cluster=cluster, request=request,
                                       spec=request.get("spec") or {}, **extra)

    row("train", "training", {"spec": {"parallelism": 4, "compute": {"cpuCoreRequest": 0.25,
                                                                      "cpuMemoryRequest": "500M"}}})
    row("serve", "inference", {"spec": {"autoscaling": {"maxReplicas": 3}, "compute": {"cpuCoreLimit": 1}}})
    row("odd", "training", {"spec": {"compute": {"cpuMemoryRequest": "lots"}}})
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from workloads.models import Workload as Current

    assert dict(Current.objects.values_list("name", "cpu_request")) == {"train": 1000, "serve": 3000, "odd": 0}
    assert dict(Current.objects.values_list("name", "memory_request")) == {"train": 2 * 10**9, "serve": 0, "odd": 0}
