"""A profile still in the portal's wizard (`draft_step` set) is in no catalog and cannot be launched; finishing
the wizard is an ordinary update that clears it. Outputs say which of their values are sensitive."""

import pytest

from profiles import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft(make_profile):
    return make_profile("half-done", sharing={"mode": "all"}, draft_step="inputs")


def test_a_draft_is_in_no_catalog_and_its_launch_is_400_until_it_is_finished(client_for, org, draft):
    member = client_for(org.users.member)
    assert member.get(f"/api/v1/catalog?projectId={org.a.id}").json()["profiles"] == []
    assert client_for(org.users.platform_admin).get(f"/api/v1/service-profiles/{draft.id}").json()["draft"] is True
    body = {"projectId": org.a.id, "name": "run1", "inputs": {"command": "python"}}
    refused = member.post(f"/api/v1/service-profiles/{draft.id}/launch", body, format="json")
    assert refused.status_code == 400
    assert refused.json()["errors"] == [
        {"field": "profile", "message": "This profile is still being set up; it cannot be launched yet."}]

    finished = services.profile_update(actor=org.users.platform_admin, profile=draft, draft_step="")
    assert (finished.is_draft, finished.revision) == (False, 2)
    assert [p["name"] for p in member.get(f"/api/v1/catalog?projectId={org.a.id}").json()["profiles"]] == ["half-done"]
    assert member.post(f"/api/v1/service-profiles/{draft.id}/launch", body, format="json").status_code == 201


def test_outputs_say_which_values_are_sensitive(client_for, org, profile):
    member = client_for(org.users.member)
    created = member.post(f"/api/v1/service-profiles/{profile.id}/launch",
                          {"projectId": org.a.id, "name": "run1", "inputs": {"command": "python", "api_key": "k"}},
                          format="json").json()
    outputs = member.get(f"/api/v1/workloads/{created['id']}/outputs").json()["outputs"]
    assert {o["name"]: o["sensitive"] for o in outputs} == {"url": False, "address": False, "epochs": False,
                                                            "key": True}
