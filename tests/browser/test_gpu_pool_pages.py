"""The cluster as a GPU pool: the overview (GPUs allocated, free and idle per cluster, pool and node, utilisation,
the waiting queue, a broken cluster shown as such), a node pool's page and a node's page, read from the simulated
cluster's nodes and the workloads placed on them."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from studio.models import Cluster, NodePool
from tests.browser.test_layout import AXE, AXE_RUN
from tests.factories import ClusterFactory, UserFactory
from workloads.models import MetricSample, Pod, Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pool(sim_org):
    """sim-node-3 alone in pool `solo`; a 4-GPU job on sim-node-0 with two of its GPUs idle; a 16-GPU job waiting
    for `solo`; a second cluster that is down."""
    cluster = sim_org.cluster
    NodePool.objects.create(cluster=cluster, name="solo", label_key="kubernetes.io/hostname", label_value="sim-node-3")
    common = dict(kind="training", project=sim_org.project, department=sim_org.project.department, cluster=cluster,
                  created_by_name="bob@example.com", requested_pods=1)
    running = Workload.objects.create(name="big-train", requested_name="big-train", gpu_request=4,
                                      actual_phase="Running", running_pods=1, spec={"image": "python:3.11"}, **common)
    Pod.objects.create(workload=running, uid="u-0", name="big-train-0", phase="Running", node_name="sim-node-0")
    now = timezone.now()
    for gpu, value in (("0", 50), ("1", 50), ("2", 0), ("3", 0)):
        MetricSample.objects.create(workload=running, pod_name="big-train-0", type="GPU_UTILIZATION",
                                    labels={"gpu": gpu}, value=value, timestamp=now - timedelta(seconds=30))
    Workload.objects.create(name="waits", requested_name="waits", gpu_request=16, actual_phase="Pending",
                            phase_updated_at=now - timedelta(minutes=10), phase_message="No node of pool solo has 16 free GPUs.",
                            spec={"image": "python:3.11", "nodePools": ["solo"]}, node_pool="solo", **common)
    ClusterFactory(name="broken", status=Cluster.Status.DISCONNECTED, status_message="connection refused (port 6443)")
    UserFactory(username="root", platform_admin=True)
    return sim_org


def figures(card):
    return {el.get_attribute("data-figure"): el.inner_text()
            for el in card.get_by_test_id("gpu-figures").first.locator("[data-figure]").all()}


def check(session, name, width):
    page = session.page
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == [], f"axe-core violations on {name} at {width}"
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    session.screenshot(f"{name}-{width}")


@pytest.mark.parametrize("width", [1440, 390])
def test_overview_pool_and_node_pages(open_session, pool, width):
    session = open_session("root", width=width)
    page = session.page
    page.goto("/gpus")
    card = page.locator(f"[data-cluster='{pool.cluster.name}']")
    # requested: what runs and what waits (the 16 GPUs waiting for solo), as every page counts it
    assert figures(card) == {"gpus": "32", "allocated": "4", "requested": "20", "free": "28", "idle": "2",
                             "utilisation": "3 %",
                             "nodes": "4/4"}
    pools = card.locator("table[data-table=gpu-pools]")
    expect(pools.locator("tr[data-row=default] td[data-col=gpus]")).to_have_text("24")
    expect(pools.locator("tr[data-row=solo] td[data-col=gpus]")).to_have_text("8")
    nodes = card.locator("table[data-table=gpu-nodes]")
    expect(nodes.locator("tr[data-row=sim-node-0] td[data-col=allocated]")).to_have_text("4")
    expect(nodes.locator("tfoot td[data-col=gpus]")).to_have_text("32")  # the table's total
    expect(nodes.locator("tfoot td[data-col=free]")).to_have_text("28")
    expect(card.get_by_role("link", name="waits")).to_be_visible()
    expect(card.locator("table[data-table=gpu-queue] tbody td[data-col=place]")).to_have_text("1")
    broken = page.locator("[data-cluster=broken]")
    expect(broken.get_by_test_id("cluster-state")).to_have_text("Broken")
    expect(broken.get_by_test_id("cluster-problem")).to_contain_text("connection refused (port 6443)")
    check(session, "gpu-overview", width)

    card.get_by_role("link", name="solo").first.click()
    expect(page.locator("main h1.page-title")).to_contain_text("Node pool solo")
    assert figures(page)["gpus"] == "8" and figures(page)["requested"] == "16"  # it waits for this pool
    expect(page.get_by_role("link", name="waits")).to_be_visible()
    expect(page.get_by_text("No node of pool solo has 16 free GPUs.")).to_be_visible()
    assert page.locator("table[data-table=gpu-nodes] tbody td[data-col=name]").all_inner_texts() == ["sim-node-3"]
    check(session, "gpu-node-pool", width)

    page.goto(f"/gpus/{pool.cluster.pk}/nodes/sim-node-0")
    expect(page.get_by_test_id("node-status")).to_have_text("Ready")
    expect(page.get_by_role("link", name="big-train")).to_be_visible()
    expect(page.locator("main")).to_contain_text("(2 idle GPUs)")
    check(session, "gpu-node", width)


def test_nodes_and_pools_export_and_sort_naturally(client, pool):
    import csv
    import io

    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="root"))
    response = client.get(f"/gpus/{pool.cluster.pk}/nodes.csv?sortBy=name&sortOrder=desc&columns=name,pool,gpus")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows == [["Node", "Pool", "GPUs"], ["sim-node-3", "solo", "8"], ["sim-node-2", "default", "8"],
                    ["sim-node-1", "default", "8"], ["sim-node-0", "default", "8"]]
    solo = client.get(f"/gpus/{pool.cluster.pk}/nodes.csv?pool=solo")
    assert [row[0] for row in csv.reader(io.StringIO(b"".join(solo.streaming_content).decode()))] == [
        "Node", "sim-node-3"]
    queue = client.get(f"/gpus/{pool.cluster.pk}/queue.csv")
    assert [row[:5] for row in csv.reader(io.StringIO(b"".join(queue.streaming_content).decode()))] == [
        ["#", "Workload", "Project", "Pool", "GPUs"], ["1", "waits", pool.project.name, "solo", "16"]]
    pools = client.get(f"/gpus/{pool.cluster.pk}/pools.csv?sortBy=name")
    assert [row[:3] for row in csv.reader(io.StringIO(b"".join(pools.streaming_content).decode()))][1:] == [
        ["default", "3/3", "24"], ["solo", "1/1", "8"]]


def test_a_member_sees_only_the_clusters_of_their_projects_and_unknown_nodes_are_404(open_session, pool):
    session = open_session(pool.user.username)
    page = session.page
    page.goto("/gpus")
    expect(page.locator("[data-cluster]")).to_have_count(1)
    expect(page.get_by_role("link", name="GPU overview")).to_have_attribute("aria-current", "page")
    session.goto_expecting(f"/gpus/{pool.cluster.pk}/nodes/no-such-node", 404)
    broken = Cluster.objects.get(name="broken")
    session.goto_expecting(f"/gpus/{broken.pk}/pools/default", 404)
