"""The id walk: every id a list hands out, in the JSON form it is handed out in, sent back to every endpoint that
takes an id of its kind — in a path, a query or a body — is accepted (issue: `"id": "1"` from
/api/v1/org-unit/projects was a 400 "projectId: Must be an integer" on POST /cfg/profiles). And each id field
has one JSON type across PaaS Studio's own answers, while Run:ai-shaped answers keep the types of Run:ai's
specification."""

import itertools
import json
from collections import defaultdict

import pytest
from django.db import transaction

from tests.api.world import make_world
from tests.conftest import bearer_client
from tests.runai_spec import document

pytestmark = pytest.mark.django_db

# Lists, and the kind of the `id` of their items. PaaS Studio's own lists are marked; the rest are Run:ai's.
LISTS = {
    "/api/v1/org-unit/projects": "project", "/api/v1/org-unit/departments": "department",
    "/api/v1/clusters": "cluster", "/api/v1/node-pools": "node-pool", "/api/v1/users": "user",
    "/api/v1/authorization/roles": "role", "/api/v1/authorization/access-rules": "access-rule",
    "/api/v1/workloads": "workload", "/api/v1/workloads/pods": "pod",
}
OWN_LISTS = {
    "/api/v1/environment-templates": "template", "/api/v1/service-profiles": "service-profile",
    "/api/v1/catalog?projectId={alpha}": "service-profile", "/api/v1/audit-events": "audit-event",
    "/api/v1/access-keys": "access-key", "/api/v1/me": "user", "/cfg/apps": "app", "/cfg/profiles": "kit-profile",
    "/streaming/stream": "session", "/api/v1/kit/client-urls": "client-url",
}
# Fields that name an id of a kind, wherever they appear.
FIELDS = {
    "projectId": "project", "projectIds": "project", "departmentId": "department", "parentId": "department",
    "clusterId": "cluster", "workloadId": "workload", "roleId": "role", "environmentTemplateId": "template",
}
SCOPES = {"project": "project", "department": "department"}  # an access rule's scopeId, by its scopeType


def _items(body):
    """The items of a list answer: the first list of objects in it (or the object itself, for /me)."""
    if isinstance(body, list):
        return body
    for value in body.values():
        if isinstance(value, list) and (not value or isinstance(value[0], dict)):
            return value
    return [body]


def handed_out(api, world) -> dict[str, dict[str, set]]:
    """{kind: {json of the id as handed out: {where}}} over every list, walked as a client would."""
    found: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))

    def note(kind, value, where):
        for one in value if isinstance(value, list) else [value]:
            if one is not None:
                found[kind][json.dumps(one)].add(where)

    def walk(node, where):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in FIELDS and key != "parentId" or (key == "parentId" and "departmentId" in node):
                    note(FIELDS[key], value, f"{where}.{key}")
                if key == "scopeId" and node.get("scopeType") in SCOPES:
                    note(SCOPES[node["scopeType"]], value, f"{where}.scopeId")
                walk(value, f"{where}.{key}")
        elif isinstance(node, list):
            for item in node:
                walk(item, where)

    for path, kind in {**LISTS, **OWN_LISTS}.items():
        url = path.format(alpha=world.org.a.pk)
        response = api.get(url)
        assert response.status_code == 200, (url, response.content[:300])
        body = response.json()
        for item in _items(body):
            note(kind, item.get("id") if kind != "cluster" else item.get("clusterId"), f"{url} id")
        walk(body, url)
    return found


NAMES = itertools.count()


def _name() -> str:
    return f"walk-{next(NAMES)}"


