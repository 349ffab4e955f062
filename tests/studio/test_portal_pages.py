"""Portal pages through HTTP: paging and sorting over the API's FilterSets, filters kept, project quota edits,
cluster test connection, the live part of a workload page, clone asking for an owner project."""

import re

import pytest

from profiles.models import ServiceProfile
from studio.models import AuditEvent, Project
from tests.factories import DepartmentFactory
from workloads.models import Workload

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, org):
    client.force_login(org.users.platform_admin)
    return client


def make_workload(org, name, **fields):
    values = dict(kind="training", name=name, requested_name=name, project=org.a, department=org.department,
                  cluster=org.cluster, created_by_name="bob", spec={"image": "python:3.11"}, actual_phase="Running")
    values.update(fields)
    return Workload.objects.create(**values)


def test_workload_list_filters_by_type_with_any_phase_and_keeps_the_choice(client, org):
    make_workload(org, "train-a")
    make_workload(org, "serve-b", kind="inference", actual_phase="Pending")
    client.force_login(org.users.member)
    html = client.get("/workloads", {"filterBy": ["type==inference", ""]}).content.decode()
    assert "serve-b" in html and "train-a" not in html
    html = client.get("/workloads", {"filterBy": ["", "phase==Pending"]}).content.decode()
    assert "serve-b" in html and "train-a" not in html
    assert re.search(r'<option value="phase==Pending"\s+selected', html)  # the phase filter is kept


def test_audit_trail_pages_instead_of_stopping_at_200(admin_client, org):
    AuditEvent.objects.bulk_create([AuditEvent(action="update", object_type="studio.project", object_id=str(i),
                                               object_repr=f"event-{i:03d}") for i in range(260)])
    first = admin_client.get("/org/audit").content.decode()
    assert first.count("<tr data-row=") == 50  # 50 events a page
    assert 'href="?offset=50"' in first
    last = admin_client.get("/org/audit", {"offset": 250}).content.decode()
    assert "Previous" in last and 'aria-disabled="true" tabindex="-1">Next' in last


def test_lists_sort_by_api_fields_and_report_bad_ones(admin_client, org):
    html = admin_client.get("/org/projects", {"sortBy": "name", "sortOrder": "desc"}).content.decode()
    assert html.index("<strong>beta</strong>") < html.index("<strong>alpha</strong>")
    assert 'aria-sort="descending"' in html
    bad = admin_client.get("/org/projects", {"sortBy": "nope"}).content.decode()
    assert "sortBy:" in bad and "is not one of" in bad


def test_admin_moves_a_project_but_not_its_name_and_edits_no_gpu_total(admin_client, org):
    """Its quotas are the per-node-pool form's (tests/studio/test_portal_org_edits.py): no GPU total the scheduler
    would not use is offered."""
    other = DepartmentFactory(name="ops")
    page = admin_client.get(f"/org/projects/{org.a.pk}/edit")
    assert page.status_code == 200 and b'name="name"' not in page.content
    assert b'name="gpu_deserved"' not in page.content and b'name="gpu_limit"' not in page.content
    saved = admin_client.post(f"/org/projects/{org.a.pk}/edit", {"department": other.pk})
    assert saved.status_code == 302
    assert Project.objects.get(pk=org.a.pk).department == other
    assert AuditEvent.objects.filter(object_type="studio.project", action="update", actor_name="root").exists()


