"""Run:ai's own OpenAPI documents as a test oracle: check our answers (and request bodies) against their schemas.

    from tests.runai_spec import assert_matches_spec
    response = client.get(f"/api/v1/workloads/{id}")
    assert_matches_spec(response, "get", "/api/v1/workloads/{workloadId}")

The documents are `runai-openapi-2.18.json` and `runai-openapi-latest.json` (CONTRACT §0), found in
`$RUNAI_SPEC_DIR`, else `../shared/runai/` beside the checkout, else `/work/shared/runai/`. A response is checked
against every version that defines the operation (2.18's status codes win: when our 2xx code is missing from a
version, that version's own 2xx schema is used, as for latest's 202 creates), so an answer holding the union of
both versions' fields passes both. Their `$ref`s resolve into the same file. OpenAPI 3.0's `nullable` becomes
JSON Schema's `null` type; formats (date-time, uuid…) are checked."""

import json
import os
from functools import cache
from pathlib import Path

import jsonschema
from jsonschema.exceptions import best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

VERSIONS = ("2.18", "latest")
_CANDIDATE_DIRS = [
    os.environ.get("RUNAI_SPEC_DIR", ""),
    Path(__file__).resolve().parents[2] / "shared" / "runai",
    Path(__file__).resolve().parents[1] / "shared" / "runai",
    "/work/shared/runai",
]


def spec_dir() -> Path:
    for candidate in filter(None, _CANDIDATE_DIRS):
        if (Path(candidate) / "runai-openapi-2.18.json").is_file():
            return Path(candidate)
    raise FileNotFoundError("Run:ai's OpenAPI documents not found; set RUNAI_SPEC_DIR to their folder.")


def _json_schema_of(node):
    """OpenAPI 3.0 schema objects → JSON Schema draft 4: `nullable: true` admits null."""
    if isinstance(node, list):
        return [_json_schema_of(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _json_schema_of(value) for key, value in node.items()}
    if converted.pop("nullable", None) is True:
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@cache
def document(version: str) -> dict:
    with open(spec_dir() / f"runai-openapi-{version}.json") as handle:
        return json.load(handle)


@cache
def _registry(version: str) -> Registry:
    converted = _json_schema_of(document(version))
    return Registry().with_resource(_uri(version), Resource(contents=converted, specification=DRAFT4))


def _uri(version):
    return f"urn:runai-openapi-{version}"


def operation(version: str, method: str, path: str) -> dict | None:
    return document(version)["paths"].get(path, {}).get(method.lower())


def _resolve(version, node):
    while isinstance(node, dict) and "$ref" in node:
        node = _pointer(document(version), node["$ref"])
    return node


def _pointer(doc, ref):
    node = doc
    for part in ref.lstrip("#/").split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _validator(version, schema_pointer):
    schema = {"$ref": f"{_uri(version)}#{schema_pointer}"}
    return jsonschema.Draft4Validator(schema, registry=_registry(version), format_checker=jsonschema.FormatChecker())


def response_schema_pointer(version: str, method: str, path: str, status: int) -> str | None:
    """The JSON pointer of the schema of `status`'s JSON body (a 2xx falls back to the version's own 2xx)."""
    op = operation(version, method, path)
    if op is None:
        return None
    responses = op["responses"]
    code = str(status)
    if code not in responses and 200 <= status < 300:
        code = next((c for c in responses if c.startswith("2")), code)
    if code not in responses:
        raise AssertionError(f"{method.upper()} {path} has no {status} answer in Run:ai {version}")
    response = _resolve(version, responses[code])
    content = (response.get("content") or {}).get("application/json")
    if content is None:
        return None
    pointer = f"/paths/{_escape(path)}/{method.lower()}/responses/{code}/content/application~1json/schema"
    if "$ref" in responses[code]:  # a shared response object: point into components
        pointer = responses[code]["$ref"].lstrip("#") + "/content/application~1json/schema"
    return pointer


def _escape(path):
    return path.replace("~", "~0").replace("/", "~1")


def spec_errors(body, method: str, path: str, status: int, versions=VERSIONS) -> list[str]:
    """Every way `body` differs from the response schema of the operation in each version that has it."""
    problems, seen = [], False
    for version in versions:
        if operation(version, method, path) is None:
            continue
        seen = True
        pointer = response_schema_pointer(version, method, path, status)
        if pointer is None:
            if body not in (None, b"", ""):
                problems.append(f"[{version}] expected no body, got {body!r}"[:300])
            continue
        problems += [f"[{version}] {line}" for line in _explain(_validator(version, pointer).iter_errors(body))]
    if not seen:
        raise AssertionError(f"{method.upper()} {path} is in none of Run:ai's documents {versions}")
    return problems


def assert_matches_spec(response, method: str, path: str, versions=VERSIONS):
    """`response`: a Django/DRF test response or anything with `status_code` and `json()`/`content`."""
    content = getattr(response, "content", b"")
    body = response.json() if content else None
    problems = spec_errors(body, method, path, response.status_code, versions)
    assert not problems, f"{method.upper()} {path} → {response.status_code} differs from Run:ai's schema:\n" + (
        "\n".join(problems[:40])
    )


def request_errors(body, method: str, path: str, versions=VERSIONS) -> list[str]:
    """Every way a request body differs from the operation's request schema (to check our examples)."""
    problems = []
    for version in versions:
        op = operation(version, method, path)
        if op is None or "requestBody" not in op:
            continue
        pointer = f"/paths/{_escape(path)}/{method.lower()}/requestBody"
        if "$ref" in op["requestBody"]:
            pointer = op["requestBody"]["$ref"].lstrip("#")
        pointer += "/content/application~1json/schema"
        problems += [f"[{version}] {line}" for line in _explain(_validator(version, pointer).iter_errors(body))]
    return problems


def _explain(errors) -> list[str]:
    """One line per leaf problem: an anyOf/oneOf failure is explained by its best-matching branch's errors."""
    lines = []
    for error in errors:
        while error.context:  # the `null` branch that stands for `nullable` explains nothing
            branches = [e for e in error.context if not (e.validator == "type" and e.validator_value == "null")]
            error = best_match(branches or error.context)
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        lines.append(f"{where}: {error.message[:300]}")
    return lines


def schema_properties(version: str, name: str) -> set[str]:
    """Property names of a component schema, through allOf (to compare field sets)."""
    schema = document(version)["components"]["schemas"][name]
    names = set()
    for part in [schema, *schema.get("allOf", [])]:
        part = _resolve(version, part)
        names |= set(part.get("properties", {}))
        for inner in part.get("allOf", []):
            names |= set(_resolve(version, inner).get("properties", {}))
    return names
