"""Security round 4, findings 7, 8 and 12: inputs that were 500s are 400s naming the field.

- 7: a number beyond a double's range (`1e999`, valid JSON) read as infinity and reached an integer lookup;
- 8: `resources[].nodePool` as a string, number or list where Run:ai's schema has an object;
- 12: a kubeconfig that YAML reads as something else than a mapping (`2026-13-45`: an impossible date)."""

import json

import pytest

pytestmark = pytest.mark.django_db


def _post_raw(api, path: str, raw: str):
    api.raise_request_exception = False  # a 500 must show as one, not as the test's own exception
    return api.generic("POST", path, raw, content_type="application/json")


def _fields(answer) -> set[str]:
    assert answer.status_code == 400, (answer.status_code, answer.content)
    assert answer["Content-Type"].startswith("application/json")
    return {e["field"] for e in answer.json()["errors"]}


@pytest.mark.parametrize("path", ["/api/v1/service-profiles", "/api/v1/environment-templates"])
def test_a_project_id_beyond_a_doubles_range_is_a_400_naming_it(client_for, org, path):
    api = client_for(org.users.platform_admin)
    assert "projectId" in _fields(_post_raw(api, path, '{"name": "x", "projectId": 1e999}'))


def test_an_infinite_number_deep_in_a_body_is_named_where_it_is(client_for, org):
    api = client_for(org.users.platform_admin)
    raw = json.dumps({"name": "q", "parentId": str(org.a.department_id),
                      "resources": [{"nodePool": {"name": "default"}, "gpu": {"deserved": "@"}}]}).replace('"@"', "-1e999")
    assert _fields(_post_raw(api, "/api/v1/org-unit/projects", raw)) == {"resources[0].gpu.deserved"}


@pytest.mark.parametrize("pool", ['"x"', "5", "[]", '["default"]', "true"])
@pytest.mark.parametrize("where", ["project", "department", "project resources", "department resources"])
def test_a_node_pool_that_is_not_an_object_is_a_400_naming_it(client_for, org, pool, where):
    api = client_for(org.users.platform_admin)
    entries = [{"nodePool": "@", "gpu": {"deserved": 1}}]
    raw = lambda body: json.dumps(body).replace('"@"', pool)  # noqa: E731 — the pool as raw JSON
    if where == "project":
        answer = _post_raw(api, "/api/v1/org-unit/projects", raw({
            "name": "q", "parentId": str(org.a.department_id), "clusterId": str(org.a.cluster_id),
            "resources": entries}))
    elif where == "department":
        answer = _post_raw(api, "/api/v1/org-unit/departments", raw({
            "name": "q", "clusterId": str(org.a.cluster_id), "resources": entries}))
    else:
        unit = f"projects/{org.a.pk}" if where == "project resources" else f"departments/{org.a.department_id}"
        api.raise_request_exception = False
        answer = api.generic("PUT", f"/api/v1/org-unit/{unit}/resources", raw(entries),
                             content_type="application/json")
    assert "resources[0].nodePool" in _fields(answer)


@pytest.mark.parametrize("kubeconfig", ["2026-13-45", "1e999", "[1, 2]", "12", "!!binary x", "{a: [}"])
def test_a_kubeconfig_that_is_no_mapping_is_a_400_naming_it(client_for, org, kubeconfig):
    api = client_for(org.users.platform_admin)
    api.raise_request_exception = False
    answer = api.post("/api/v1/clusters", {"name": "c1", "kubeconfig": kubeconfig}, format="json")
    assert _fields(answer) == {"kubeconfig"}
