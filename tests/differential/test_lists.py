"""Lists: paged lists are snapshots, continue tokens expire after compaction (410 with a fresh token),
resourceVersionMatch and its validation, and resourceVersions the server has not reached."""

import time

import pytest

from .conftest import status_shape


def config_map(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}


def make(apiserver, ns: str, *names: str) -> None:
    for name in names:
        response = apiserver.request("POST", f"/api/v1/namespaces/{ns}/configmaps", body=config_map(name))
        assert response.status_code == 201, response.text


def names(page: dict) -> list[str]:
    """Names on a page (every namespace holds the controller manager's kube-root-ca.crt too)."""
    return [item["metadata"]["name"] for item in page["items"]]


def test_later_pages_show_the_list_as_it_was_at_the_first(apiserver):
    ns = apiserver.namespace()
    make(apiserver, ns, "a", "b", "c")
    path = f"/api/v1/namespaces/{ns}/configmaps"
    code, first = apiserver.json("GET", path, params={"limit": 2})
    assert code == 200 and names(first) == ["a", "b"] and first["metadata"]["remainingItemCount"] == 2
    make(apiserver, ns, "d")  # after page 1: not part of this list
    apiserver.request("DELETE", f"{path}/c")  # deleted after page 1: still on page 2
    code, second = apiserver.json("GET", path, params={"limit": 2, "continue": first["metadata"]["continue"]})
    assert code == 200 and names(second) == ["c", "kube-root-ca.crt"]
    assert second["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    assert "continue" not in second["metadata"]


def test_a_continue_token_older_than_the_compaction_is_410_with_a_fresh_token(apiserver):
    ns = apiserver.namespace()
    make(apiserver, ns, "a", "b")
    path = f"/api/v1/namespaces/{ns}/configmaps"
    code, first = apiserver.json("GET", path, params={"limit": 1})
    assert code == 200 and names(first) == ["a"]
    make(apiserver, ns, "c")  # the compaction must pass the list's revision
    apiserver.compact()
    code, body = apiserver.json("GET", path, params={"limit": 1, "continue": first["metadata"]["continue"]})
    assert code == 410 and status_shape(body) == {"kind": "Status", "status": "Failure", "reason": "Expired",
                                                  "code": 410, "details": [], "causes": []}
    assert body["message"].startswith("The provided continue parameter is too old to display a consistent list "
                                      "result. You can start a new list without the continue parameter, or use the "
                                      "continue token in this response"), body
    fresh = body["metadata"]["continue"]
    # The fresh token goes on after "a", at the latest state: the list is no longer consistent, and says so.
    code, rest = apiserver.json("GET", path, params={"limit": 5, "continue": fresh})
    assert code == 200 and names(rest) == ["b", "c", "kube-root-ca.crt"]

    code, body = apiserver.json("GET", path, params={"resourceVersion": first["metadata"]["resourceVersion"],
                                                     "resourceVersionMatch": "Exact"})
    assert code == 410 and body["reason"] == "Expired"
    assert body["message"] == "The resourceVersion for the provided list is too old."


def test_an_exact_list_is_the_state_at_that_version(apiserver):
    ns = apiserver.namespace()
    make(apiserver, ns, "a")
    path = f"/api/v1/namespaces/{ns}/configmaps"
    code, before = apiserver.json("GET", path)
    make(apiserver, ns, "b")
    rv = before["metadata"]["resourceVersion"]
    code, exact = apiserver.json("GET", path, params={"resourceVersion": rv, "resourceVersionMatch": "Exact"})
    # (an exact list may come in etcd's order, not always sorted: the names are compared as a set)
    assert code == 200 and sorted(names(exact)) == ["a", "kube-root-ca.crt"]
    assert exact["metadata"]["resourceVersion"] == rv
    code, newer = apiserver.json("GET", path, params={"resourceVersion": rv, "resourceVersionMatch": "NotOlderThan"})
    assert code == 200 and sorted(names(newer)) == ["a", "b", "kube-root-ca.crt"]
    assert int(newer["metadata"]["resourceVersion"]) > int(rv)


@pytest.mark.parametrize("params, messages", [
    ({"resourceVersionMatch": "Exact"},
     ["Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"]),
    ({"resourceVersionMatch": "Exact", "resourceVersion": "0"},
     ['Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"']),
    ({"resourceVersionMatch": "Foo", "resourceVersion": "5"},
     ['Unsupported value: "Foo": supported values: "Exact", "NotOlderThan", ""']),
    ({"resourceVersionMatch": "NotOlderThan", "resourceVersion": "5", "continue": "abc"},
     ["Forbidden: resourceVersionMatch is forbidden when continue is provided"]),
    ({"resourceVersionMatch": "NotOlderThan", "resourceVersion": "5", "watch": "1"},
     ["Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"]),
    ({"resourceVersionMatch": "Exact", "watch": "1"},
     ["Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
      'Unsupported value: "Exact": supported values: "NotOlderThan"']),
])
def test_resource_version_match_rules_are_422_on_list_options(apiserver, params, messages):
    code, body = apiserver.json("GET", "/api/v1/namespaces/default/configmaps", params=params)
    assert code == 422, body
    assert body["details"] == {"group": "meta.k8s.io", "kind": "ListOptions",
                               "causes": [{"reason": "FieldValueNotSupported" if m.startswith("Unsupported")
                                           else "FieldValueForbidden", "message": m, "field": "resourceVersionMatch"}
                                          for m in messages]}
    summary = "; ".join(f"resourceVersionMatch: {m}" for m in messages)
    expected = summary if len(messages) == 1 else "[" + summary.replace("; ", ", ") + "]"
    assert body["message"] == f'ListOptions.meta.k8s.io "" is invalid: {expected}'


def test_a_resource_version_from_the_future_waits_then_is_504_too_large(apiserver):
    far = "99999999"
    for path in ("/api/v1/namespaces", "/api/v1/namespaces/default"):
        started = time.monotonic()
        code, body = apiserver.json("GET", path, params={"resourceVersion": far})
        waited = time.monotonic() - started
        assert code == 504 and status_shape(body) == {
            "kind": "Status", "status": "Failure", "reason": "Timeout", "code": 504,
            "details": ["causes", "retryAfterSeconds"], "causes": [("ResourceVersionTooLarge", None)]}, body
        assert body["message"].startswith(f"Timeout: Too large resource version: {far}, current: ")
        assert body["details"]["retryAfterSeconds"] == 1
        assert waited >= 2.5, waited  # the server waited for its cache to catch up first

    # An exact (or paged) read of it is refused at once, without the advice to retry.
    for params in ({"resourceVersion": far, "resourceVersionMatch": "Exact"}, {"resourceVersion": far, "limit": 1}):
        started = time.monotonic()
        code, body = apiserver.json("GET", "/api/v1/namespaces", params=params)
        assert time.monotonic() - started < 2.5
        assert code == 504 and status_shape(body) == {
            "kind": "Status", "status": "Failure", "reason": "Timeout", "code": 504,
            "details": ["causes"], "causes": [("ResourceVersionTooLarge", None)]}, body
        assert body["message"].startswith(f"Timeout: Too large resource version: {far}, current: ")
