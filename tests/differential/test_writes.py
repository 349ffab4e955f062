"""Writes the real server refuses: dryRun other than All, a new finalizer on an object being deleted, and a value
of the wrong JSON type (a decoding error, 400, not a validation error)."""

import pytest

from .conftest import status_shape

JOB_SPEC = {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}


@pytest.mark.parametrize("method, suffix, options, content_type, body", [
    ("POST", "", "CreateOptions", "application/json", {"metadata": {"name": "dry"}}),
    ("PUT", "/existing", "UpdateOptions", "application/json", {"metadata": {"name": "existing"}}),
    ("PATCH", "/existing", "PatchOptions", "application/merge-patch+json", {"data": {"a": "1"}}),
    ("DELETE", "/existing", "DeleteOptions", "application/json", None),
])
def test_dry_run_other_than_all_is_422_and_writes_nothing(apiserver, method, suffix, options, content_type, body):
    ns = apiserver.namespace()
    path = f"/api/v1/namespaces/{ns}/configmaps"
    created = apiserver.request("POST", path, body={"metadata": {"name": "existing"}}).json()
    code, answer = apiserver.json(method, path + suffix, body=body, content_type=content_type,
                                  params={"dryRun": "Some"})
    cause = {"reason": "FieldValueNotSupported", "message": 'Unsupported value: ["Some"]: supported values: "All"',
             "field": "dryRun"}
    assert (code, answer["reason"], answer["details"]) == (422, "Invalid", {"group": "meta.k8s.io", "kind": options,
                                                                            "causes": [cause]}), answer
    assert answer["message"] == f'{options}.meta.k8s.io "" is invalid: dryRun: {cause["message"]}'
    code, listed = apiserver.json("GET", path)
    assert [(i["metadata"]["name"], i["metadata"]["resourceVersion"]) for i in listed["items"]
            if i["metadata"]["name"] != "kube-root-ca.crt"] == [("existing", created["metadata"]["resourceVersion"])]


def test_no_new_finalizer_on_an_object_being_deleted(apiserver):
    ns = apiserver.namespace()
    path = f"/api/v1/namespaces/{ns}/configmaps/held"
    apiserver.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                      body={"metadata": {"name": "held", "finalizers": ["example.com/a"]}})
    code, deleting = apiserver.json("DELETE", path)
    assert code == 200 and deleting["metadata"]["deletionTimestamp"], deleting
    add = {"metadata": {"finalizers": ["example.com/a", "example.com/b"]}}
    code, body = apiserver.json("PATCH", path, body=add, content_type="application/merge-patch+json")
    message = ('Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers '
               '[]string{"example.com/b"}')
    # Two causes (the kind's update validation checks the object meta, then the generic registry does again);
    # the message says it once.
    assert code == 422 and status_shape(body) == {
        "kind": "Status", "status": "Failure", "reason": "Invalid", "code": 422,
        "details": ["causes", "kind", "name"], "causes": [("FieldValueForbidden", "metadata.finalizers")] * 2}, body
    assert body["message"] == f'ConfigMap "held" is invalid: metadata.finalizers: {message}'
    # Removing the last one finishes the deletion.
    code, _ = apiserver.json("PATCH", path, body={"metadata": {"finalizers": None}},
                             content_type="application/merge-patch+json")
    assert code == 200
    assert apiserver.request("GET", path).status_code == 404


@pytest.mark.parametrize("path, body, trail", [
    ("/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "typed"}, "data": {"a": 1}},
     "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
    ("/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "typed"}, "data": ["x"]},
     "json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string"),
    ("/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "typed", "labels": "x"}},
     "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string"),
    ("/api/v1/namespaces/{ns}/configmaps", {"metadata": {"name": "typed", "generation": "x"}},
     "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.generation of type int64"),
    ("/apis/batch/v1/namespaces/{ns}/jobs", {"metadata": {"name": "typed"}, "spec": {"completions": "x", **JOB_SPEC}},
     "json: cannot unmarshal string into Go struct field JobSpec.spec.completions of type int32"),
    ("/apis/batch/v1/namespaces/{ns}/jobs", {"metadata": {"name": "typed"}, "spec": {"backoffLimit": 1.5, **JOB_SPEC}},
     "json: cannot unmarshal number 1.5 into Go struct field JobSpec.spec.backoffLimit of type int32"),
    ("/apis/batch/v1/namespaces/{ns}/jobs", {"metadata": {"name": "typed"}, "spec": {"suspend": "yes", **JOB_SPEC}},
     "json: cannot unmarshal string into Go struct field JobSpec.spec.suspend of type bool"),
    ("/apis/batch/v1/namespaces/{ns}/jobs", {"metadata": {"name": "typed"}, "spec": {"selector": "x", **JOB_SPEC}},
     "json: cannot unmarshal string into Go struct field JobSpec.spec.selector of type v1.LabelSelector"),
    ("/api/v1/namespaces/{ns}/pods", {"metadata": {"name": "typed"}, "spec": {"containers": {"name": "main"}}},
     "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container"),
    ("/api/v1/namespaces/{ns}/pods", {"metadata": {"name": "typed"}, "spec": {"containers": [
        {"name": "main", "image": "busybox", "ports": [{"containerPort": "80"}]}]}},
     "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type "
     "int32"),
])
def test_a_value_of_the_wrong_json_type_is_a_400_decoding_error(apiserver, path, body, trail):
    """Go's JSON decoder's words (1.35): the innermost struct, the field's path from the top, its Go type."""
    ns = apiserver.namespace()
    code, answer = apiserver.json("POST", path.format(ns=ns), body=body)
    assert code == 400 and status_shape(answer) == {"kind": "Status", "status": "Failure", "reason": "BadRequest",
                                                    "code": 400, "details": [], "causes": []}, answer
    kind = body.get("kind") or {"configmaps": "ConfigMap", "jobs": "Job", "pods": "Pod"}[path.rsplit("/", 1)[1]]
    assert answer["message"] == f'{kind} in version "v1" cannot be handled as a {kind}: {trail}'

