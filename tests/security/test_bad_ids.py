"""Ids and numbers that are not what they look like (security round 3, S09–S12, S14): Unicode digits (`²` is a digit
to str.isdigit but not to int; `٣` is 3 to int), numbers beyond 64 bits, `inf` — in every path parameter and id
query parameter of every API operation, in filters, and in the portal's lists and org pages: a JSON 4xx from the
API, a 4xx or the page with its filter's error from the portal — never a 500, and never another object."""

import re

import pytest

from tests.api.world import path_values

BAD_IDS = ["²", "٣", "18446744073709551616"]
# Query parameters that carry ids, numbers or offsets somewhere in the API, besides those each operation declares.
ID_PARAMS = {"projectId", "departmentId", "clusterId", "scopeId", "subjectId", "roleId", "offset", "limit"}


def operations(api):
    schema = api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for route, methods in schema["paths"].items():
        for method, operation in methods.items():
            if method in ("get", "post", "put", "patch", "delete"):
                yield route, method, operation


def _fill(route: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], "1"), route)


def _call(api, method, url, query=None):
    try:
        if query is not None:
            return api.get(url, query)
        return api.generic(method.upper(), url, "{}", content_type="application/json")
    except Exception as exc:  # the test client re-raises what the server would answer with a 500
        return exc


def _json_4xx(response) -> bool:
    return (not isinstance(response, Exception) and 400 <= response.status_code < 500
            and response["Content-Type"].startswith("application/json") and response.json()["code"] == response.status_code)


def _shown(response) -> str:
    if isinstance(response, Exception):
        return f"500 {type(response).__name__}: {response}"
    return f"{response.status_code} {response.content[:120]!r}"


@pytest.fixture
def root(client_for, world):
    return client_for(world.org.users.platform_admin)


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_bad_id_in_any_path_parameter_is_a_json_4xx(bad, root, world):
    """`/api/v1/users/²` was a 500, `DELETE /api/v1/users/٣` deleted user 3."""
    checked, wrong = 0, []
    for route, method, _ in operations(root):
        real = path_values(world, route)
        for name in re.findall(r"\{(\w+)\}", route):
            url = _fill(route, {**real, name: bad})
            response = _call(root, method, url)
            if not _json_4xx(response):
                wrong.append(f"{method.upper()} {url}: {_shown(response)}")
            checked += 1
    assert checked > 60 and not wrong, "\n".join(wrong)


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_bad_id_in_an_id_query_parameter_is_a_json_4xx_or_ignored(bad, root, world):
    """`/api/v2/policy?projectId=²`, `/api/v1/catalog?projectId=²` were 500s; `/api/v1/workloads?projectId=2^64`
    (S11) and `/api/v1/authorization/access-rules?roleId=2^64` were 500s on SQLite."""
    wrong = []
    for route, method, operation in operations(root):
        if method != "get":
            continue
        url = _fill(route, path_values(world, route))
        declared = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"}
        for name in sorted((declared & ID_PARAMS) | {n for n in declared if n.endswith("Id")} | {"projectId"}):
            response = _call(root, "get", url, {name: bad})
            # 503: the route asks the cluster (its nodes, a pod's log) or alpha's registry, which the test world has
            # not got.
            # Ignored: the route's normal answer, JSON or the file type it declares (a report's CSV).
            declared_types = set(operation.get("responses", {}).get("200", {}).get("content", {})) - {"application/json"}
            fine = not isinstance(response, Exception) and (
                response["Content-Type"].startswith("application/json") and (
                    response.status_code < 500 or response.status_code == 503 and any(
                        word in response.json()["message"] for word in ("cluster", "registry")))
                or response.status_code == 200 and response["Content-Type"].split(";")[0] in declared_types)
            if not fine:
                wrong.append(f"GET {url}?{name}={bad}: {_shown(response)}")
    assert not wrong, "\n".join(wrong)


LISTS = ["/api/v1/workloads", "/api/v1/workloads/count", "/api/v1/org-unit/projects", "/api/v1/org-unit/departments",
         "/api/v1/service-profiles", "/cfg/profiles", "/api/v1/audit-events", "/api/v1/authorization/access-rules"]
