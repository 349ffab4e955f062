"""/api/schema/ documents Run:ai's operations as Run:ai's own document does: a valid OpenAPI document, grouped by
Run:ai's tags, with real request and response schemas and the seeds' bodies as examples."""

import jsonschema
import pytest
from openapi_spec_validator import validate

from tests.runai_spec import operation
from workloads.api.seed_examples import INFERENCE_REQUEST, TRAINING_REQUEST

pytestmark = pytest.mark.django_db

OPERATIONS = {  # (method, path): Run:ai's tag
    ("post", "/api/v1/token"): "Tokens",
    ("get", "/api/v1/workloads"): "Workloads",
    ("get", "/api/v1/workloads/count"): "Workloads",
    ("get", "/api/v1/workloads/{workloadId}"): "Workloads",
    ("get", "/api/v1/workloads/{workloadId}/metrics"): "Workloads",
    ("get", "/api/v1/workloads/{workloadId}/pods"): "Pods",
    ("get", "/api/v1/workloads/{workloadId}/pods/{podId}/metrics"): "Pods",
    ("get", "/api/v1/workloads/{workloadId}/events"): "Events",
    **{(m, f"/api/v1/workloads/{kind}{suffix}"): tag
       for kind, tag in (("trainings", "Trainings"), ("workspaces", "Workspaces"), ("inferences", "Inferences"))
       for m, suffix in (("post", ""), ("get", "/{workloadId}"), ("delete", "/{workloadId}"))},
    **{("post", f"/api/v1/workloads/{kind}/{{workloadId}}/{verb}"): tag
       for kind, tag in (("trainings", "Trainings"), ("workspaces", "Workspaces")) for verb in ("suspend", "resume")},
    ("patch", "/api/v1/workloads/inferences/{workloadId}"): "Inferences",
    ("get", "/api/v1/workloads/inferences/{workloadId}/metrics"): "Inferences",
    ("get", "/api/v1/workloads/inferences/{workloadId}/pods/{podId}/metrics"): "Inferences",
}


@pytest.fixture(scope="module")
def document(django_db_blocker):
    from rest_framework.test import APIClient

    with django_db_blocker.unblock():
        response = APIClient().get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def test_the_document_is_valid_openapi(document):
    validate(document)


@pytest.mark.parametrize("method,path", sorted(OPERATIONS))
def test_each_run_ai_operation_is_under_its_tag_with_real_schemas(document, method, path):
    assert operation("latest", method, path) or operation("2.18", method, path)  # one of Run:ai's
    ours = document["paths"][path][method]
    assert ours["tags"] == [OPERATIONS[(method, path)]]
    if "requestBody" in ours:
        schema = ours["requestBody"]["content"]["application/json"]["schema"]
        assert "$ref" in schema, schema  # a named schema with its fields, not {"type": "object"}
    success = next(code for code in ours["responses"] if code.startswith("2"))
    content = ours["responses"][success].get("content")
    if method != "delete":
        schema = content["application/json"]["schema"]
        target = schema.get("$ref", "")
        resolved = document["components"]["schemas"][target.split("/")[-1]] if target else schema
        assert resolved.get("properties"), (path, resolved)


@pytest.mark.parametrize("path,seed", [("/api/v1/workloads/trainings", TRAINING_REQUEST),
                                       ("/api/v1/workloads/inferences", INFERENCE_REQUEST)])
def test_the_seeds_are_the_examples_and_valid_under_our_request_schema(document, path, seed):
    body = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    assert [example["value"] for example in body["examples"].values()] == [seed]
    schema = {"$ref": body["schema"]["$ref"], "components": document["components"]}  # refs resolve in the document
    jsonschema.validate(seed, schema, cls=jsonschema.Draft4Validator)
