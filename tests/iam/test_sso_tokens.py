"""The API's single sign-on against a real provider (Dex): a CLI's authorization code exchanged for our tokens
(`exchange_token`, v2 `authorization_code`), an ID token exchanged (`external_token_exchange`), and the
`refresh_token` grant, which asks the provider again; groups become roles through group access rules."""

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from studio.models import AccessRule, ExternalIdentity, Role
from tests.iam.conftest import ADA, BEN
from tests.iam.dex_support import CLI_REDIRECT, DexUser

pytestmark = [pytest.mark.django_db, pytest.mark.dex]


@pytest.fixture
def dex(client_for, org, start_dex):
    """Dex with Ada (team-a) and Ben (team-b), set as the provider through the API; team-a is L1 researcher in
    project A, team-b viewer in project B."""
    dex = start_dex([ADA, BEN])
    admin = client_for(org.users.platform_admin)
    assert admin.post("/api/v1/idps", dex.idp_body(), format="json").status_code == 201
    for group, project, role in (("team-a", org.a, "L1 researcher"), ("team-b", org.b, "Viewer")):
        created = admin.post("/api/v1/authorization/access-rules", {
            "subjectId": group, "subjectType": "group", "roleId": Role.objects.get(name=role).pk,
            "scopeId": str(project.pk), "scopeType": "project"}, format="json")
        assert created.status_code == 201, created.json()
    return dex


def v1(body) -> tuple[int, dict]:
    answer = APIClient().post("/api/v1/token", body, format="json")
    return answer.status_code, answer.json()


def projects_of(access_token: str) -> list[str]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access_token}")
    answer = client.get("/api/v1/org-unit/projects")
    assert answer.status_code == 200, answer.json()
    return sorted(p["name"] for p in answer.json()["projects"])


def test_a_cli_code_is_exchanged_for_tokens_of_a_new_user_with_her_groups_roles(dex, org):
    status, tokens = v1({"grantType": "exchange_token", "code": dex.cli_login(ADA.email, ADA.password),
                         "redirectUri": CLI_REDIRECT, "clientID": "paas-studio"})
    assert status == 200, tokens
    assert set(tokens) == {"accessToken", "refreshToken", "tokenType", "expiresIn"}
    ada = get_user_model().objects.get(username=ADA.email)
    assert not ada.has_usable_password()
    assert sorted(ada.groups.values_list("name", flat=True)) == ["readers", "team-a"]
    assert ExternalIdentity.objects.get(user=ada).refresh_token  # Dex's, kept encrypted for the refresh grant
    assert projects_of(tokens["accessToken"]) == ["alpha"]  # A through team-a's rule, nothing of B
    # A code is good once, and only for the redirect URI it was issued to.
    status, body = v1({"grantType": "exchange_token", "code": dex.cli_login(ADA.email, ADA.password),
                       "redirectUri": "http://127.0.0.1:9/elsewhere"})
    assert status == 401 and "refused the code" in body["message"]


def test_refresh_rotates_asks_the_provider_again_and_a_provider_that_forgot_the_session_refuses(dex, org):
    _, first = v1({"grantType": "exchange_token", "code": dex.cli_login(ADA.email, ADA.password),
                   "redirectUri": CLI_REDIRECT})
    status, second = v1({"grantType": "refresh_token", "refreshToken": first["refreshToken"]})
    assert status == 200, second
    assert second["refreshToken"] != first["refreshToken"] and projects_of(second["accessToken"]) == ["alpha"]
    status, reused = v1({"grantType": "refresh_token", "refreshToken": first["refreshToken"]})
    assert status == 401 and "not valid" in reused["message"]
    # Ada leaves team-a at the provider, which restarts with its new config (and without its sessions).
    dex.restart(users=[DexUser(**{**ADA.__dict__, "groups": ["readers"]}), BEN])
    status, refused = v1({"grantType": "refresh_token", "refreshToken": second["refreshToken"]})
    assert status == 401 and "no longer accepts this session" in refused["message"]
    status, again = v1({"grantType": "exchange_token", "code": dex.cli_login(ADA.email, ADA.password),
                        "redirectUri": CLI_REDIRECT})
    assert status == 200, again
    assert projects_of(again["accessToken"]) == []  # team-a's role is gone with the group
    assert list(get_user_model().objects.get(username=ADA.email).groups.values_list("name", flat=True)) == ["readers"]
    assert get_user_model().objects.filter(username=ADA.email).count() == 1  # the same user, not a new one


