"""The wizard's last step has "Try it": a platform admin previews a launch of the profile — a draft too — in a
project of their choice, in a real Chromium on kubesim: the objects with the cluster's verdicts, the quota and
policy decisions, and nothing created. Others may not."""

import pytest
from kubernetes import client
from playwright.sync_api import expect

from profiles import services as profile_services
from profiles.models import LaunchSecret
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_tries_a_draft_profile_from_the_last_step_and_nothing_is_created(
        open_session, org, sim_org, notebook_version):
    client.CoreV1Api(sim_org.k8s).create_namespace({"metadata": {"name": sim_org.namespace}})
    profile = profile_services.profile_create(
        actor=org.users.platform_admin, name="try-notebook", display_name="Try Notebook",
        template_version=notebook_version, service_type="notebook", owner_project=sim_org.project,
        draft_step="sharing")
    session = open_session("root")
    page = session.page
    page.goto(f"/studio/service-profiles/{profile.pk}/edit/sharing")
    expect(page.get_by_role("heading", name="5. Sharing")).to_be_visible()
    page.get_by_role("button", name="Try it").click()

    expect(page.get_by_label("Try in project")).to_have_value(str(sim_org.project.pk))  # the owner project first
    page.get_by_label("Workload name").fill("try-demo")
    page.get_by_role("button", name="Preview").click()

    preview = page.locator("section.launch-preview")
    expect(preview.get_by_role("heading", name="Preview of try-demo")).to_be_visible()
    expect(preview.get_by_text("Within the project's GPU quota.")).to_be_visible()
    expect(preview.get_by_text("The spec complies with the project's policy.")).to_be_visible()
    deployment = preview.locator("details").filter(has=page.locator("summary", has_text="Deployment"))
    expect(deployment.get_by_text("Cluster accepts")).to_be_visible()
    deployment.locator("summary").click()
    expect(deployment.locator("pre")).to_contain_text("name: try-demo-")
    expect(page.get_by_label("Workload name")).to_have_value("try-demo")
    session.screenshot("wizard-try-it")
    assert (Workload.objects.count(), LaunchSecret.objects.count()) == (0, 0)
    assert client.AppsV1Api(sim_org.k8s).list_namespaced_deployment(sim_org.namespace).items == []
    profile.refresh_from_db()
    assert profile.draft_step == "sharing"  # still a draft: trying it did not finish the wizard

    page.get_by_role("link", name="Back to the wizard").click()
    expect(page.get_by_role("heading", name="5. Sharing")).to_be_visible()

    member = open_session(sim_org.user.username)
    member.goto_expecting(f"/studio/service-profiles/{profile.pk}/try", 403)
