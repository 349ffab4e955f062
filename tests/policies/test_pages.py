"""The policy pages: the list, the edit form with each problem at its field, the effective view of a project."""

import json

import pytest

from policies.models import Policy

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, org):
    client.force_login(org.users.platform_admin)
    return client


def test_the_list_shows_the_built_in_default_and_stored_policies(admin_client, org):
    Policy.objects.create(policy_type="trainings", scope="project", project=org.a, scope_key=f"project:{org.a.pk}",
                          name="alpha-limits", rules={"compute": {"gpuDevicesRequest": {"max": 1}}})
    page = admin_client.get("/policies")
    assert page.status_code == 200
    text = page.content.decode()
    assert "tenant default" in text and "alpha-limits" in text and "project alpha" in text
    assert f"/policies/trainings/edit?scope=project&amp;projectId={org.a.pk}" in text
    assert 'href="/policies"' in admin_client.get("/").content.decode()  # in the nav


def test_edit_saves_and_shows_each_problem_at_its_field(admin_client, org):
    url = f"/policies/workspaces/edit?scope=project&projectId={org.a.pk}"
    page = admin_client.get(url)
    assert page.status_code == 200 and b"no policy of its own yet" in page.content
    assert b"security.runAsUid" in page.content  # the effective rules, from the built-in default
    bad = admin_client.post(url, {"name": "alpha", "rules": json.dumps({"security": {"runAsUid": {"min": "x"}}}),
                                  "defaults": "{not json"})
    text = bad.content.decode()
    assert bad.status_code == 200 and 'id="f-defaults-errors"' in text and "Not valid JSON" in text
    bad = admin_client.post(url, {"name": "alpha", "rules": json.dumps({"security": {"runAsUid": {"min": "x"}}}),
                                  "defaults": json.dumps({"nosuch": 1})})
    text = bad.content.decode()
    assert 'id="f-rules-errors"' in text and "policy.rules.security.runAsUid.min" in text
    assert 'id="f-defaults-errors"' in text and "policy.defaults.nosuch: Unknown field" in text
    good = admin_client.post(url, {"name": "alpha", "rules": json.dumps({"security": {"hostNetwork": {"canEdit": True}}}),
                                   "defaults": "{}"})
    assert good.status_code == 302
    assert Policy.objects.get(scope_key=f"project:{org.a.pk}").rules == {"security": {"hostNetwork": {"canEdit": True}}}
    effective = admin_client.get(f"/projects/{org.a.pk}/policy").content.decode()
    assert "privileged" in effective and "project alpha" in effective
    deleted = admin_client.post(f"/policies/workspaces/delete?scope=project&projectId={org.a.pk}", follow=True)
    assert b"the wider ones apply" in deleted.content and not Policy.objects.exists()


def test_pages_are_for_platform_admins_and_members_read_their_projects_effective_policy(client, org):
    client.force_login(org.users.member)
    assert client.get("/policies").status_code == 403
    assert client.get("/policies/trainings/edit?scope=tenant").status_code == 403
    assert client.post("/policies/trainings/delete?scope=tenant").status_code == 403
    page = client.get(f"/projects/{org.a.pk}/policy")
    assert page.status_code == 200 and b"baseline" in page.content and b"edit project policy" not in page.content
    assert client.get(f"/projects/{org.b.pk}/policy").status_code == 404
