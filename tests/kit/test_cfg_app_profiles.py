"""Seed 000: `/cfg/apps/{id}/versions/{version}/profiles[/{profile}]`, with `*` for the id, the version or both;
its response shapes and every message (403, 404, 422) with `detail`; visibility through sharing."""

import pytest

from tests.kit.conftest import VALIDATION, error, errors

pytestmark = pytest.mark.django_db

BASE = "/cfg/apps/{app}/versions/{version}/profiles"


def ids(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [p["id"] for p in response.json()["items"]]


@pytest.fixture
def member(client_for, org):
    return client_for(org.users.member)  # project A


@pytest.fixture
def other(client_for, org):
    return client_for(org.users.other)  # project B


def test_seed_shape_of_the_list(member, kit):
    response = member.get("/cfg/apps/usd-viewer/versions/1.0.0/profiles")
    assert response.status_code == 200
    assert response.json() == {
        "count": 3,
        "items": [
            {"id": "a-private", "name": "a-private profile", "description": "An application profile."},
            {"id": "default", "name": "Default application profile",
             "description": "The default profile for running the application."},
            {"id": "high-mem", "name": "High memory profile",
             "description": "A profile with increased memory allocation."},
        ],
    }


def test_seed_shape_of_one(member, kit):
    response = member.get("/cfg/apps/usd-viewer/versions/1.0.0/profiles/default")
    assert response.status_code == 200
    assert response.json() == {"id": "default", "name": "Default application profile",
                               "description": "The default profile for running the application."}


@pytest.mark.parametrize("app,version,member_sees,other_sees,admin_sees", [
    ("usd-viewer", "1.0.0", ["a-private", "default", "high-mem"], ["default"], ["a-private", "default", "high-mem"]),
    ("usd-viewer", "1.1.0", ["a-private", "default"], ["default"], ["a-private", "default"]),
    ("composer", "2.0.0", ["default"], ["composer-only", "default"], ["composer-only", "default"]),
    # wildcard version: any version of the app
    ("usd-viewer", "*", ["a-private", "default", "high-mem"], ["default"], ["a-private", "default", "high-mem"]),
    ("composer", "*", ["default"], ["composer-only", "default"], ["composer-only", "default"]),
    # wildcard app: any application at that version, by the profiles' patterns (composer-only serves composer
    # at every version, so at 1.0.0 too, though no composer 1.0.0 is registered yet)
    ("*", "1.0.0", ["a-private", "default", "high-mem"], ["composer-only", "default"],
     ["a-private", "composer-only", "default", "high-mem"]),
    ("*", "2.0.0", ["a-private", "default"], ["composer-only", "default"], ["a-private", "composer-only", "default"]),
    # both
    ("*", "*", ["a-private", "default", "high-mem"], ["composer-only", "default"],
     ["a-private", "composer-only", "default", "high-mem"]),
])
def test_path_wildcards_and_sharing(client_for, org, kit, app, version, member_sees, other_sees, admin_sees):
    path = BASE.format(app=app, version=version)
    assert ids(client_for(org.users.member).get(path)) == member_sees
    assert ids(client_for(org.users.viewer).get(path)) == member_sees  # reading needs no more than viewer
    assert ids(client_for(org.users.other).get(path)) == other_sees
    assert ids(client_for(org.users.platform_admin).get(path)) == admin_sees
    for profile_id in admin_sees:
        one = client_for(org.users.other).get(f"{path}/{profile_id}")
        if profile_id in other_sees:
            assert one.status_code == 200 and one.json()["id"] == profile_id
        else:
            error(one, 404, errors.PROFILE_NOT_FOUND)


def test_a_known_version_no_profile_serves_is_an_empty_list(member, kit, org):
    kit.profiles.default.sharing_mode = "none"
    kit.profiles.default.owner_project = org.b
    kit.profiles.default.save()
    assert member.get(BASE.format(app="composer", version="2.0.0")).json() == {"count": 0, "items": []}


@pytest.mark.parametrize("app,version", [
    ("nope", "1.0.0"), ("usd-viewer", "9.9.9"), ("composer", "1.0.0"), ("nope", "*"), ("*", "9.9.9"),
])
def test_unknown_app_or_version_is_404_with_the_seed_messages(member, kit, app, version):
    path = BASE.format(app=app, version=version)
    error(member.get(path), 404, errors.PROFILES_NOT_FOUND)
    error(member.get(f"{path}/default"), 404, errors.PROFILE_NOT_FOUND)


@pytest.mark.parametrize("version", ["1.0", "latest", "v1.0.0"])
def test_a_version_that_is_not_semantic_is_422(member, kit, version):
    body = error(member.get(BASE.format(app="usd-viewer", version=version)), 422, VALIDATION)
    assert [e["field"] for e in body["errors"]] == ["version"]
    error(member.get(BASE.format(app="usd-viewer", version=version) + "/default"), 422, VALIDATION)


def test_profile_not_serving_the_version_or_unknown_is_404(member, kit):
    error(member.get("/cfg/apps/usd-viewer/versions/1.1.0/profiles/high-mem"), 404, errors.PROFILE_NOT_FOUND)
    error(member.get("/cfg/apps/usd-viewer/versions/1.0.0/profiles/nope"), 404, errors.PROFILE_NOT_FOUND)


def test_unshared_profile_of_another_project_is_404_not_403(other, kit):
    error(other.get("/cfg/apps/usd-viewer/versions/1.0.0/profiles/high-mem"), 404, errors.PROFILE_NOT_FOUND)
    error(other.get("/cfg/apps/*/versions/*/profiles/a-private"), 404, errors.PROFILE_NOT_FOUND)


def test_a_caller_in_no_project_is_403_with_the_seed_messages(client_for, kit):
    loner = client_for(kit.loner)
    error(loner.get(BASE.format(app="usd-viewer", version="1.0.0")), 403, errors.RESOURCE_FORBIDDEN)
    error(loner.get(BASE.format(app="*", version="*")), 403, errors.RESOURCE_FORBIDDEN)
    error(loner.get(BASE.format(app="usd-viewer", version="1.0.0") + "/default"), 403, errors.PROFILE_FORBIDDEN)
    # even where the app is unknown: the caller may read no profile at all
    error(loner.get(BASE.format(app="nope", version="1.0.0")), 403, errors.RESOURCE_FORBIDDEN)


def test_anonymous_is_401(anon, kit):
    assert anon.get(BASE.format(app="*", version="*")).status_code == 401


def test_list_paging_keeps_the_seed_shape(member, kit):
    body = member.get(BASE.format(app="*", version="*") + "?limit=1&offset=1").json()
    assert body == {"count": 3, "items": [{"id": "default", "name": "Default application profile",
                                          "description": "The default profile for running the application."}]}
    error(member.get(BASE.format(app="*", version="*") + "?limit=501"), 422, VALIDATION)


def test_list_queries_do_not_grow_with_profiles(member, kit, org, django_assert_max_num_queries):
    from tests.factories import ApplicationProfileFactory

    for n in range(20):
        ApplicationProfileFactory(slug=f"extra{n}", owner_project=org.a)
    with django_assert_max_num_queries(8):
        assert member.get(BASE.format(app="*", version="*")).json()["count"] == 23
