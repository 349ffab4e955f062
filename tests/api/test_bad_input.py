"""A NUL character is a 400, never a 500. Fields and filters refuse it when they validate; path segments
(`/cfg/profiles/{profile_id}` takes any text) reach the database as they are, and PostgreSQL refuses NUL
in text (a DataError, which the API answers as bad input). SQLite compares it, so there the same lookup
finds nothing: a 404."""

import pytest
from django.db import connection

ON_POSTGRESQL = connection.vendor == "postgresql"


@pytest.mark.parametrize("url", [
    "/cfg/apps/a%00b",
    "/cfg/profiles/a%00b",
    "/cfg/apps/usd-viewer/versions/1.0.0/profiles/a%00b",
])
def test_a_nul_character_in_a_path_segment_is_a_400_where_the_database_refuses_it(url, client_for, world):
    response = client_for(world.org.users.platform_admin).get(url)
    assert response.status_code == (400 if ON_POSTGRESQL else 404), response.content
    assert response.json()["code"] == response.status_code


@pytest.mark.parametrize(("method", "url", "body"), [
    ("get", "/api/v1/workloads?search=a%00b", None),
    ("get", "/api/v1/service-profiles?filterBy=name%3D%3Da%00b", None),
    ("patch", "/api/v1/org-unit/departments/{department}", {"description": "a\x00b"}),
])
def test_a_nul_character_in_a_field_or_filter_is_a_400(method, url, body, client_for, world):
    api = client_for(world.org.users.platform_admin)
    response = getattr(api, method)(url.format(department=world.org.department.pk), body, format="json")
    assert response.status_code == 400 and response.json()["errors"], response.content