def consumers(world) -> dict[str, list[tuple[str, str, str, object]]]:
    """{kind: [(label, method, url, body)]}: every endpoint that takes an id of the kind; `{v}` is the id (in a
    URL, as text; in a body, as the JSON value handed out)."""
    w, a, cluster = world, world.org.a.pk, str(world.org.cluster.pk)
    sp, template = w.profile.pk, w.template.pk
    return {
        "project": [
            ("GET project", "GET", "/api/v1/org-unit/projects/{v}", None),
            ("GET members", "GET", "/api/v1/org-unit/projects/{v}/members", None),
            ("filter workloads", "GET", "/api/v1/workloads?filterBy=projectId=={v}", None),
            ("catalog", "GET", "/api/v1/catalog?projectId={v}", None),
            ("policy", "GET", "/api/v2/policy?projectId={v}", None),
            ("stream limit", "GET", "/api/v1/kit/projects/{v}/stream-limit", None),
            ("submit training", "POST", "/api/v1/workloads/trainings",
             lambda v: {"name": _name(), "projectId": v, "clusterId": cluster, "spec": {"image": "python:3.11"}}),
            ("launch service profile", "POST", f"/api/v1/service-profiles/{sp}/launch",
             lambda v: {"projectId": v, "name": _name()}),
            ("service profile owner", "PATCH", f"/api/v1/service-profiles/{sp}", lambda v: {"projectId": v}),
            ("service profile sharing", "PUT", f"/api/v1/service-profiles/{sp}/sharing",
             lambda v: {"mode": "selected", "projectIds": [v]}),
            ("template owner", "PATCH", f"/api/v1/environment-templates/{template}", lambda v: {"projectId": v}),
            ("template sharing", "PUT", f"/api/v1/environment-templates/{template}/sharing",
             lambda v: {"mode": "selected", "projectIds": [v]}),
            ("Kit profile create", "POST", "/cfg/profiles", lambda v: {
                "id": _name(), "name": "Walk", "supportedApplications": [], "projectId": v,
                "sharing": {"mode": "selected", "projectIds": [v]}}),
            ("Kit profile owner", "PATCH", "/cfg/profiles/alpha-stream", lambda v: {"projectId": v}),
            ("stream", "POST", "/streaming/stream", lambda v: {"id": "usd-viewer", "profile": "walk-shared",
                                                               "projectId": v}),
            ("client URL", "POST", "/api/v1/kit/client-urls", lambda v: {"projectId": v, "name": "walk"}),
            ("access rule", "POST", "/api/v1/authorization/access-rules", lambda v: {
                "subjectId": "erin", "subjectType": "user", "roleId": w.role.pk, "scopeId": v,
                "scopeType": "project"}),
        ],
        "department": [
            ("GET department", "GET", "/api/v1/org-unit/departments/{v}", None),
            ("filter workloads", "GET", "/api/v1/workloads?filterBy=departmentId=={v}", None),
            ("policy", "GET", "/api/v2/policy?departmentId={v}", None),
            ("project departmentId", "POST", "/api/v1/org-unit/projects",
             lambda v: {"name": _name(), "departmentId": v, "clusterId": cluster}),
            ("project parentId", "POST", "/api/v1/org-unit/projects",
             lambda v: {"name": _name(), "parentId": v, "clusterId": cluster}),
        ],
        "cluster": [
            ("GET cluster", "GET", "/api/v1/clusters/{v}", None),
            ("policy", "GET", "/api/v2/policy?clusterId={v}", None),
            ("submit training", "POST", "/api/v1/workloads/trainings",
             lambda v: {"name": _name(), "projectId": a, "clusterId": v, "spec": {"image": "python:3.11"}}),
        ],
        "workload": [(label, "GET", f"/api/v1/workloads/{{v}}{tail}", None) for label, tail in (
            ("GET workload", ""), ("events", "/events"), ("pods", "/pods"), ("history", "/history"))],
        "user": [("GET user", "GET", "/api/v1/users/{v}", None)],
        "role": [("GET role", "GET", "/api/v1/authorization/roles/{v}", None),
                 ("access rule", "POST", "/api/v1/authorization/access-rules", lambda v: {
                     "subjectId": "erin", "subjectType": "user", "roleId": v, "scopeId": str(a),
                     "scopeType": "project"})],
        "access-rule": [("GET access rule", "GET", "/api/v1/authorization/access-rules/{v}", None)],
        "node-pool": [("GET node pool", "GET", "/api/v1/node-pools/{v}", None)],
        "template": [("GET template", "GET", "/api/v1/environment-templates/{v}", None),
                     ("versions", "GET", "/api/v1/environment-templates/{v}/versions", None)],
        "service-profile": [("GET service profile", "GET", "/api/v1/service-profiles/{v}", None),
                            ("catalog entry", "GET", f"/api/v1/catalog/{{v}}?projectId={a}", None)],
        "audit-event": [("GET audit event", "GET", "/api/v1/audit-events/{v}", None)],
        "app": [("GET app", "GET", "/cfg/apps/{v}", None), ("versions", "GET", "/cfg/apps/{v}/versions", None),
                ("stream", "POST", "/streaming/stream", lambda v: {"id": v, "profile": "walk-shared",
                                                                   "projectId": a})],
        "kit-profile": [("GET Kit profile", "GET", "/cfg/profiles/{v}", None)],
        "session": [("GET session", "GET", "/streaming/stream/{v}", None),
                    ("GET its workload", "GET", "/api/v1/workloads/{v}", None)],
        "client-url": [("GET client URL", "GET", "/api/v1/kit/client-urls/{v}", None)],
    }


