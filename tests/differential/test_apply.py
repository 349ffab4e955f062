"""Server-side apply: managedFields per manager, 409 Conflict when a manager changes a field another owns (unless
forced), shared ownership of equal values, and removal of what a manager stops applying."""

import json

from .conftest import status_shape

APPLY = "application/apply-patch+yaml"


def config_map(**data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": data}


def apply(apiserver, ns: str, body: dict, manager: str | None, **params) -> tuple[int, dict]:
    query = {**({"fieldManager": manager} if manager else {}), **params}
    return apiserver.json("PATCH", f"/api/v1/namespaces/{ns}/configmaps/applied", raw=json.dumps(body).encode(),
                          content_type=APPLY, params=query)


def owners(obj: dict) -> dict:
    """manager -> (operation, fieldsV1)"""
    return {e["manager"]: (e["operation"], e["fieldsV1"]) for e in obj["metadata"]["managedFields"]}


def test_apply_tracks_owners_conflicts_and_removes_what_a_manager_stops_applying(apiserver):
    ns = apiserver.namespace()
    code, created = apply(apiserver, ns, config_map(a="1", b="2"), "first")
    assert code == 201 and created["data"] == {"a": "1", "b": "2"}
    [entry] = created["metadata"]["managedFields"]
    assert {k: entry[k] for k in ("manager", "operation", "apiVersion", "fieldsType")} == {
        "manager": "first", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1"}
    assert entry["fieldsV1"] == {"f:data": {"f:a": {}, "f:b": {}}}

    # Another manager changing a field the first owns: 409, the causes naming each field.
    code, body = apply(apiserver, ns, config_map(a="9"), "second")
    assert code == 409 and status_shape(body) == {
        "kind": "Status", "status": "Failure", "reason": "Conflict", "code": 409, "details": ["causes"],
        "causes": [("FieldManagerConflict", ".data.a")]}, body
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "first": .data.a'
    assert body["details"]["causes"][0]["message"] == 'conflict with "first"'

    # The same value is no conflict: both own it.
    code, shared = apply(apiserver, ns, config_map(a="1"), "second")
    assert code == 200 and owners(shared)["second"] == ("Apply", {"f:data": {"f:a": {}}})
    assert owners(shared)["first"] == ("Apply", {"f:data": {"f:a": {}, "f:b": {}}})

    # Forced, the second takes the field from the first.
    code, forced = apply(apiserver, ns, config_map(a="9"), "second", force="true")
    assert code == 200 and forced["data"] == {"a": "9", "b": "2"}
    assert owners(forced)["first"] == ("Apply", {"f:data": {"f:b": {}}})

    # The first applies without b, which only it owned: b is removed; a, which the second owns, stays.
    code, pruned = apply(apiserver, ns, config_map(), "first")
    assert code == 200 and pruned["data"] == {"a": "9"}, pruned


def test_apply_conflicts_with_the_manager_of_a_plain_write(apiserver):
    ns = apiserver.namespace()
    response = apiserver.request("POST", f"/api/v1/namespaces/{ns}/configmaps", params={"fieldManager": "creator"},
                                 body={"metadata": {"name": "applied"}, "data": {"a": "1"}})
    assert response.status_code == 201
    # A plain write that adds a map owns the map itself too ("."); an apply owns only its entries.
    assert owners(response.json()) == {"creator": ("Update", {"f:data": {".": {}, "f:a": {}}})}
    code, body = apply(apiserver, ns, config_map(a="2"), "kubectl")
    assert code == 409 and body["message"] == ('Apply failed with 1 conflict: conflict with "creator" using v1: '
                                               ".data.a"), body
    code, body = apply(apiserver, ns, config_map(a="2"), "kubectl", force="true")
    assert code == 200 and body["data"] == {"a": "2"}
    assert owners(body)["kubectl"] == ("Apply", {"f:data": {"f:a": {}}})


def test_apply_needs_a_field_manager_and_force_is_for_apply_only(apiserver):
    ns = apiserver.namespace()
    code, body = apply(apiserver, ns, config_map(a="1"), None)
    cause = {"reason": "FieldValueRequired", "message": "Required value: is required for apply patch",
             "field": "fieldManager"}
    assert (code, body["details"]) == (422, {"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [cause]})
    assert body["message"] == 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required ' \
                              "for apply patch"
    apply(apiserver, ns, config_map(a="1"), "first")
    code, body = apiserver.json("PATCH", f"/api/v1/namespaces/{ns}/configmaps/applied", body={"data": {"a": "2"}},
                                content_type="application/merge-patch+json", params={"force": "true"})
    assert code == 422 and body["details"]["causes"] == [
        {"reason": "FieldValueForbidden", "message": "Forbidden: may not be specified for non-apply patch",
         "field": "force"}], body


def test_apply_merges_keyed_lists_by_key_and_names_an_item_field_in_its_conflict(apiserver):
    ns = apiserver.namespace()
    path = f"/apis/apps/v1/namespaces/{ns}/deployments/web"

    def deployment(**container) -> dict:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                "spec": {"selector": {"matchLabels": {"app": "web"}},
                         "template": {"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"name": "main", **container}]}}}}

    def deploy(body: dict, manager: str, **params) -> tuple[int, dict]:
        return apiserver.json("PATCH", path, raw=json.dumps(body).encode(), content_type=APPLY,
                              params={"fieldManager": manager, **params})

    code, created = deploy(deployment(image="nginx:1.27"), "owner")
    assert code == 201
    fields = owners(created)["owner"][1]
    assert fields["f:spec"]["f:template"]["f:spec"]["f:containers"] == {
        'k:{"name":"main"}': {".": {}, "f:image": {}, "f:name": {}}}
    code, body = deploy(deployment(image="nginx:1.28"), "other")
    assert code == 409 and body["details"]["causes"] == [{
        "reason": "FieldManagerConflict", "message": 'conflict with "owner"',
        "field": '.spec.template.spec.containers[name="main"].image'}], body
    # Another manager adds a field to the same item: merged into it by its key, no conflict.
    code, merged = deploy(deployment(workingDir="/srv"), "other")
    assert code == 200, merged
    [container] = merged["spec"]["template"]["spec"]["containers"]
    assert (container["image"], container["workingDir"]) == ("nginx:1.27", "/srv")
