"""A NUL character is a 400 (the Kit APIs: 422), never a 500. Fields and filters refuse it when they validate; path segments
(`/cfg/profiles/{profile_id}` takes any text) reach the database as they are, and PostgreSQL refuses NUL
in text (a DataError, which the API answers as bad input). SQLite compares it, so there the same lookup
finds nothing: a 404."""

import re

import pytest
from django.db import connection

from kit.filtersets import ProfileFilterSet
from profiles.filtersets import EnvironmentTemplateFilterSet, ServiceProfileFilterSet
from studio.filtersets import (
    AuditEventFilterSet,
    ClusterFilterSet,
    DepartmentFilterSet,
    MemberFilterSet,
    ProjectFilterSet,
)
from studio.listing import _is_text, _model_field
from tests.api.world import path_values
from workloads.api.filtersets import WorkloadFilterSet

ON_POSTGRESQL = connection.vendor == "postgresql"


def invalid(url: str) -> int:
    """The status of a request that does not validate: 400, and 422 on the Kit APIs (as Kit App Streaming)."""
    return 422 if url.startswith(("/cfg/", "/streaming/")) else 400


@pytest.mark.parametrize("url", [
    "/cfg/apps/a%00b",
    "/cfg/profiles/a%00b",
    "/cfg/apps/usd-viewer/versions/1.0.0/profiles/a%00b",
])
def test_a_nul_character_in_a_path_segment_is_a_400_where_the_database_refuses_it(url, client_for, world):
    response = client_for(world.org.users.platform_admin).get(url)
    assert response.status_code == (invalid(url) if ON_POSTGRESQL else 404), response.content
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


# --- finding 8 of the security review: no 5xx for bad input, on every route that could give one ---------------

TEXT_OPERATORS = ["=@", "!@", "=^", "=$"]
LISTS = {  # every list that takes filterBy, and its FilterSet
    "/api/v1/workloads": WorkloadFilterSet, "/api/v1/workloads/count": WorkloadFilterSet,
    "/api/v1/service-profiles": ServiceProfileFilterSet, "/api/v1/environment-templates": EnvironmentTemplateFilterSet,
    "/api/v1/org-unit/projects": ProjectFilterSet, "/api/v1/org-unit/departments": DepartmentFilterSet,
    "/api/v1/clusters": ClusterFilterSet, "/api/v1/audit-events": AuditEventFilterSet,
    "/api/v1/org-unit/projects/{project}/members": MemberFilterSet,
    "/cfg/profiles": ProfileFilterSet,  # /cfg/apps filters text fields only
}


def non_text_fields(filterset) -> list[str]:
    """The API fields of a FilterSet that are not text (ids, uuids, numbers, dates, relations)."""
    model = filterset._meta.model
    fields = [name for name, orm in getattr(filterset.Meta, "api_fields", {}).items()
              if not _is_text(_model_field(model, orm))]
    fields += [name for name, make in getattr(filterset.Meta, "api_expressions", {}).items()
               if not _is_text(make().output_field)]
    return fields


@pytest.mark.parametrize(("url", "filterset"), LISTS.items())
def test_text_operators_on_a_field_that_is_not_text_are_a_400_naming_the_filter(url, filterset, client_for, world):
    api = client_for(world.org.users.platform_admin)
    url = url.format(project=world.org.a.pk)
    fields = non_text_fields(filterset)
    assert fields, url
    for field in fields:
        for op in TEXT_OPERATORS:
            response = api.get(url, {"filterBy": f"{field}{op}1"})
            assert response.status_code == invalid(url), (url, field, op, response.content)
            assert [e["field"] for e in response.json()["errors"]] == ["filterBy"], response.content
            assert field in response.json()["errors"][0]["message"]


DEEP = "[" * 1000 + "]" * 1000


@pytest.mark.parametrize("url", ["/api/v1/token", "/api/v1/workloads/trainings", "/api/v1/org-unit/projects",
                                 "/api/v1/service-profiles", "/cfg/profiles"])
