"""Every operation of Run:ai's asset tags (Environment, Compute, Datasources, PVC, NFS, S3, Git, HostPath, ConfigMap,
Secret, Credentials, Registry, Template, Workload templates), read from both OpenAPI documents, called on this server:
each must answer its success code
with a body valid against that document's response schema. The per-tag table, answered / in the spec, is written to
docs/assets-coverage.md (STUDIO_REFRESH_DOCS=1; else under the run's own folder, tests/docs_output)."""

import pytest
from django.db import transaction

from tests import docs_output
from tests.assets import template_bodies
from tests.assets.bodies import body
from tests.runai_spec import document, spec_errors

pytestmark = pytest.mark.django_db
TAGS = ("Environment", "Compute", "Datasources", "PVC", "NFS", "S3", "Git", "HostPath", "ConfigMap", "Secret",
        "Credentials", "Registry", "Template", "Workload templates")
PREFIX = "/api/v1/asset/"


def operations(version: str) -> list[tuple[str, str, str]]:
    """(tag, METHOD, path) of every operation of the asset tags in one document."""
    found = []
    for path, item in document(version)["paths"].items():
        for method, op in item.items():
            tag = next((t for t in op.get("tags", []) if t in TAGS), None) if isinstance(op, dict) else None
            if tag:
                found.append((tag, method.upper(), path))
    return found


def _collection(path: str) -> str:
    return path.removeprefix(PREFIX).split("/{AssetId}")[0]


def call(api, org, method: str, path: str, registry_url: str):
    """Call one documented operation with what it needs: an asset of its kind for the item routes (a registry:
    one on a real registry, tests/assets/conftest.py's `registries`)."""
    if "workload-template" in path:
        return template_bodies.call(api, org.a, method, path)
    route = _collection(path)
    if method == "POST" and route == "registries":
        return api.post(path, {"meta": {"name": "made", "scope": "project", "projectId": org.a.pk}, "spec": {
            "url": registry_url, "credentialKind": "password", "user": "nobody", "password": "none"}}, format="json")
    if method == "POST":
        credential = None
        if route == "datasource/secrets":
            credential = api.post(f"{PREFIX}credentials/password", body("credentials/password", "for-volume",
                                                                      project=org.a), format="json").json()
        return api.post(path, body(route, "made", project=org.a,
                                   credential_id=credential and credential["meta"]["id"]), format="json")
    if "{AssetId}" not in path:
        return api.get(path)
    made = call(api, org, "POST", PREFIX + route, registry_url)
    assert made.status_code in (201, 202), made.json()
    url = path.replace("{AssetId}", made.json()["meta"]["id"])
    if url.endswith("/repositories/tags"):
        url += "?repository=team/trainer"
    if method == "PUT":
        return api.put(url, {"meta": {"name": "renamed"}}, format="json")
    return api.generic(method, url)


def test_every_asset_operation_of_both_documents_is_answered_as_documented(client_for, org, registries):
    rows, problems = {}, []
    for version in ("2.18", "latest"):
        for tag, method, path in operations(version):
            with transaction.atomic():  # a savepoint: each call finds the same world
                response = call(client_for(org.users.admin), org, method, path, registries.open.url)
                transaction.set_rollback(True)
            body_ = response.json() if response.content else None
            found = [] if 200 <= response.status_code < 300 else [f"answered {response.status_code}: {body_}"]
            found = found or spec_errors(body_, method, path, response.status_code, versions=(version,))
            answered, total = rows.get((tag, version), (0, 0))
            rows[(tag, version)] = (answered + (not found), total + 1)
            problems += [f"[{version}] {method} {path}: {p}" for p in found]
    table = ["| Tag | 2.18 answered / in the spec | latest answered / in the spec |", "|---|---|---|"]
    for tag in TAGS:
        cells = [f"{rows[(tag, v)][0]} / {rows[(tag, v)][1]}" if (tag, v) in rows else "— / 0"
                 for v in ("2.18", "latest")]
        table.append(f"| {tag} | {cells[0]} | {cells[1]} |")
    totals = [sum(rows[k][i] for k in rows if k[1] == v) for v in ("2.18", "latest") for i in (0, 1)]
    table.append(f"| **all** | **{totals[0]} / {totals[1]}** | **{totals[2]} / {totals[3]}** |")
    (docs_output.folder() / "assets-coverage.md").write_text(
        "# Run:ai's workload asset operations answered by PaaS Studio\n\n"
        "Written by tests/assets/test_openapi_coverage.py: every operation of these tags in Run:ai's OpenAPI "
        "documents (`runai-openapi-2.18.json`, `runai-openapi-latest.json`) called on the server as a project's "
        "admin; *answered* means its success code with a body valid against that document's response schema "
        "(an operation without a JSON answer: no body).\n\n" + "\n".join(table) + "\n")
    assert not problems, "\n".join(problems)
    assert totals[0] == totals[1] and totals[2] == totals[3]
