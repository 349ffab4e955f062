"""On a cluster that schedules with KAI Scheduler, work over quota is accepted and waits in the project's queue:
a submission is refused (400) only when it could never run. Elsewhere the quota check stays as it was."""

import pytest

from tests.conftest import bearer_client
from tests.factories import ClusterFactory, DepartmentFactory, MembershipFactory, ProjectFactory, UserFactory
from tests.workloads.cluster_support import training_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def kai_project():
    cluster = ClusterFactory(gpu_scheduler="kai", gpu_capacity={"total": 16, "largestNode": 8})
    project = ProjectFactory(cluster=cluster, gpu_deserved=2, gpu_limit=4)
    member = UserFactory()
    MembershipFactory(user=member, project=project, role="member")
    return project, bearer_client(member)


def submit(api, project, kind: str, name: str, gpus, **query):
    body = training_body(project, name, compute={"gpuDevicesRequest": gpus})
    return api.post(f"/api/v1/workloads/{kind}" + ("?dryRun=true" if query.get("dry") else ""), body, format="json")


def message(response) -> str:
    return response.json()["errors"][0]["message"]


def test_over_quota_is_accepted_and_only_what_could_never_run_is_refused(kai_project):
    project, api = kai_project
    assert submit(api, project, "trainings", "t1", 3).status_code == 200  # over deserved 2: lent GPUs, if idle
    assert submit(api, project, "trainings", "t2", 3).status_code == 200  # 6 in all, over the limit: it waits
    assert submit(api, project, "workspaces", "w1", 2).status_code == 200  # within deserved: waits for room
    never = submit(api, project, "trainings", "t3", 5)
    assert never.status_code == 400
    assert message(never) == f"It can never run: 5 GPUs is more than project {project.name}'s limit of 4 GPUs."
    workspace = submit(api, project, "workspaces", "w2", 3)
    assert workspace.status_code == 400 and "a non-preemptible workspace runs only within project" in message(workspace)


def test_the_departments_limit_and_the_clusters_gpus_bound_what_can_run(kai_project):
    project, api = kai_project
    project.gpu_limit = None
    project.save()
    department = project.department
    department.node_pool_resources = [{"nodePool": {"id": "1", "name": "default"}, "gpu": {"deserved": 2, "limit": 8}}]
    department.save()
    over = submit(api, project, "trainings", "big", 9)
    assert over.status_code == 400 and message(over).endswith(f"department {department.name}'s limit of 8 GPUs.")
    department.node_pool_resources = []
    department.save()
    huge = submit(api, project, "trainings", "huge", 17)
    assert huge.status_code == 400
    assert message(huge) == f"It can never run: 17 GPUs is more than cluster {project.cluster.name} has (16)."
    one_pod = submit(api, project, "trainings", "one-pod", 16)  # 16 GPUs on one node of 8: never
    assert one_pod.status_code == 400
    assert message(one_pod) == (f"It can never run: each pod asks for 16 GPUs and the largest node of cluster "
                                f"{project.cluster.name} has 8.")
    body = training_body(project, "fits", compute={"gpuDevicesRequest": 8}, parallelism=2)  # 2 pods of 8
    assert api.post("/api/v1/workloads/trainings", body, format="json").status_code == 200


def test_a_preview_says_it_would_wait_in_the_queue(kai_project):
    project, api = kai_project
    answer = submit(api, project, "trainings", "t1", 3, dry=True)
    assert answer.status_code == 200, answer.json()
    quota = answer.json()["quota"]
    assert quota["allowed"] is True and quota["scheduler"] == "kai"
    assert f"it waits in project {project.name}'s queue" in quota["message"]


def test_a_cluster_without_a_queueing_scheduler_keeps_the_quota_check():
    cluster = ClusterFactory(gpu_scheduler="none", kai_detected=True)
    project = ProjectFactory(cluster=cluster, department=DepartmentFactory(), gpu_deserved=2, gpu_limit=4)
    member = UserFactory()
    MembershipFactory(user=member, project=project, role="member")
    api = bearer_client(member)
    assert submit(api, project, "trainings", "t1", 3).status_code == 200
    refused = submit(api, project, "trainings", "t2", 3)
    assert refused.status_code == 400 and message(refused).startswith("Project GPU limit exceeded")


def test_a_distributed_training_is_preemptible_unless_told_otherwise(kai_project):
    """Over the project's deserved GPUs (2) a distributed training is accepted, as a training is: it may run on
    lent GPUs and be reclaimed. Said to be non-preemptible, it could never run beyond the deserved share."""
    project, api = kai_project

    def distributed(name, **spec):
        body = {"name": name, "projectId": str(project.pk), "clusterId": str(project.cluster_id),
                "spec": {"image": "python:3.11", "distributedFramework": "PyTorch", "numWorkers": 2,
                         "compute": {"gpuDevicesRequest": 1}, **spec}}
        return api.post("/api/v1/workloads/distributed", body, format="json")

    assert distributed("over").status_code == 200  # 3 GPUs (a master and two workers): over deserved 2
    refused = distributed("pinned", preemptibility="non-preemptible")
    assert refused.status_code == 400
    assert "a non-preemptible distributed runs only within project" in message(refused)
