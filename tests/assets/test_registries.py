"""Run:ai's Registry tag against real registries (the CNCF distribution registry, tests/assets/registry_support.py):
repositories and tags read from the registry with and without a login, a refused login and an unknown repository
as 400s naming the field, a registry that cannot be reached as a 503 naming it; the password never answered."""

import json
import logging

import pytest

from assets.models import Asset
from studio.models import AuditEvent
from tests.assets.conftest import PUSHED, REGISTRY_USER
from tests.assets.registry_support import free_port

pytestmark = pytest.mark.django_db
URL = "/api/v1/asset/registries"


def registry_body(name: str, url: str, *, project, user="nobody", password="no-password", **meta) -> dict:
    return {"meta": {"name": name, "scope": "project", "projectId": project.pk, **meta},
            "spec": {"url": url, "credentialKind": "password", "user": user, "password": password}}


def made(api, body) -> dict:
    response = api.post(URL, body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def errors(response) -> dict:
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_an_open_registry_lists_its_repositories_and_their_tags(client_for, org, registries):
    api = client_for(org.users.admin)
    registry = made(api, registry_body("open", registries.open.url, project=org.a))
    assert registry["spec"] == {"url": registries.open.url, "credentialKind": "password", "user": "nobody",
                                "password": "********"}
    assert registry["meta"]["kind"] == "registry" and registry["meta"]["projectId"] == org.a.pk
    item = f"{URL}/{registry['meta']['id']}"

    assert api.get(f"{item}/repositories").json() == {"repositories": sorted(PUSHED)}
    assert api.get(f"{item}/repositories?searchName=TEAM").json() == {
        "repositories": ["team/notebook", "team/trainer"]}
    assert api.get(f"{item}/repositories/tags?repository=team/trainer").json() == {
        "name": "team/trainer", "tags": ["1.0", "1.1", "latest"]}
    assert api.get(f"{item}/repositories/tags?repository=team/trainer&searchName=1.").json()["tags"] == ["1.0", "1.1"]

    unknown = api.get(f"{item}/repositories/tags?repository=team/missing")
    assert unknown.status_code == 400
    assert errors(unknown) == {"repository": f"The registry at {registries.open.url} has no repository team/missing."}
    assert errors(api.get(f"{item}/repositories/tags")) == {"repository": "This field is required."}
    bad = api.get(f"{item}/repositories/tags?repository=Team/../x")
    assert bad.status_code == 400 and list(errors(bad)) == ["repository"]


def test_a_registry_with_a_login_is_read_with_it_and_a_wrong_password_is_named(client_for, org, registries):
    api = client_for(org.users.admin)
    user, password = REGISTRY_USER
    right = made(api, registry_body("locked", registries.locked.url, project=org.a, user=user, password=password))
    item = f"{URL}/{right['meta']['id']}"
    assert api.get(f"{item}/repositories").json() == {"repositories": sorted(PUSHED)}
    assert api.get(f"{item}/repositories/tags?repository=tools/cli").json() == {"name": "tools/cli", "tags": ["v3"]}

    wrong = made(api, registry_body("wrong", registries.locked.url, project=org.a, user=user, password="guess"))
    wrong_item = f"{URL}/{wrong['meta']['id']}"
    refused = api.get(f"{wrong_item}/repositories")
    assert refused.status_code == 400
    assert errors(refused) == {"spec.password": f"The registry at {registries.locked.url} refused the login of "
                                                f"user {user} (wrong user or password)."}
    assert api.get(f"{wrong_item}/repositories/tags?repository=tools/cli").status_code == 400

    # The mask echoed back keeps the password; a new one replaces it.
    kept = api.put(wrong_item, {"meta": {"name": "wrong"}, "spec": {**wrong["spec"]}}, format="json")
    assert kept.status_code == 200, kept.json()
    assert api.get(f"{wrong_item}/repositories").status_code == 400
    fixed = api.put(wrong_item, {"meta": {"name": "fixed", "description": "the right password"},
                                 "spec": {"password": password}}, format="json")
    assert fixed.status_code == 200, fixed.json()
    assert fixed.json()["meta"]["name"] == "fixed" and fixed.json()["spec"]["password"] == "********"
    assert api.get(f"{wrong_item}/repositories").json() == {"repositories": sorted(PUSHED)}


def test_a_registry_that_asks_for_a_login_and_has_none_is_named(client_for, org, registries):
    api = client_for(org.users.admin)
    anonymous = made(api, registry_body("anon", registries.locked.url, project=org.a, user="x", password="y"))
    Asset.objects.filter(pk=anonymous["meta"]["id"]).update(spec={**Asset.objects.get(
        pk=anonymous["meta"]["id"]).spec, "user": ""}, secret="")
    refused = api.get(f"{URL}/{anonymous['meta']['id']}/repositories")
    assert refused.status_code == 400
    assert errors(refused) == {"spec.user": f"The registry at {registries.locked.url} asks for a login; the asset "
                                            "has none."}


def test_a_registry_that_cannot_be_reached_is_a_503_naming_it_and_a_refused_address_a_400(client_for, org):
    api = client_for(org.users.admin)
    nowhere = f"http://127.0.0.1:{free_port()}"
    down = made(api, registry_body("down", nowhere, project=org.a))
    answer = api.get(f"{URL}/{down['meta']['id']}/repositories")
    assert answer.status_code == 503
    assert answer.json()["message"] == f"The registry at {nowhere} could not be reached: the connection was refused."

    metadata = made(api, registry_body("metadata", "http://169.254.169.254", project=org.a))
    refused = api.get(f"{URL}/{metadata['meta']['id']}/repositories")
    assert refused.status_code == 400 and list(errors(refused)) == ["spec.url"]


def test_bad_bodies_are_400s_naming_each_field(client_for, org):
    api = client_for(org.users.admin)
    response = api.post(URL, {"meta": {"name": "Bad Name", "scope": "project", "projectId": org.a.pk},
                              "spec": {"url": "ftp://x", "credentialKind": "token", "user": "u"}}, format="json")
    assert response.status_code == 400
    assert set(errors(response)) == {"meta.name", "spec.url", "spec.credentialKind", "spec.password"}
    registry = made(api, registry_body("ok", "registry.example.com", project=org.a))
    changed = api.put(f"{URL}/{registry['meta']['id']}", {"meta": {"name": "ok"}, "spec": {"url": "ftp://x",
                                                                                        "extra": 1}}, format="json")
    assert changed.status_code == 400 and set(errors(changed)) == {"spec.url", "spec.extra"}
    taken = api.post(URL, registry_body("ok", "registry.example.com", project=org.a), format="json")
    assert taken.status_code == 409


def test_scopes_roles_and_the_password_kept_secret(client_for, org, caplog):
    caplog.set_level(logging.DEBUG)
    admin, other, member = (client_for(u) for u in (org.users.admin, org.users.other, org.users.member))
    registry = made(admin, registry_body("mine", "https://registry.example.com", project=org.a,
                                         password="s3cr3t-registry-login"))
    item = f"{URL}/{registry['meta']['id']}"
    assert other.get(item).status_code == 404  # another project's member
    assert other.get(f"{item}/repositories").status_code == 404
    assert [e["meta"]["name"] for e in other.get(URL).json()["entries"]] == []
    assert [e["meta"]["name"] for e in member.get(URL).json()["entries"]] == ["mine"]
    assert member.delete(item).status_code == 403
    assert admin.get(f"{URL}/not-a-uuid").status_code == 404

    shown = "\n".join(r.content.decode() for r in (admin.get(item), admin.get(URL), member.get(URL)))
    trail = json.dumps(list(AuditEvent.objects.filter(object_type="assets.asset").values("changes")))
    assert "s3cr3t-registry-login" not in shown + trail + caplog.text
    assert "s3cr3t-registry-login" not in json.dumps(Asset.objects.filter(kind="registry").values_list(
        "spec", flat=True)[0])

    assert admin.delete(item).status_code == 204
    assert admin.get(item).status_code == 404


def test_a_registry_with_a_token_service_is_read_with_a_bearer_token(client_for, org, registries):
    api = client_for(org.users.admin)
    user, password = REGISTRY_USER
    registry = made(api, registry_body("tokens", registries.tokens.url, project=org.a, user=user, password=password))
    item = f"{URL}/{registry['meta']['id']}"
    assert api.get(f"{item}/repositories").json() == {"repositories": sorted(PUSHED)}
    assert api.get(f"{item}/repositories/tags?repository=team/notebook").json() == {
        "name": "team/notebook", "tags": ["2024.06"]}
    asked = [r["query"] for r in registries.token_server.requests if r["user"] == user]
    assert {"service": ["paas-studio-test-registry"], "scope": ["registry:catalog:*"]} in asked
    assert {"service": ["paas-studio-test-registry"], "scope": ["repository:team/notebook:pull"]} in asked

    wrong = made(api, registry_body("tokens-wrong", registries.tokens.url, project=org.a, user=user,
                                    password="guess"))
    refused = api.get(f"{URL}/{wrong['meta']['id']}/repositories")
    assert refused.status_code == 400
    assert errors(refused) == {"spec.password": f"The registry at {registries.tokens.url} refused the login of "
                                                f"user {user} (wrong user or password)."}