def test_admin_sets_a_projects_idle_reclaim_and_time_limits_on_its_page(admin_client, client_for, org):
    """The page edits the schedulingRules the API answers (minutes on the page, seconds in the API); a rule the
    page does not show is kept, an empty field clears its rule, a bad value is an error next to its field."""
    Project.objects.filter(pk=org.a.pk).update(scheduling_rules={"interactiveJobPreemptIdleDurationSeconds": 60})
    url = f"/org/projects/{org.a.pk}/edit"
    base = {"department": org.department.pk}
    refused = admin_client.post(url, {**base, "idle_workspace_minutes": 0}).content.decode()
    assert "Ensure this value is greater than or equal to 1" in refused
    assert admin_client.post(url, {**base, "idle_workspace_minutes": 30, "training_limit_minutes": 120}).status_code == 302
    rules = client_for(org.users.platform_admin).get(f"/api/v1/org-unit/projects/{org.a.pk}").json()["schedulingRules"]
    assert rules == {"interactiveJobPreemptIdleDurationSeconds": 60, "interactiveJobMaxIdleDurationSeconds": 1800,
                     "trainingJobTimeLimitSeconds": 7200}
    page = admin_client.get(url).content.decode()
    assert 'name="idle_workspace_minutes" value="30"' in page and 'name="training_limit_minutes" value="120"' in page
    assert admin_client.post(url, {**base, "idle_workspace_minutes": "", "training_limit_minutes": 120}).status_code == 302
    assert Project.objects.get(pk=org.a.pk).scheduling_rules == {
        "interactiveJobPreemptIdleDurationSeconds": 60, "trainingJobTimeLimitSeconds": 7200}


def test_cluster_edit_keeps_a_blank_token_and_test_connection_reports(admin_client, org):
    org.cluster.token = "secret-token"
    org.cluster.save()
    response = admin_client.post(f"/org/clusters/{org.cluster.pk}/edit", {
        "name": org.cluster.name, "api_server_url": "http://127.0.0.1:9", "token": "", "kubeconfig": "",
        "verify_tls": "on", "prometheus_url": ""})
    assert response.status_code == 302
    org.cluster.refresh_from_db()
    assert org.cluster.token == "secret-token" and org.cluster.api_server_url == "http://127.0.0.1:9"
    page = admin_client.post(f"/org/clusters/{org.cluster.pk}/test", follow=True).content.decode()
    assert "not reachable" in page and "toast-error" in page


@pytest.mark.parametrize("field, url, says", [
    ("api_server_url", "http://169.254.169.254/latest", "link-local, metadata"),
    ("prometheus_url", "http://[fe80::1]:9090", "link-local, metadata"),
])
def test_cluster_form_refuses_what_the_api_refuses(admin_client, org, field, url, says):
    form = {"name": org.cluster.name, "api_server_url": "http://127.0.0.1:9", "token": "", "kubeconfig": "",
            "verify_tls": "on", "prometheus_url": "", field: url}
    response = admin_client.post(f"/org/clusters/{org.cluster.pk}/edit", form)
    assert response.status_code == 200 and says in response.content.decode()
    org.cluster.refresh_from_db()
    assert getattr(org.cluster, field) != url
    bad = admin_client.post(f"/org/clusters/{org.cluster.pk}/edit", {**form, field: "", "kubeconfig": (
        "clusters: [{name: c, cluster: {server: 'https://169.254.169.254'}}]")})
    assert "kubeconfig.clusters[0].cluster.server" in bad.content.decode()


