"""The workload page of a catalog workload behind its profile, in a real Chromium on kubesim: the "Outdated"
badge and the diff, "Preview upgrade" (the cluster's verdicts, nothing changed), then "Upgrade now" rolls it."""

import pytest
from playwright.sync_api import expect

from studio.models import Level
from tests.conftest import bearer_client
from tests.factories import MembershipFactory, UserFactory
from tests.profiles.test_upgrades import WORKSPACE, WORKSPACE_VARIABLES, _launch, _new_version, _profile
from tests.workloads.test_e2e import wait_phase
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_an_outdated_workspace_shows_the_diff_previews_and_upgrades(open_session, worker, sim_org):
    root, template, profile = _profile(sim_org, "lab", "workspace", WORKSPACE, WORKSPACE_VARIABLES)
    workload_id = _launch(sim_org, profile, "lab", {"mode": "classic"})
    wait_phase(sim_org, workload_id, "Running")
    _new_version(root, template, profile, "workspace", {**WORKSPACE, "image": "jupyter/base-notebook:2"},
                 WORKSPACE_VARIABLES)

    viewer = UserFactory(username=f"viewer-{sim_org.project.name}")
    MembershipFactory(user=viewer, project=sim_org.project, role=Level.VIEWER)
    as_viewer = open_session(viewer.username)
    as_viewer.page.goto(f"/workloads/{workload_id}")
    panel = as_viewer.page.get_by_test_id("upgrade-panel")
    expect(panel.get_by_test_id("outdated")).to_be_visible()
    expect(panel.get_by_role("button")).to_have_count(0)  # a viewer sees it, cannot upgrade
    assert bearer_client(viewer).post(f"/api/v1/workloads/{workload_id}/upgrade").status_code == 403

    session = open_session(sim_org.user.username)
    page = session.page
    page.goto(f"/workloads/{workload_id}")
    panel = page.get_by_test_id("upgrade-panel")
    expect(panel.get_by_test_id("outdated")).to_be_visible()
    expect(panel).to_contain_text("revision 1 → 2")
    diff = panel.get_by_test_id("upgrade-diff")
    expect(diff.locator("tbody tr")).to_have_count(1)
    expect(diff).to_contain_text("jupyter/base-notebook:2")
    panel.get_by_role("button", name="Preview upgrade").click()
    deployment = page.get_by_test_id("upgrade-object").filter(has_text="Deployment")
    expect(deployment.get_by_text("Cluster accepts")).to_be_visible()
    expect(deployment).to_contain_text("roll")
    session.screenshot("workload-outdated")
    assert Workload.objects.get(pk=workload_id).profile_revision == 1  # the preview changed nothing

    page.get_by_role("button", name="Upgrade now").click()
    expect(page.get_by_text("Upgrading lab to revision 2.")).to_be_visible()
    expect(page.get_by_test_id("upgrade-panel")).to_have_count(0)
    row = Workload.objects.get(pk=workload_id)
    assert (row.profile_revision, row.spec["image"], row.launch_inputs["mode"]) == (2, "jupyter/base-notebook:2",
                                                                                    "classic")
