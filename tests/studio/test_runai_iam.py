"""Run:ai's Roles, Access rules and Users tags: every operation through HTTP, checked against Run:ai's schemas."""

import pytest

from studio.models import AccessRule, Role
from tests.factories import UserFactory
from tests.runai_spec import assert_matches_spec

RULES = "/api/v1/authorization/access-rules"
ROLE_ONE = "the id of the first seeded role, System administrator"


def test_roles_list_and_one_role(client_for, org):
    api = client_for(org.users.viewer)
    roles = api.get("/api/v1/authorization/roles")
    assert_matches_spec(roles, "get", "/api/v1/authorization/roles")
    names = {r["name"] for r in roles.json()}
    assert {"System administrator", "Department administrator", "Editor", "L1 researcher", "Viewer"} <= names
    editor = next(r for r in roles.json() if r["name"] == "Editor")
    one = api.get(f"/api/v1/authorization/roles/{editor['id']}")
    assert_matches_spec(one, "get", "/api/v1/authorization/roles/{roleIdPath}")
    assert one.json()["level"] == "admin"
    assert api.get("/api/v1/authorization/roles/99999").status_code == 404


def test_access_rules_create_get_list_count_delete(client_for, org, django_assert_max_num_queries):
    api = client_for(org.users.platform_admin)
    viewer = Role.objects.get(name="Viewer")
    body = {"subjectId": "dave", "subjectType": "user", "roleId": viewer.pk, "scopeId": str(org.a.pk),
            "scopeType": "project"}
    created = api.post(RULES, body, format="json")
    assert created.status_code == 201, created.json()
    assert_matches_spec(created, "post", RULES)
    rule = created.json()
    assert (rule["roleName"], rule["scopeName"], rule["clusterId"]) == ("Viewer", "alpha", str(org.cluster.pk))
    # dave now sees project alpha, as a viewer
    assert [p["name"] for p in client_for(org.users.other).get("/api/v1/org-unit/projects").json()["projects"]] == [
        "alpha", "beta"]

    one = api.get(f"{RULES}/{rule['id']}")
    assert_matches_spec(one, "get", f"{RULES}/{{accessRuleId}}")
    assert one.json()["scopePath"] == "research/alpha"

    with django_assert_max_num_queries(5):
        listed = api.get(RULES, {"subjectType": "user", "filterBy": "roleName==Viewer,scopeName=@alp",
                                 "sortBy": "subjectId"})
    assert_matches_spec(listed, "get", RULES)
    assert [r["subjectId"] for r in listed.json()["accessRules"]] == ["carol", "dave"]
    assert listed.json()["totalRecords"] == 2
    count = api.get(f"{RULES}/count", {"filterBy": f"subjectId==dave,scopeId=={org.a.pk}"})
    assert_matches_spec(count, "get", f"{RULES}/count")
    assert count.json() == {"count": 1}

    deleted = api.delete(f"{RULES}/{rule['id']}")
    assert deleted.status_code == 204
    assert api.get(f"{RULES}/{rule['id']}").status_code == 404


def test_access_rule_list_query_count_does_not_grow(client_for, org, django_assert_max_num_queries):
    # The members' rules, root's, and migration 0002's "platform-admins" group rule where no earlier test's flush
    # of the database removed it (test processes run files in varying orders).
    before = AccessRule.objects.count()
    for n in range(30):
        AccessRule.objects.create(subject_type="group", subject_id=f"g{n}", role=Role.objects.get(name="Viewer"),
                                  scope_type="project", scope_id=str(org.b.pk), project=org.b)
    api = client_for(org.users.platform_admin)
    with django_assert_max_num_queries(5):  # token (2), admin check, the page, the count
        assert len(api.get(RULES, {"limit": 100}).json()["accessRules"]) == before + 30


@pytest.mark.parametrize("body, fields", [
    ({"subjectId": "nobody", "subjectType": "user", "roleId": ROLE_ONE, "scopeId": "1", "scopeType": "tenant"},
     {"subjectId"}),
    ({"subjectId": "dave", "subjectType": "robot", "roleId": 99999, "scopeId": "x", "scopeType": "galaxy"},
     {"subjectType", "roleId", "scopeType"}),
    ({"subjectId": "dave", "subjectType": "user", "roleId": ROLE_ONE, "scopeId": "424242", "scopeType": "project"},
     {"scopeId"}),
    ({"subjectType": "user"}, {"subjectId", "roleId", "scopeId", "scopeType"}),
    ({"subjectId": "dave", "subjectType": "user", "roleId": ROLE_ONE, "scopeId": "1", "scopeType": "tenant", "x": 1}, {"x"}),
])
def test_bad_access_rules_are_400s_naming_each_field(client_for, org, body, fields):
    if body.get("roleId") == ROLE_ONE:  # a role that exists: not id 1 after an earlier test flushed the database
        body = {**body, "roleId": Role.objects.get(name="System administrator").pk}
    response = client_for(org.users.platform_admin).post(RULES, body, format="json")
    assert response.status_code == 400, response.json()
    assert {e["field"] for e in response.json()["errors"]} == fields


