"""`/cfg/apps` and `/cfg/apps/{id}/versions`: shapes, roles, messages, list conventions."""

import pytest

from kit.models import Application, ApplicationVersion
from studio.models import AuditEvent
from tests.kit.conftest import VALIDATION, error, errors, fields_of

pytestmark = pytest.mark.django_db

APP_KEYS = {"id", "name", "description", "tags"}


@pytest.fixture
def member(client_for, org):
    return client_for(org.users.member)


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


def test_app_list_shape_for_any_authenticated_caller(client_for, kit):
    body = client_for(kit.loner).get("/cfg/apps").json()  # no project needed to read applications
    assert list(body) == ["count", "limit", "offset", "items"]
    assert (body["count"], body["limit"], body["offset"]) == (2, 50, 0)
    assert body["items"] == [
        {"id": "composer", "name": "USD Composer", "description": "Compose.", "tags": []},
        {"id": "usd-viewer", "name": "USD Viewer", "description": "View USD stages.", "tags": ["viewer"]},
    ]
    assert all(set(item) == APP_KEYS for item in body["items"])


def test_app_list_offset_limit_search_and_sort(member, kit):
    page = member.get("/cfg/apps?limit=1&offset=1").json()
    assert (page["count"], page["limit"], page["offset"]) == (2, 1, 1)
    assert [a["id"] for a in page["items"]] == ["usd-viewer"]
    assert [a["id"] for a in member.get("/cfg/apps?search=compose").json()["items"]] == ["composer"]
    assert [a["id"] for a in member.get("/cfg/apps?sortBy=name&sortOrder=desc").json()["items"]] == [
        "usd-viewer", "composer"]
    assert member.get("/cfg/apps?filterBy=id==composer").json()["count"] == 1


def test_app_list_tag_filter(admin, member, kit):
    admin.post("/cfg/apps", {"id": "explorer", "name": "Explorer", "tags": ["viewer", "usd"]}, format="json")
    assert [a["id"] for a in member.get("/cfg/apps?tags=viewer").json()["items"]] == ["explorer", "usd-viewer"]
    assert [a["id"] for a in member.get("/cfg/apps?tags=viewer,usd").json()["items"]] == ["explorer"]  # every tag
    assert [a["id"] for a in member.get("/cfg/apps?tags=usd&tags=viewer").json()["items"]] == ["explorer"]
    body = member.get("/cfg/apps?tags=nothing").json()
    assert (body["count"], body["items"]) == (0, [])
    assert member.get("/cfg/apps?tags=").json()["count"] == 3  # an empty filter filters nothing


def test_patch_changes_only_the_fields_given(admin, member, kit):
    patched = admin.patch("/cfg/apps/usd-viewer", {"description": "Renders USD."}, format="json")
    assert patched.status_code == 200
    assert patched.json() == {"id": "usd-viewer", "name": "USD Viewer", "description": "Renders USD.",
                              "tags": ["viewer"]}
    error(member.patch("/cfg/apps/usd-viewer", {"name": "Mine"}, format="json"), 403, errors.RESOURCE_FORBIDDEN)
    error(admin.patch("/cfg/apps/usd-viewer", {"name": 5}, format="json"), 422, VALIDATION)


@pytest.mark.parametrize("query,field", [("limit=0", "limit"), ("limit=501", "limit"), ("offset=-1", "offset"),
                                         ("limit=ten", "limit"), ("sortBy=nope", "sortBy")])
def test_app_list_bad_paging_is_422(member, kit, query, field):
    body = error(member.get(f"/cfg/apps?{query}"), 422, VALIDATION)
    assert fields_of(body) == {field}


def test_anonymous_is_401_with_detail(anon, kit):
    response = anon.get("/cfg/apps")
    assert response.status_code == 401
    assert response.json()["code"] == 401 and response.json()["detail"] == response.json()["message"]


def test_admin_creates_reads_updates_and_deletes_an_app(admin, kit):
    created = admin.post("/cfg/apps", {"id": "explorer", "name": "USD Explorer", "description": "Explore.",
                                       "tags": ["usd", "explorer"]}, format="json")
    assert created.status_code == 201, created.json()
    assert created.json() == {"id": "explorer", "name": "USD Explorer", "description": "Explore.",
                              "tags": ["usd", "explorer"]}
    assert admin.get("/cfg/apps/explorer").json() == created.json()

    updated = admin.put("/cfg/apps/explorer", {"id": "explorer", "name": "Explorer 2", "tags": []}, format="json")
    assert updated.status_code == 200
    assert updated.json() == {"id": "explorer", "name": "Explorer 2", "description": "Explore.", "tags": []}

    assert admin.delete("/cfg/apps/explorer").status_code == 204
    error(admin.get("/cfg/apps/explorer"), 404, errors.APPLICATION_NOT_FOUND)
    actions = AuditEvent.objects.filter(object_type="kit.application").values_list("action", flat=True)
    assert sorted(actions) == ["create", "delete", "update"]


def test_the_id_is_immutable(admin, kit):
    body = error(admin.put("/cfg/apps/usd-viewer", {"id": "renamed", "name": "X"}, format="json"), 422, VALIDATION)
    assert fields_of(body) == {"id"}
    assert Application.objects.filter(pk="usd-viewer").exists() and not Application.objects.filter(pk="renamed").exists()


