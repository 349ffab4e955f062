"""The catalog launch form's Preview button, in a real Chromium on kubesim over HTTP: the objects the launch
would create (YAML, folded), the cluster's verdict on each as a badge, the quota and policy decisions — and
nothing launched."""

from io import StringIO

import pytest
from django.core.management import call_command
from kubernetes import client
from playwright.sync_api import expect

from profiles.models import LaunchSecret, ServiceProfile
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_preview_shows_objects_verdicts_quota_and_policy_without_launching(open_session, sim_org):
    call_command("system_profiles", stdout=StringIO())
    client.CoreV1Api(sim_org.k8s).create_namespace({"metadata": {"name": sim_org.namespace}})
    profile = ServiceProfile.objects.get(name="jupyter-notebook")
    session = open_session(sim_org.user.username)
    page = session.page
    page.goto(f"/catalog/{profile.pk}/launch")
    page.get_by_label("Workload name").fill("demo")
    page.get_by_role("button", name="Preview").click()

    preview = page.locator("section.launch-preview")
    expect(preview.get_by_role("heading", name="Preview of demo")).to_be_visible()
    expect(preview.get_by_text("Ready to launch")).to_be_visible()
    expect(preview.get_by_text("Within the project's GPU quota.")).to_be_visible()
    expect(preview.get_by_text("The spec complies with the project's policy.")).to_be_visible()
    secret = preview.locator("details").first  # the launch Secret goes first: the pods read it
    expect(secret.locator("summary")).to_contain_text("Secret")
    expect(secret.get_by_text("Cluster accepts")).to_be_visible()
    secret.locator("summary").click()
    expect(secret.locator("pre")).to_contain_text("***")
    deployment = preview.locator("details").filter(has=page.locator("summary", has_text="Deployment"))
    expect(deployment.get_by_text("Cluster accepts")).to_be_visible()
    expect(page.get_by_label("Workload name")).to_have_value("demo")  # the form keeps what was typed
    session.screenshot("launch-preview")
    assert (Workload.objects.count(), LaunchSecret.objects.count()) == (0, 0)
    assert client.AppsV1Api(sim_org.k8s).list_namespaced_deployment(sim_org.namespace).items == []