def test_a_project_admin_grants_on_its_project_only(client_for, org):
    api = client_for(org.users.admin)
    researcher = Role.objects.get(name="L1 researcher").pk
    mine = {"subjectId": "dave", "subjectType": "user", "roleId": researcher, "scopeId": str(org.a.pk),
            "scopeType": "project"}
    assert api.post(RULES, mine, format="json").status_code == 201
    assert api.post(RULES, {**mine, "scopeId": str(org.b.pk)}, format="json").status_code == 403
    assert api.post(RULES, {**mine, "scopeType": "tenant", "scopeId": "1"}, format="json").status_code == 403
    # what it lists: the rules of its project, not the tenant's
    listed = api.get(RULES).json()["accessRules"]
    assert {r["scopeId"] for r in listed} == {str(org.a.pk)}
    assert client_for(org.users.member).post(RULES, mine, format="json").status_code == 403


def test_users_create_list_get_reset_delete(client_for, org, anon, django_assert_max_num_queries):
    api = client_for(org.users.platform_admin)
    created = api.post("/api/v1/users", {"email": "new.person@example.com", "resetPassword": True}, format="json")
    assert created.status_code == 201, created.json()
    assert_matches_spec(created, "post", "/api/v1/users")
    user_id, temp = created.json()["id"], created.json()["tempPassword"]
    login = anon.post("/api/v1/token", {"grantType": "password", "username": "new.person@example.com",
                                        "password": temp}, format="json")
    assert login.status_code == 200
    assert api.post("/api/v1/users", {"email": "new.person@example.com"}, format="json").status_code == 409

    with django_assert_max_num_queries(5):  # token (2), admin check, users, their groups
        listed = api.get("/api/v1/users", {"filterBy": "username=@example.com", "sortBy": "username"})
    assert_matches_spec(listed, "get", "/api/v1/users")
    mine = next(u for u in listed.json() if u["id"] == user_id)
    assert mine["createdBy"] == "root" and mine["isLocal"] is True
    count = api.get("/api/v1/users/count")
    assert_matches_spec(count, "get", "/api/v1/users/count")

    one = api.get(f"/api/v1/users/{user_id}")
    assert_matches_spec(one, "get", "/api/v1/users/{userId}")
    reset = api.post(f"/api/v1/users/{user_id}/password")
    assert_matches_spec(reset, "post", "/api/v1/users/{userId}/password")
    assert reset.json()["tempPassword"] != temp
    assert api.delete(f"/api/v1/users/{user_id}").status_code == 204
    assert api.get(f"/api/v1/users/{user_id}").status_code == 404
    assert api.get("/api/v1/users/not-a-number").status_code == 404
    assert api.delete(f"/api/v1/users/{org.users.platform_admin.pk}").status_code == 400


def test_users_query_count_does_not_grow(client_for, org, django_assert_max_num_queries):
    for n in range(30):
        UserFactory(username=f"many{n}")
    api = client_for(org.users.platform_admin)
    with django_assert_max_num_queries(5):  # token (2), admin check, users, their groups
        assert len(api.get("/api/v1/users", {"limit": 100}).json()) == 35


def test_only_platform_admins_manage_users(client_for, org):
    api = client_for(org.users.admin)
    assert api.get("/api/v1/users").status_code == 403
    assert api.post("/api/v1/users", {"email": "x@example.com"}, format="json").status_code == 403
    assert api.post(f"/api/v1/users/{org.users.member.pk}/password").status_code == 403


def test_me_password_checks_the_current_one_and_the_new_ones_strength(client_for, org, anon):
    api = client_for(org.users.member)
    wrong = api.post("/api/v1/me/password", {"currentPassword": "nope", "newPassword": "a-much-better-pw-1"},
                     format="json")
    assert wrong.status_code == 400 and wrong.json()["errors"][0]["field"] == "currentPassword"
    weak = api.post("/api/v1/me/password", {"currentPassword": "pw-for-tests-1", "newPassword": "123"}, format="json")
    assert weak.status_code == 400 and {e["field"] for e in weak.json()["errors"]} == {"newPassword"}
    changed = api.post("/api/v1/me/password", {"currentPassword": "pw-for-tests-1",
                                                "newPassword": "a-much-better-pw-1"}, format="json")
    assert changed.status_code == 200
    assert_matches_spec(changed, "post", "/api/v1/me/password")
    login = anon.post("/api/v1/token", {"grantType": "password", "username": "bob",
                                        "password": "a-much-better-pw-1"}, format="json")
    assert login.status_code == 200