def _text(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def test_every_id_a_list_hands_out_is_accepted_by_every_endpoint_that_takes_it(org, capsys):
    world = make_world(org)
    from tests.factories import ApplicationProfileFactory

    ApplicationProfileFactory(slug="walk-shared", sharing_mode="all")  # a profile every project may stream with
    api = bearer_client(org.users.platform_admin)
    ids = handed_out(api, world)
    refused, lines = [], []
    for kind, uses in consumers(world).items():
        assert ids.get(kind), f"no list hands out a {kind} id"
        for label, method, url, body in uses:
            codes = defaultdict(set)
            for given, where in ids[kind].items():
                value = json.loads(given)
                with transaction.atomic():  # each call finds the world as it was
                    response = api.generic(method, url.replace("{v}", _text(value)),
                                           json.dumps(body(value)) if body else "", content_type="application/json")
                    transaction.set_rollback(True)
                codes[response.status_code].add(given)
                # Refused for its form or its type is what must never happen; a 404 for an object the endpoint
                # does not apply to (a stream of a project the profile is not shared with...) may.
                if response.status_code in (400, 422) or response.status_code >= 500:
                    refused.append(f"{method} {url} with {given} (from {sorted(where)[0]}): {response.status_code} "
                                   f"{response.content[:200]!r}")
            lines.append(f"{kind:16} {label:26} {method:6} {url:60} "
                         f"{', '.join(f'{c}×{len(v)}' for c, v in sorted(codes.items()))}")
    with capsys.disabled():
        print(f"\nid walk: {sum(len(v) for v in ids.values())} ids of {len(ids)} kinds handed out, "
              f"{len(lines)} endpoints that take them")
        print("\n".join(lines))
    assert not refused, "\n".join(refused)


def test_a_projects_id_in_both_forms_reaches_the_same_object(org):
    """`"1"` (Run:ai's answers) and `1` (PaaS Studio's) are one project to every endpoint that takes it."""
    world = make_world(org)
    api = bearer_client(org.users.platform_admin)
    a = org.a.pk
    for form in (a, str(a)):
        made = api.post("/cfg/profiles", {"id": f"owned-{type(form).__name__}", "name": "X",
                                          "supportedApplications": [], "projectId": form,
                                          "sharing": {"mode": "selected", "projectIds": [form]}}, format="json")
        assert made.status_code == 201, made.json()
        assert (made.json()["projectId"], made.json()["sharing"]["projectIds"]) == (a, [a])  # answered as 1
        link = api.post("/api/v1/kit/client-urls", {"projectId": form, "name": "x"}, format="json").json()
        assert link["projectId"] == a
    assert world.stream.project_id == a


def _types(node, found, where=""):
    if isinstance(node, dict):
        for key, value in node.items():
            if key.endswith(("Id", "Ids")) and value is not None:
                kinds = {type(v).__name__ for v in value} if isinstance(value, list) else {type(value).__name__}
                for kind in kinds:
                    found[key][kind].add(where)
            _types(value, found, where)
    elif isinstance(node, list):
        for item in node:
            _types(item, found, where)


OWN_DETAILS = ["/api/v1/service-profiles/{sp}", "/api/v1/environment-templates/{template}",
               "/cfg/profiles/alpha-stream", "/streaming/stream/{stream}", "/api/v1/kit/client-urls/{link}",
               "/api/v1/kit/projects/{alpha}/stream-limit"]


def test_each_id_field_has_one_json_type_across_paas_studios_own_answers(org):
    world = make_world(org)
    api = bearer_client(org.users.platform_admin)
    for shared in ("/api/v1/service-profiles/{sp}/sharing", "/api/v1/environment-templates/{template}/sharing"):
        url = shared.format(sp=world.profile.pk, template=world.template.pk)
        assert api.put(url, {"mode": "selected", "projectIds": [org.b.pk]}, format="json").status_code == 200
    api.patch("/cfg/profiles/alpha-stream", {"sharing": {"mode": "selected", "projectIds": [org.b.pk]}},
              format="json")
    found: dict = defaultdict(lambda: defaultdict(set))
    values = {"alpha": org.a.pk, "sp": world.profile.pk, "template": world.template.pk, "stream": world.stream.pk,
              "link": world.client_url.pk}
    for path in [*OWN_LISTS, *OWN_DETAILS]:
        url = path.format(**values)
        _types(api.get(url).json(), found, url)
    mixed = {field: {kind: sorted(where) for kind, where in kinds.items()} for field, kinds in found.items()
             if len(kinds) > 1}
    assert not mixed, mixed
    assert dict(found["projectId"]).keys() == {"int"} and dict(found["projectIds"]).keys() == {"int"}


def test_each_id_field_has_one_json_type_across_run_ai_shaped_answers_too(org):
    """`departmentId` is a string in a workload (Run:ai's type) and so in a project (CONTRACT's field) as well."""
    make_world(org)
    api = bearer_client(org.users.platform_admin)
    found: dict = defaultdict(lambda: defaultdict(set))
    for path in LISTS:
        _types(api.get(path).json(), found, path)
    mixed = {field: {kind: sorted(where) for kind, where in kinds.items()} for field, kinds in found.items()
             if len(kinds) > 1}
    assert not mixed, mixed
    assert dict(found["departmentId"]).keys() == {"str"}


def _spec_type(schema_name: str, field: str) -> str:
    schemas = document("latest")["components"]["schemas"]

    def props(schema):
        if "$ref" in schema:
            return props(schemas[schema["$ref"].rsplit("/", 1)[1]])
        merged = {}
        for part in schema.get("allOf", []):
            merged.update(props(part))
        return {**merged, **schema.get("properties", {})}

    return props(schemas[schema_name])[field]["type"]


@pytest.mark.parametrize("path,items,schema,fields", [
    ("/api/v1/org-unit/projects", "projects", "Project", ["id", "parentId"]),
    ("/api/v1/org-unit/departments", "departments", "Department", ["id"]),
    ("/api/v1/workloads", "workloads", "Workload", ["id", "projectId", "departmentId"]),
    ("/api/v1/authorization/access-rules", "accessRules", "AccessRule", ["id", "roleId", "scopeId", "subjectId"]),
])
def test_run_ai_shaped_answers_keep_the_types_of_run_ais_specification(org, path, items, schema, fields):
    make_world(org)
    body = bearer_client(org.users.platform_admin).get(path).json()
    types = {"string": str, "integer": int}
    for item in body[items]:
        for field in fields:
            assert isinstance(item[field], types[_spec_type(schema, field)]), (path, field, item[field])