def test_workload_live_part_offers_only_what_applies(client, org):
    workload = make_workload(org, "train-a")
    client.force_login(org.users.member)
    live = client.get(f"/workloads/{workload.pk}", {"part": "live"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Suspend" in live and 'hx-trigger="every 2s"' in live
    Workload.objects.filter(pk=workload.pk).update(actual_phase="Completed")
    live = client.get(f"/workloads/{workload.pk}", {"part": "live"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Completed" in live and "Suspend" not in live and "hx-trigger" not in live  # settled: no more polling
    Workload.objects.filter(pk=workload.pk).update(deleted_at="2026-01-01T00:00:00Z")
    gone = client.get(f"/workloads/{workload.pk}", {"part": "live"}, HTTP_HX_REQUEST="true")
    assert gone.status_code == 286  # htmx stops polling a deleted workload


def test_the_logs_panel_follows_the_logs_rule(client, org):
    """As the logs API decides (workloads.api.pod_logs): every role of the project, viewers too, and platform
    admins; another project's member does not see the page."""
    workload = make_workload(org, "train-a")
    for user in (org.users.viewer, org.users.member, org.users.platform_admin):
        client.force_login(user)
        assert b'id="logs"' in client.get(f"/workloads/{workload.pk}").content
    client.force_login(org.users.other)
    assert client.get(f"/workloads/{workload.pk}").status_code == 404


def test_clone_from_the_page_needs_an_owner_project(admin_client, org, make_profile):
    source = make_profile("lab", display_name="Lab")
    refused = admin_client.post(f"/studio/service-profiles/{source.pk}/clone",
                                {"name": "lab-two", "displayName": "Lab two", "projectId": ""})
    assert b"Choose the project that owns the copy" in refused.content
    done = admin_client.post(f"/studio/service-profiles/{source.pk}/clone",
                             {"name": "lab-two", "displayName": "", "projectId": org.b.pk})
    assert done.status_code == 302
    copy = ServiceProfile.objects.get(name="lab-two")
    assert (copy.owner_project, copy.display_name) == (org.b, "Lab (copy)")


def test_admin_creates_a_user_sees_the_password_once_and_manages_roles(admin_client, org):
    from django.contrib.auth import get_user_model

    created = admin_client.post("/org/users", {"email": "erin@example.com"}).content.decode()
    password = re.search(r"data-secret>([^<]+)<", created).group(1)
    erin = get_user_model().objects.get(username="erin@example.com")
    assert erin.check_password(password)
    assert password not in admin_client.get("/org/users").content.decode()  # shown once
    assert admin_client.post("/org/users", {"email": "erin@example.com"}).status_code == 200  # taken: inline error

    page = f"/org/users/{erin.pk}"
    admin_client.post(page, {"action": "set-role", "project": org.b.pk, "role": "L1 researcher"})
    assert b"Project <a" in admin_client.get(page).content
    admin_client.post(page, {"action": "make-admin"})
    from studio.models import is_platform_admin
    assert is_platform_admin(get_user_model().objects.get(pk=erin.pk))
    admin_client.post(page, {"action": "remove-admin"})
    assert not is_platform_admin(get_user_model().objects.get(pk=erin.pk))
    reset = admin_client.post(page, {"action": "reset-password"}).content.decode()
    new_password = re.search(r"data-secret>([^<]+)<", reset).group(1)
    assert get_user_model().objects.get(pk=erin.pk).check_password(new_password)
    admin_client.post(page, {"action": "deactivate"})
    assert not get_user_model().objects.get(pk=erin.pk).is_active
    refused = admin_client.post(f"/org/users/{org.users.platform_admin.pk}", {"action": "deactivate"}, follow=True)
    assert b"You cannot deactivate yourself." in refused.content and b"toast-error" in refused.content


def test_users_pages_are_for_platform_admins(client, org):
    client.force_login(org.users.member)
    assert client.get("/org/users").status_code == 403
    assert client.get(f"/org/users/{org.users.member.pk}").status_code == 403


def test_a_user_creates_an_access_key_sees_its_secret_once_and_deletes_it(client, org):
    from studio.models import AccessKey

    client.force_login(org.users.member)
    created = client.post("/account/access-keys", {"name": "ci"}).content.decode()
    secret = re.search(r"data-secret>([^<]+)<", created).group(1)
    key = AccessKey.objects.get(user=org.users.member, name="ci")
    assert key.check_secret(secret) and secret not in client.get("/account/access-keys").content.decode()
    token = client.post("/api/v1/token", {"grantType": "client_credentials", "clientId": key.client_id,
                                          "clientSecret": secret}, content_type="application/json")
    assert token.status_code == 200
    client.force_login(org.users.other)
    assert client.post(f"/account/access-keys/{key.pk}/delete").status_code == 404  # not theirs
    client.force_login(org.users.member)
    assert client.post(f"/account/access-keys/{key.pk}/delete").status_code == 302
    assert not AccessKey.objects.filter(pk=key.pk).exists()