def test_a_second_app_with_the_same_id_is_409(admin, kit):
    body = admin.post("/cfg/apps", {"id": "usd-viewer", "name": "Again"}, format="json").json()
    assert body["code"] == 409 and body["detail"] == body["message"] == "An application with id 'usd-viewer' already exists."


def test_every_problem_of_a_bad_app_is_named(admin, kit):
    body = error(admin.post("/cfg/apps", {"id": "Not_An_Id", "tags": "x", "colour": "red"}, format="json"),
                 422, VALIDATION)
    assert fields_of(body) == {"id", "name", "tags", "colour"}


@pytest.mark.parametrize("method,path,body", [
    ("post", "/cfg/apps", {"id": "x", "name": "X"}),
    ("put", "/cfg/apps/usd-viewer", {"name": "X"}),
    ("delete", "/cfg/apps/usd-viewer", None),
    ("post", "/cfg/apps/usd-viewer/versions", {"version": "9.0.0", "container": "c", "container_version": "9"}),
    ("delete", "/cfg/apps/usd-viewer/versions", {"version": "1.0.0"}),
])
@pytest.mark.parametrize("role", ["admin", "member", "viewer"])
def test_app_and_version_writes_are_for_platform_admins_only(client_for, org, kit, method, path, body, role):
    api = client_for(getattr(org.users, role))  # even a project admin
    error(getattr(api, method)(path, body, format="json"), 403, errors.RESOURCE_FORBIDDEN)
    assert Application.objects.get(pk="usd-viewer").name == "USD Viewer"
    assert ApplicationVersion.objects.filter(application_id="usd-viewer").count() == 3


@pytest.mark.parametrize("method,body", [("get", None), ("put", {"name": "X"}), ("delete", None)])
def test_unknown_app_is_404(admin, kit, method, body):
    error(getattr(admin, method)("/cfg/apps/nope", body, format="json"), 404, errors.APPLICATION_NOT_FOUND)
    error(admin.get("/cfg/apps/nope/versions"), 404, errors.APPLICATION_NOT_FOUND)


def test_version_list_is_newest_first_with_the_list_shape(member, kit):
    body = member.get("/cfg/apps/usd-viewer/versions").json()
    assert body == {"count": 3, "limit": 50, "offset": 0,
                    "items": [{"version": "1.1.0"}, {"version": "1.1.0-rc.1"}, {"version": "1.0.0"}]}
    assert member.get("/cfg/apps/usd-viewer/versions?offset=2").json()["items"] == [{"version": "1.0.0"}]


def test_admin_adds_reads_and_deletes_a_version(admin, member, kit):
    body = {"version": "1.2.0", "container": "nvcr.io/nvidia/omniverse/usd-viewer", "container_version": "1.2.0",
            "helm_chart": "omniverse/kit-appstreaming-session", "helm_chart_version": "1.0.0"}
    created = admin.post("/cfg/apps/usd-viewer/versions", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json() == body
    assert member.get("/cfg/apps/usd-viewer/versions/1.2.0").json() == body
    assert member.get("/cfg/apps/usd-viewer/versions").json()["items"][0] == {"version": "1.2.0"}

    assert admin.delete("/cfg/apps/usd-viewer/versions", {"version": "1.2.0"}, format="json").status_code == 204
    error(member.get("/cfg/apps/usd-viewer/versions/1.2.0"), 404, errors.VERSION_NOT_FOUND)
    error(admin.delete("/cfg/apps/usd-viewer/versions", {"version": "1.2.0"}, format="json"), 404,
          errors.VERSION_NOT_FOUND)


def test_version_without_chart_answers_empty_chart_fields(member, kit):
    assert member.get("/cfg/apps/usd-viewer/versions/1.0.0").json() == {
        "version": "1.0.0", "container": "nvcr.io/nvidia/omniverse/usd-viewer", "container_version": "1.0.0",
        "helm_chart": "", "helm_chart_version": ""}


@pytest.mark.parametrize("body,fields", [
    ({"version": "1.0", "container": "c", "container_version": "1"}, {"version"}),
    ({"version": "v2.0.0", "container": "c", "container_version": "1"}, {"version"}),
    ({"version": "2.0.0"}, {"container", "container_version"}),
    ({"version": "2.0.0", "container": "has space", "container_version": "bad:tag"}, {"container", "container_version"}),
    ({"version": 2, "container": "c", "container_version": "1", "extra": 1}, {"version", "extra"}),
])
def test_bad_versions_are_422_naming_each_field(admin, kit, body, fields):
    response = admin.post("/cfg/apps/usd-viewer/versions", body, format="json")
    assert fields_of(error(response, 422, VALIDATION)) == fields


def test_a_version_twice_is_409_and_a_bad_delete_body_is_422(admin, kit):
    again = admin.post("/cfg/apps/usd-viewer/versions",
                       {"version": "1.0.0", "container": "c", "container_version": "1"}, format="json")
    assert again.status_code == 409 and again.json()["detail"] == "Application 'usd-viewer' already has version 1.0.0."
    body = error(admin.delete("/cfg/apps/usd-viewer/versions", {"id": "1.0.0"}, format="json"), 422, VALIDATION)
    assert fields_of(body) == {"id", "version"}


def test_deleting_an_app_deletes_its_versions(admin, kit):
    assert admin.delete("/cfg/apps/usd-viewer").status_code == 204
    assert not ApplicationVersion.objects.filter(application_id="usd-viewer").exists()