def test_v2_authorization_code_and_refresh_in_oauth2_form(dex, org):
    client = APIClient()
    answer = client.post("/api/v2/token", {"grant_type": "authorization_code", "code": dex.cli_login(
        BEN.email, BEN.password), "redirect_uri": CLI_REDIRECT, "client_id": "paas-studio"})
    assert answer.status_code == 200, answer.json()
    tokens = answer.json()
    assert tokens["token_type"] == "Bearer" and projects_of(tokens["access_token"]) == ["beta"]
    refreshed = client.post("/api/v2/token", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.json()
    again = client.post("/api/v2/token", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
    assert again.status_code == 401 and again.json()["error"] == "invalid_grant"
    missing = client.post("/api/v2/token", {"grant_type": "authorization_code"})
    assert missing.status_code == 400 and {e["field"] for e in missing.json()["errors"]} == {"code", "redirect_uri"}


def test_an_id_token_of_the_provider_is_exchanged_and_a_forged_one_refused(dex, org):
    status, tokens = v1({"grantType": "external_token_exchange", "externalToken": dex.id_token(BEN.email, BEN.password)})
    assert status == 200, tokens
    assert projects_of(tokens["accessToken"]) == ["beta"]
    header, payload, signature = dex.id_token(ADA.email, ADA.password).split(".")
    forged = ".".join((header, payload, signature[:-4] + ("AAAA" if signature[-4:] != "AAAA" else "BBBB")))
    status, refused = v1({"grantType": "external_token_exchange", "externalToken": forged})
    assert status == 401 and "refused" in refused["message"]
    assert not get_user_model().objects.filter(username=ADA.email).exists()


def test_a_user_outside_the_mandatory_claim_is_refused(client_for, org, dex):
    admin = client_for(org.users.platform_admin)
    body = dex.idp_body()
    body["oidcData"]["mandatoryClaim"] = {"claim": "groups", "values": ["team-a"]}
    assert admin.put("/api/v1/idps/oidc", body, format="json").status_code == 200
    status, refused = v1({"grantType": "external_token_exchange", "externalToken": dex.id_token(BEN.email, BEN.password)})
    assert status == 401 and "lacks what this installation asks for" in refused["message"]
    status, _ = v1({"grantType": "external_token_exchange", "externalToken": dex.id_token(ADA.email, ADA.password)})
    assert status == 200


def test_grants_without_a_provider_or_fields_are_400s_naming_them(db):
    status, body = v1({"grantType": "exchange_token", "code": "x", "redirectUri": CLI_REDIRECT})
    assert status == 400 and body["message"] == "No identity provider is configured here."
    status, body = v1({"grantType": "refresh_token"})
    assert status == 400 and [e["field"] for e in body["errors"]] == ["refreshToken"]
    status, body = v1({"grantType": "refresh_token", "refreshToken": "not-a-token"})
    assert status == 401


def test_group_rules_count_only_for_the_groups_of_the_last_login(dex, org):
    """Rules are read from the user's groups: a rule added for a group after her login applies at once."""
    _, tokens = v1({"grantType": "external_token_exchange", "externalToken": dex.id_token(ADA.email, ADA.password)})
    assert projects_of(tokens["accessToken"]) == ["alpha"]
    AccessRule.objects.create(subject_type="group", subject_id="readers", role=Role.objects.get(name="Viewer"),
                              scope_type="project", scope_id=str(org.b.pk), project=org.b)
    assert projects_of(tokens["accessToken"]) == ["alpha", "beta"]