@pytest.mark.parametrize("body", [DEEP, '{"name": "x", "spec": ' + DEEP + "}"], ids=["top", "inside"])
def test_deeply_nested_json_is_a_400(url, body, client_for, world):
    api = client_for(world.org.users.platform_admin) if url != "/api/v1/token" else world_anon()
    response = api.post(url, body, content_type="application/json")
    assert response.status_code == invalid(url), response.content
    assert response.json()["code"] == invalid(url) and "nested" in response.json()["message"]


def world_anon():
    from rest_framework.test import APIClient

    return APIClient()


@pytest.mark.parametrize(("method", "url"), [
    ("patch", "/api/v1/org-unit/projects/abc"),
    ("delete", "/api/v1/org-unit/departments/abc"),
    ("get", "/api/v1/org-unit/departments/1.5"),
    ("delete", "/api/v1/org-unit/projects/{project}/members/abc"),
    ("patch", "/api/v1/org-unit/projects/{project}/members/abc"),
    ("get", "/api/v1/audit-events/abc"),
    ("get", "/api/v1/clusters/abc"),
    ("delete", "/api/v1/access-keys/abc"),
    ("get", "/api/v1/environment-templates/abc"),
    ("get", "/api/v1/workloads/abc"),
])
def test_a_malformed_id_in_a_path_is_a_json_404(method, url, client_for, world):
    api = client_for(world.org.users.platform_admin)
    response = getattr(api, method)(url.format(project=world.org.a.pk), {}, format="json")
    assert response.status_code in (400, 404), response.content
    assert response.json()["code"] == response.status_code


@pytest.mark.django_db(transaction=True)  # as in production: OPTIONS runs outside any transaction
def test_options_on_every_route_is_200_or_405_json(client_for, world):
    api = client_for(world.org.users.platform_admin)
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert len(schema["paths"]) > 40
    for route in schema["paths"]:
        real = path_values(world, route)
        url = re.sub(r"\{(\w+)\}", lambda m, real=real: real.get(m[1], "1"), route)
        response = api.options(url)
        assert response.status_code in (200, 405), (url, response.status_code, response.content[:300])
        assert response["Content-Type"].startswith("application/json"), url


def test_a_body_over_the_upload_limit_is_a_json_413(client_for, world):
    api = client_for(world.org.users.platform_admin)
    body = '{"name": "big", "description": "' + "x" * (3 * 1024 * 1024) + '"}'
    response = api.post("/api/v1/org-unit/departments", body, content_type="application/json")
    assert response.status_code == 413, response.content[:300]
    assert response.json()["code"] == 413


@pytest.mark.parametrize("url", ["/api/v1/workloads", "/api/v1/org-unit/projects", "/cfg/apps"])
def test_over_a_thousand_query_parameters_are_a_json_400(url, client_for, world):
    api = client_for(world.org.users.platform_admin)
    query = "&".join(f"p{i}=1" for i in range(1500))
    response = api.get(f"{url}?{query}")
    assert response.status_code == 400, response.content[:300]
    assert response.json()["code"] == 400 and "parameters" in response.json()["message"]


def operations(api, world):
    """(method, url) of every operation of the API's schema, its path parameters aimed at alpha's objects."""
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for route, methods in schema["paths"].items():
        real = path_values(world, route)
        url = re.sub(r"\{(\w+)\}", lambda m, real=real: real.get(m[1], "1"), route)
        for method, operation in methods.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield method, url, operation


def test_every_operation_with_a_body_refuses_deep_nesting_with_a_json_4xx(client_for, world):
    api = client_for(world.org.users.platform_admin)
    checked = 0
    for method, url, operation in operations(api, world):
        if "requestBody" not in operation:
            continue
        response = api.generic(method.upper(), url, DEEP, content_type="application/json")
        assert 400 <= response.status_code < 500, (method, url, response.status_code, response.content[:300])
        assert response.json()["code"] == response.status_code
        checked += 1
    assert checked > 20


def test_every_get_refuses_a_flood_of_query_parameters_with_a_json_400(client_for, world):
    api = client_for(world.org.users.platform_admin)
    query = "&".join(f"p{i}=1" for i in range(1001))
    for method, url, _ in operations(api, world):
        if method == "get":
            response = api.get(f"{url}?{query}")
            assert response.status_code == 400 and response.json()["code"] == 400, (url, response.content[:300])
