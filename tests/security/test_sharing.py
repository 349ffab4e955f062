""""Shared with all" means every project (security round 3, S20): a user in no project sees no service profile,
environment template or Kit app profile of another's — their `extraConfig`, specs and settings included — through
the API or the portal; a member of any project sees them."""

import pytest

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

API_LISTS = {
    "/api/v1/service-profiles": ("serviceProfiles", "alpha-service"),
    "/api/v1/environment-templates": ("environmentTemplates", "alpha-template"),
    "/cfg/profiles": ("items", "alpha-stream"),
}


@pytest.fixture
def shared(world):
    """alpha's profile, template and Kit app profile, each shared with all projects; the profile has extraConfig."""
    for obj in (world.profile, world.template, world.kit_profile):
        obj.sharing_mode = "all"
        obj.save()
    world.profile.extra_config = {"hidden": "s3cret-extra"}
    world.profile.save()
    return world


def _names(body, key):
    items = body[key] if isinstance(body, dict) else body
    return {item.get(field) for item in items for field in ("name", "id")}


def test_a_user_in_no_project_sees_nothing_shared_with_all(shared, client_for):
    nobody = client_for(UserFactory(username="nobody"))
    for url, (key, name) in API_LISTS.items():
        answer = nobody.get(url)
        assert answer.status_code in (200, 403), (url, answer.content[:200])
        if answer.status_code == 200:
            assert name not in _names(answer.json(), key), url
            assert b"s3cret-extra" not in answer.content
    assert nobody.get(f"/api/v1/service-profiles/{shared.profile.pk}").status_code in (403, 404)
    assert nobody.get(f"/api/v1/environment-templates/{shared.template.pk}").status_code in (403, 404)
    assert nobody.get(f"/cfg/profiles/{shared.kit_profile.slug}").status_code in (403, 404)


def test_a_member_of_another_project_sees_what_is_shared_with_all(shared, client_for):
    dave = client_for(shared.org.users.other)  # a member of beta only
    for url, (key, name) in API_LISTS.items():
        answer = dave.get(url)
        assert answer.status_code == 200 and name in _names(answer.json(), key), (url, answer.content[:300])


@pytest.mark.parametrize("page", ["/studio/service-profiles", "/studio/environment-templates", "/kit/profiles"])
def test_the_portal_shows_a_user_in_no_project_nothing_shared_with_all(shared, client, page):
    client.force_login(UserFactory(username="nobody"))
    answer = client.get(page)
    assert answer.status_code in (200, 403)
    assert b"alpha-service" not in answer.content and b"alpha-template" not in answer.content
    assert b"alpha-stream" not in answer.content
