"""Every operation of Run:ai's asset tags (Environment, Compute, Datasources, PVC, NFS, S3, Git, HostPath, ConfigMap,
Secret, Credentials, Registry, Template, Workload templates, Datavolumes, Storage Classes, Storage Class Configuration),
read from both OpenAPI documents, called on this server (its cluster the simulated one, whose storage classes are
read): each must answer its success code
with a body valid against that document's response schema. The per-tag table, answered / in the spec, is written to
docs/assets-coverage.md (STUDIO_REFRESH_DOCS=1; else under the run's own folder, tests/docs_output)."""

import pytest
from django.db import transaction

from studio.models import Cluster
from tests import docs_output
from tests.assets import template_bodies
from tests.assets.bodies import body
from tests.conftest import SIM_TOKEN
from tests.runai_spec import document, spec_errors

pytestmark = pytest.mark.django_db
TAGS = ("Environment", "Compute", "Datasources", "PVC", "NFS", "S3", "Git", "HostPath", "ConfigMap", "Secret",
        "Credentials", "Registry", "Template", "Workload templates", "Datavolumes", "Storage Classes",
        "Storage Class Configuration")
OTHER_TAGS = ("Datavolumes", "Storage Classes", "Storage Class Configuration")
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


def call_other(api, org, version: str, method: str, path: str):
    """Data volumes and storage classes: each operation with the parameters and body it needs."""
    cluster = str(org.cluster.pk)
    if path.startswith("/api/v1/datavolumes"):
        if method == "POST":
            return api.post(path, {"name": "results", "projectId": str(org.a.pk), "originPvcName": "out"},
                            format="json")
        if path.endswith(("/datavolumes", "/count")):
            return api.get(path, {"requestType": "Originated"})
        if path.endswith("/name-availability"):
            return api.get(path, {"dataName": "free", "clusterId": cluster})
        made = call_other(api, org, version, "POST", "/api/v1/datavolumes")
        assert made.status_code == 201, made.json()
        url = path.replace("{datavolumeId}", made.json()["id"])
        if method == "PATCH" and url.endswith("/sharedScopes"):
            return api.patch(url, {"add": [{"scopeType": "department", "scopeId": str(org.department.pk)}]},
                             format="json")
        if method == "PATCH":
            return api.patch(url, {"description": "Changed."}, format="json")
        return api.generic(method, url)
    if "storage-classes" in path:
        query = {"includeNone": "false"} if version == "latest" and "{uuid}" in path else {}
        return api.get(path.replace("{uuid}", cluster), query if "{uuid}" in path else {"clusterId": cluster})
    base = "/api/v1/storage-class-configuration"
    if method == "POST":
        return api.post(base, {"scopeType": "cluster", "scopeId": cluster, "name": "standard",
                               "permissions": {"allowDataSharing": True}}, format="json")
    if method == "GET" and path == base:
        return api.get(path)
    made = call_other(api, org, version, "POST", base)
    assert made.status_code == 201, made.json()
    url = path.replace("{id}", made.json()["id"])
    if method in ("PUT", "PATCH"):
        return api.generic(method, url, '{"permissions": {"allowedForWorkloads": true}}',
                           content_type="application/json")
    return api.generic(method, url)


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


def test_every_asset_operation_of_both_documents_is_answered_as_documented(client_for, org, registries, kubesim):
    Cluster.objects.filter(pk=org.cluster.pk).update(api_server_url=kubesim.url, token=SIM_TOKEN, verify_tls=False)
    org.cluster.refresh_from_db()
    rows, problems = {}, []
    for version in ("2.18", "latest"):
        for tag, method, path in operations(version):
            # Storage classes are configured by platform admins (Run:ai's System administrator).
            caller = client_for(org.users.platform_admin if tag == "Storage Class Configuration" else org.users.admin)
            with transaction.atomic():  # a savepoint: each call finds the same world
                response = (call_other(caller, org, version, method, path) if tag in OTHER_TAGS
                            else call(caller, org, method, path, registries.open.url))
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
        "admin (the storage class configuration as a platform admin; the cluster's storage classes read from the "
        "simulated cluster); *answered* means its success code with a body valid against that document's response schema "
        "(an operation without a JSON answer: no body).\n\n" + "\n".join(table) + "\n")
    assert not problems, "\n".join(problems)
    assert totals[0] == totals[1] and totals[2] == totals[3]
