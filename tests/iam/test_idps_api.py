"""Run:ai's Idps tag against a real provider (Dex): the provider is set through the API, its discovery
document read at once, its client secret encrypted at rest and never answered; one from the environment is
listed and read-only; SAML and OpenShift are refused by name."""

import pytest
from django.db import connection

from studio.models import AuditEvent, IdentityProvider
from tests.iam.conftest import ADA
from tests.iam.dex_support import CLIENT_SECRET

pytestmark = [pytest.mark.django_db, pytest.mark.dex]


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


def test_an_admin_sets_the_provider_and_its_secret_is_never_answered_nor_stored_in_clear(admin, start_dex):
    dex = start_dex([ADA])
    created = admin.post("/api/v1/idps", dex.idp_body(uid="uidNumber"), format="json")
    assert created.status_code == 201, created.json()
    assert created.json() == {"alias": "oidc"}
    listed = admin.get("/api/v1/idps").json()
    assert listed == [{
        "alias": "oidc", "type": "oidc", "redirectUri": "http://testserver/sso/callback",
        "oidcData": {"clientId": "paas-studio", "clientSecret": "*******", "discoverDocumentUrl": dex.discovery_url,
                     "scopes": ["openid", "email", "profile", "groups", "offline_access"]},
        "mappers": {"email": "email", "groups": "groups", "uid": "uidNumber", "gid": "gid",
                    "supplementaryGroups": "supplementaryGroups"}}]
    assert admin.get("/api/v1/idps/oidc").json() == listed[0]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT client_secret FROM {IdentityProvider._meta.db_table}")
        stored = cursor.fetchone()[0]
    assert CLIENT_SECRET not in stored and IdentityProvider.objects.get().client_secret == CLIENT_SECRET
    events = list(AuditEvent.objects.filter(object_type="studio.identityprovider").values_list("changes", flat=True))
    assert events and CLIENT_SECRET not in str(events)


def test_update_keeps_the_secret_when_left_out_and_mappers_are_their_own_operation(admin, start_dex):
    dex = start_dex([ADA])
    assert admin.post("/api/v1/idps", dex.idp_body(), format="json").status_code == 201
    body = dex.idp_body()
    del body["oidcData"]["clientSecret"]
    body["oidcData"]["mandatoryClaim"] = {"claim": "groups", "values": ["team-a"]}
    updated = admin.put("/api/v1/idps/oidc", body, format="json")
    assert updated.status_code == 200, updated.json()
    assert updated.json()["oidcData"]["mandatoryClaim"] == {"claim": "groups", "values": ["team-a"]}
    assert IdentityProvider.objects.get().client_secret == CLIENT_SECRET
    accepted = admin.put("/api/v1/idps/oidc/mappers", {"groups": "roles", "uid": "uidNumber"}, format="json")
    assert accepted.status_code == 202
    mappers = admin.get("/api/v1/idps/oidc/mappers").json()
    assert mappers["groups"] == "roles" and mappers["uid"] == "uidNumber" and mappers["email"] == "email"
    assert admin.post("/api/v1/idps", dex.idp_body(), format="json").status_code == 409  # one provider at a time
    assert admin.delete("/api/v1/idps/oidc").status_code == 200
    assert admin.get("/api/v1/idps").json() == [] and admin.get("/api/v1/idps/oidc").status_code == 404


def test_bad_bodies_are_400s_naming_each_problem(admin, start_dex):
    answer = admin.post("/api/v1/idps", {"type": "saml", "samlData": {"metadataXmlUrl": "https://x.example/m"}},
                        format="json")
    assert answer.status_code == 400
    assert {e["field"] for e in answer.json()["errors"]} == {"type"}
    answer = admin.post("/api/v1/idps", {"type": "oidc", "oidcData": {
        "clientId": "", "discoverDocumentUrl": "http://idp.example.com/.well-known/openid-configuration",
        "scopes": ["bad scope!"], "mandatoryClaim": {"claim": "x", "values": []}}, "color": "red"}, format="json")
    assert answer.status_code == 400
    assert {e["field"] for e in answer.json()["errors"]} == {
        "color", "oidcData.clientId", "oidcData.discoverDocumentUrl", "oidcData.scopes[0]",
        "oidcData.mandatoryClaim.values"}
    dex = start_dex([ADA])
    dex.stop()  # a provider that does not answer: named, nothing stored
    answer = admin.post("/api/v1/idps", dex.idp_body(), format="json")
    assert answer.status_code == 400, answer.json()
    assert answer.json()["errors"][0]["field"] == "oidcData.discoverDocumentUrl"
    assert "could not be read" in answer.json()["errors"][0]["message"]
    assert not IdentityProvider.objects.exists()


def test_only_platform_admins_see_or_change_the_provider(client_for, org, anon):
    member = client_for(org.users.member)
    assert member.get("/api/v1/idps").status_code == 403
    assert member.post("/api/v1/idps", {"type": "oidc"}, format="json").status_code == 403
    assert anon.get("/api/v1/idps").status_code == 401


def test_a_provider_from_the_environment_is_listed_and_read_only(admin, settings, start_dex):
    dex = start_dex([ADA])
    settings.OIDC_DISCOVERY_URL, settings.OIDC_CLIENT_ID = dex.issuer, "paas-studio"
    settings.OIDC_CLIENT_SECRET, settings.OIDC_SCOPES = "from-env", ["openid", "email", "groups"]
    listed = admin.get("/api/v1/idps").json()
    assert [(p["alias"], p["oidcData"]["clientSecret"], p["oidcData"]["scopes"]) for p in listed] == [
        ("oidc", "*******", ["openid", "email", "groups"])]
    assert admin.put("/api/v1/idps/oidc", dex.idp_body(), format="json").status_code == 409
    assert admin.delete("/api/v1/idps/oidc").status_code == 409
    assert admin.post("/api/v1/idps", dex.idp_body(), format="json").status_code == 409
