"""Bodies and calls of Run:ai's template operations (tags Template and Workload templates) for the tests: an
environment, a compute and a PVC data source, and templates of them in both APIs' shapes."""

from tests.assets.bodies import body

ASSET_TEMPLATE = "/api/v1/asset/workload-template"
TEMPLATES = "/api/v1/workload-templates"
PLURALS = ("workspaces", "trainings", "distributed", "inferences")


def make_assets(api, project) -> dict:
    """An environment, a compute and a PVC of `project`, made through the API: {kind: answer}."""
    made = {}
    for path in ("environment", "compute", "datasource/pvc"):
        response = api.post(f"/api/v1/asset/{path}", body(path, f"tpl-{path.split('/')[-1]}", project=project),
                            format="json")
        assert response.status_code == 202, response.json()
        made[path.split("/")[-1]] = response.json()
    return made


def asset_ids(made: dict) -> dict:
    return {"environment": made["environment"]["meta"]["id"], "compute": made["compute"]["meta"]["id"],
            "datasources": [{"id": made["pvc"]["meta"]["id"], "kind": "pvc"}]}


def asset_template_body(made: dict, name: str, project, **specific) -> dict:
    """2.18's WorkloadTemplateCreationRequest."""
    return {"meta": {"name": name, "scope": "project", "projectId": project.pk},
            "spec": {"assets": asset_ids(made), "specificEnv": specific or {"args": "--epochs 2"}}}


def typed_template_body(made: dict | None, name: str, project, **spec) -> dict:
    """latest's <Type>TemplateCreationRequest."""
    answer = {"meta": {"name": name, "scopeType": "project", "scopeId": str(project.pk)},
              "spec": spec or {"args": "--epochs 3"}}
    if made:
        answer["assets"] = asset_ids(made)
    return answer


def call(api, project, method: str, path: str):
    """Call one documented template operation with what it needs (assets, a template of the route's type)."""
    made = make_assets(api, project)
    if path.startswith(ASSET_TEMPLATE):
        if method == "POST":
            return api.post(path, asset_template_body(made, "made", project), format="json")
        if "{AssetId}" not in path:
            return api.get(path)
        created = api.post(ASSET_TEMPLATE, asset_template_body(made, "made", project), format="json")
        assert created.status_code == 202, created.json()
        url = path.replace("{AssetId}", created.json()["meta"]["id"])
        if method == "PUT":
            return api.put(url, {"meta": {"name": "renamed"}, "spec": {"assets": asset_ids(made)}}, format="json")
        return api.generic(method, url)
    rest = path.removeprefix(TEMPLATES).strip("/")
    plural = rest.split("/")[0] if rest.split("/")[0] in PLURALS else "trainings"
    if method == "POST":
        return api.post(path, typed_template_body(made, "made", project), format="json")
    if rest == "name-availability":
        return api.get(path, {"templateName": "free", "scopeType": "project", "scopeId": str(project.pk)})
    if "{templateId}" not in path:
        return api.get(path)
    created = api.post(f"{TEMPLATES}/{plural}", typed_template_body(made, "made", project), format="json")
    assert created.status_code == 202, created.json()
    url = path.replace("{templateId}", created.json()["meta"]["id"])
    if method == "PUT":
        return api.put(url, typed_template_body(made, "renamed", project, image="python:3.12"), format="json")
    if method == "PATCH":
        return api.patch(url, {"spec": {"command": "python"}, "fieldsToClear": ["spec.args"]}, format="json")
    return api.generic(method, url)
