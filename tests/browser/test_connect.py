"""Connect: a running workspace's tool URL is a Connect button (for viewers too, who may not Suspend); a
cluster-internal address is said to be one instead; the routes show address and port as the service exposes them."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN
from tests.browser.test_workload_pages import make_workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1440, 390])
def test_a_running_workspace_offers_connect(open_session, org, width):
    workload = make_workload(org, kind="workspace", name="nb", endpoints={
        "url": "https://nb.apps.example.com/", "serviceAddress": "172.18.0.3", "serviceType": "NodePort",
        "ports": [{"name": "http", "port": 8888, "nodePort": 30888}]})
    session = open_session("carol", width=width)  # a viewer: may open the tool, may not change the workload
    page = session.page
    page.goto(f"/workloads/{workload.pk}")
    connect = page.get_by_role("link", name="Connect")
    expect(connect).to_have_attribute("href", "https://nb.apps.example.com/")
    expect(connect).to_have_attribute("target", "_blank")
    expect(page.get_by_role("button", name="Suspend")).to_have_count(0)
    expect(page.get_by_test_id("routes")).to_contain_text("http: 172.18.0.3:30888")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    session.screenshot(f"workspace-connect-{width}")


def test_no_connect_for_a_cluster_internal_address_or_a_stopped_workspace(open_session, org):
    internal = make_workload(org, kind="workspace", name="inside", endpoints={
        "url": "http://inside.ns.svc.cluster.local:8888", "serviceAddress": "10.96.0.7", "serviceType": "ClusterIP",
        "ports": [{"name": "http", "port": 8888}]})
    stopped = make_workload(org, kind="workspace", name="stopped", actual_phase="Stopped", desired_phase="Stopped",
                            running_pods=0, endpoints={"url": "https://stopped.apps.example.com/", "ports": []})
    page = open_session("bob").page
    page.goto(f"/workloads/{internal.pk}")
    expect(page.get_by_test_id("routes")).to_contain_text("inside the cluster only")
    expect(page.get_by_test_id("routes")).to_contain_text("http: 10.96.0.7:8888")
    expect(page.get_by_role("link", name="Connect")).to_have_count(0)
    page.goto(f"/workloads/{stopped.pk}")
    expect(page.get_by_role("button", name="Resume")).to_be_visible()
    expect(page.get_by_role("link", name="Connect")).to_have_count(0)
