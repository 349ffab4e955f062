"""A training reclaimed by KAI Scheduler, in the browser: its page says who took its GPUs back and what it waits for
now, live, and the list says it under the phase with its place in the project's queue."""

import time
import uuid

import pytest
from playwright.sync_api import expect

from studio import services
from tests.conftest import SIM_TOKEN, bearer_client
from tests.factories import MembershipFactory, UserFactory
from tests.workloads.cluster_support import wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_reclaimed_training_says_by_whom_and_waits_in_its_queue(open_session, worker, start_kubesim):
    sim = start_kubesim(nodes=2, gpus_per_node=1, kai=True, run_seconds=3600, pull_seconds=0.1, tick=0.02)
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    api = bearer_client(root)
    cluster = services.cluster_create(actor=root, name=f"kai-{uuid.uuid4().hex[:6]}", api_server_url=sim.url,
                                      token=SIM_TOKEN, verify_tls=False)
    dept = api.post("/api/v1/org-unit/departments", {"name": f"d-{uuid.uuid4().hex[:4]}",
                                                     "clusterId": str(cluster.pk)}, format="json").json()
    projects = {}
    for letter in ("a", "b"):
        projects[letter] = api.post("/api/v1/org-unit/projects", {
            "name": f"{letter}-{uuid.uuid4().hex[:4]}", "clusterId": str(cluster.pk), "parentId": dept["id"],
            "resources": [{"nodePool": {"name": "default"}, "gpu": {"deserved": 1, "limit": 2}}]},
            format="json").json()
    member = UserFactory()
    MembershipFactory(user=member, project_id=int(projects["a"]["id"]), role="member")

    def train(letter, name):
        body = {"name": name, "projectId": projects[letter]["id"], "clusterId": str(cluster.pk),
                "spec": {"image": "busybox:1.36", "compute": {"gpuDevicesRequest": 1}}}
        answer = api.post("/api/v1/workloads/trainings", body, format="json")
        assert answer.status_code == 200, answer.json()
        return answer.json()["workloadId"]

    def sync():
        tasks.cluster_sync.apply(args=[str(cluster.pk)])

    # One after the other: KAI reclaims the newest of a queue's jobs first, and two trainings submitted at once may
    # reach the cluster in either order (the worker pushes them in parallel). Newest by the PodGroup's
    # creationTimestamp, in whole seconds: two made within one second go by their random UIDs (kubesim as KAI), and
    # a-two came 0.6 s after a-one in a full run (reclaiming a-one). A second's wait puts a-two in a later second.
    first = train("a", "a-one")
    wait_for(lambda: Workload.objects.get(pk=first).actual_phase == "Running", step=sync, timeout=60,
             what="A's first training running")
    time.sleep(1)
    second = train("a", "a-two")  # on a GPU lent over A's quota
    wait_for(lambda: Workload.objects.get(pk=second).actual_phase == "Running", step=sync, timeout=60,
             what="A's second training running")
    session = open_session(member.username)
    page = session.page
    page.goto(f"/workloads/{second}")
    train("b", "b-one")  # B wants its deserved GPU back
    wait_for(lambda: (Workload.objects.get(pk=second).pending_reason or {}).get("type") == "Reclaimed",
             step=sync, timeout=60, what="A's lent training reclaimed")
    reason = page.get_by_test_id("pending-reason")
    expect(reason).to_contain_text(f"Reclaimed by {projects['b']['name']}", timeout=15_000)
    expect(reason).to_contain_text(f"project {projects['b']['name']} needed back GPUs of its own quota")
    expect(page.get_by_test_id("waiting-for")).to_contain_text("Waiting now:")
    page.get_by_test_id("scheduler-words").get_by_text("The scheduler's own words").click()
    expect(page.get_by_test_id("scheduler-words")).to_contain_text("(workload b-one) took back GPUs of its quota")
    expect(page.get_by_test_id("scheduler-words")).to_contain_text("Scheduler: Pod ")
    expect(page.get_by_test_id("queue-detail")).to_contain_text(f"queue {projects['a']['name']}")
    session.screenshot("workload-reclaimed-kai")

    page.goto("/workloads")
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="a-two"))
    expect(row.get_by_test_id("pending-reason")).to_have_attribute("data-type", "Reclaimed")
    expect(row.get_by_test_id("queue-position")).to_have_text("It is next in line.")