ID_FIELDS = ["projectId", "departmentId", "id", "parentId", "roleId", "scopeId"]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_a_bad_id_in_a_filter_is_a_json_400(bad, root):
    """`filterBy=projectId==2^64` was a 500 on SQLite (S11); `projectId==٣` filtered on project 3."""
    checked, wrong = 0, []
    for url in LISTS:
        for field in ID_FIELDS:
            if root.get(url, {"filterBy": f"{field}=@x"}).status_code == 200:
                continue  # a text field (a Kit profile's id, an access rule's scopeId): any text is a value
            for op in ("==", "!=", ">=", "<="):
                response = _call(root, "get", url, {"filterBy": f"{field}{op}{bad}"})
                if isinstance(response, Exception) or response.status_code == 200 or response.status_code >= 500:
                    wrong.append(f"GET {url}?filterBy={field}{op}{bad}: {_shown(response)}")
                elif response.status_code == 400:
                    checked += 1
    assert checked > 15 and not wrong, "\n".join(wrong)


@pytest.mark.parametrize("value", ["inf", "-inf", "nan", "Infinity", "1e400", "0x10", "1_000", "٣"])
def test_a_number_filter_that_is_not_a_finite_number_is_a_400_naming_it(value, root):
    """S10: `filterBy=totalRunningTimeSeconds==inf` was a 500 (a duration past timedelta's range)."""
    for field in ("totalRunningTimeSeconds", "totalPendingTimeSeconds", "allocatedGPU"):
        for op in ("==", ">=", "<="):
            response = _call(root, "get", "/api/v1/workloads", {"filterBy": f"{field}{op}{value}"})
            assert _json_4xx(response) and response.status_code == 400, (field, op, value, _shown(response))
            assert [e["field"] for e in response.json()["errors"]] == ["filterBy"]
    assert root.get("/api/v1/workloads", {"filterBy": "totalRunningTimeSeconds>=1.5e3"}).status_code == 200


def test_a_duration_filter_beyond_what_a_duration_holds_is_a_400(root):
    response = root.get("/api/v1/workloads", {"filterBy": "totalRunningTimeSeconds>=" + "9" * 30})
    assert _json_4xx(response) and response.status_code == 400, _shown(response)


# --- the portal ---------------------------------------------------------------------------------------------

@pytest.fixture
def portal(client, world):
    client.force_login(world.org.users.platform_admin)
    return client


PAGES = ["/workloads", "/org/projects", "/org/departments", "/org/clusters", "/org/audit", "/org/users",
         "/studio/service-profiles", "/studio/environment-templates", "/kit/apps", "/kit/profiles",
         "/org/projects/{project}/members"]


@pytest.mark.parametrize("offset", ["99999999999999999999999", "-1", "²", "abc"])
def test_a_portal_list_with_any_offset_answers_its_first_page(offset, portal, world):
    """S12: `?offset=` beyond 64 bits was a 500 on every list page."""
    for page in PAGES:
        url = page.format(project=world.org.a.pk)
        response = portal.get(url, {"offset": offset})
        assert response.status_code == 200, (url, response.status_code)


@pytest.mark.parametrize("value", ["inf", "²", "18446744073709551616"])
def test_a_portal_list_filter_with_a_bad_number_shows_its_error(value, portal):
    """S10 on the workloads page: the filter's error is shown above an empty list."""
    for expression in (f"totalRunningTimeSeconds>={value}", f"projectId=={value}"):
        response = portal.get("/workloads", {"filterBy": expression})
        assert response.status_code == 200 and b"is not a valid value for" in response.content, expression


@pytest.mark.parametrize("kind", ["clusters", "departments", "projects"])
@pytest.mark.parametrize("pk", ["abc", "²", "٣", "99999999999999999999999", "1-2"])
def test_an_org_page_with_a_malformed_id_is_a_404(kind, pk, portal, world):
    """S14: `/org/projects/abc/edit` and the delete form's POST were 500s; `/org/projects/٣/edit` edited project 3."""
    assert portal.get(f"/org/{kind}/{pk}/edit").status_code == 404
    assert portal.post(f"/org/{kind}/{pk}/delete").status_code == 404


ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def test_a_real_id_in_other_digits_names_no_object(root, world):
    """`/api/v1/service-profiles/١` answered profile 1 (`\\d` in a route takes any Unicode digit and int() reads
    them): an id is written with the digits 0-9 only, so the same object under another spelling is a JSON 404."""
    checked, wrong = 0, []
    for route, method, _ in operations(root):
        if method != "get":
            continue
        real = path_values(world, route)
        for name in re.findall(r"\{(\w+)\}", route):
            value = str(real.get(name, "1"))
            if not value.isascii() or not value.isdigit():
                continue
            response = _call(root, method, _fill(route, {**real, name: value.translate(ARABIC_INDIC)}))
            if not _json_4xx(response):
                wrong.append(f"GET {_fill(route, {**real, name: value.translate(ARABIC_INDIC)})}: {_shown(response)}")
            checked += 1
    assert checked > 15 and not wrong, "\n".join(wrong)
