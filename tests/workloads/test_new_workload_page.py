"""The New workload page (workloads/asset_views.py) over HTTP: the assets a project may use as cards, every
problem at once beside its choice, the preview (nothing created) and the submit through the workloads API's
service, with the assets' uses recorded and released when the workload is deleted."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assets.models import AssetUse
from tests.assets.bodies import body
from workloads.models import Workload
from workloads.services import workload_delete

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(client_for, org):
    """An environment and a compute of alpha, a tenant compute, an NFS source and a registry credential of alpha;
    beta's own environment, which alpha may not use."""
    def make(path, name, user=org.users.admin, **kwargs):
        sent = body(path, name, **kwargs)
        response = client_for(user).post(f"/api/v1/asset/{path}", sent, format="json")
        assert response.status_code == 202, response.json()
        return response.json()["meta"]["id"]

    return {"env": make("environment", "pytorch", project=org.a),
            "compute": make("compute", "half-gpu", project=org.a),
            "tenant-compute": make("compute", "cpu-only", scope="tenant", user=org.users.platform_admin),
            "nfs": make("datasource/nfs", "datasets", project=org.a),
            "registry": make("credentials/docker-registry", "registry", project=org.a),
            "beta-env": make("environment", "beta-env", project=org.b, user=org.users.platform_admin)}


@pytest.fixture
def member(client, org):
    client.force_login(org.users.member)
    session = client.session
    session["project_id"] = org.a.pk
    session.save()
    return client


def test_the_cards_are_what_the_project_may_use(member, world, org):
    text = member.get("/workloads/new").content.decode()
    for name in ("pytorch", "half-gpu", "cpu-only", "datasets", "registry"):
        assert f'data-asset="{name}"' in text
    assert "beta-env" not in text
    assert 'type="radio" name="environment"' in text and 'type="checkbox" name="datasources"' in text
    chosen = member.get(f"/workloads/new?compute={world['tenant-compute']}").content.decode()
    assert re.search(rf'value="{world["tenant-compute"]}" checked', chosen)  # from the catalog's SKU


def test_every_problem_is_shown_at_once_beside_its_choice(member, world, org):
    page = member.post("/workloads/new", {"project": org.a.pk, "kind": "training", "name": "Bad Name",
                                          "datasources": [world["beta-env"]], "action": "submit"})
    text = page.content.decode()
    assert page.status_code == 200 and "4 problems to fix" in text
    assert 'id="environment-err"' in text and "Choose an environment." in text
    assert 'id="compute-err"' in text and "Choose a compute resource." in text
    assert 'id="datasources-err"' in text and "not one the project may use" in text
    assert 'id="name-err"' in text and "lowercase letters" in text
    assert not Workload.objects.exists()


def test_the_requests_own_problems_are_filed_on_the_asset_that_set_them(member, world, org, client_for):
    bad_compute = client_for(org.users.admin).post("/api/v1/asset/compute", {
        "meta": {"name": "tiny-portion", "scope": "project", "projectId": org.a.pk},
        "spec": {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.001}},
        format="json").json()["meta"]["id"]
    text = member.post("/workloads/new", {"project": org.a.pk, "kind": "training", "name": "job",
                                          "environment": world["env"], "compute": bad_compute,
                                          "action": "submit"}).content.decode()
    assert 'id="compute-err"' in text and "compute.gpuPortionRequest: Must be at least 0.01" in text


def test_an_environments_probe_without_host_or_scheme_reaches_the_objects(member, world, org, client_for):
    """Run:ai's probes leave host and scheme out (the pod's IP, HTTP): the workloads API takes them so."""
    env = client_for(org.users.admin).post("/api/v1/asset/environment", body("environment", "probed", project=org.a),
                                           format="json").json()["meta"]["id"]
    text = member.post("/workloads/new", {"project": org.a.pk, "kind": "workspace", "name": "nb",
                                          "environment": env, "compute": world["compute"],
                                          "action": "preview"}).content.decode()
    assert 'id="environment-err"' not in text and "Preview of nb" in text and "readinessProbe" in text


def test_preview_shows_the_objects_and_creates_nothing(member, world, org):
    page = member.post("/workloads/new", {"project": org.a.pk, "kind": "training", "name": "job-1",
                                          "environment": world["env"], "compute": world["compute"],
                                          "datasources": [world["nfs"]], "credentials": [world["registry"]],
                                          "action": "preview"})
    text = page.content.decode()
    assert page.status_code == 200 and "Preview of job-1" in text and "nothing created" in text
    assert "<strong>Job</strong> job-1" in text
    assert "nvcr.io/nvidia/pytorch:24.01-py3" in text and "nfs.example.com" in text
    # the registry credential's Secret (made by the credentials' sync) as an image pull secret
    assert f"studio-credential-{world['registry']}" in text
    assert not Workload.objects.exists()


def test_submit_makes_the_workload_of_the_assets_and_records_their_use(member, world, org):
    page = member.post("/workloads/new", {"project": org.a.pk, "kind": "training", "name": "job-2",
                                          "environment": world["env"], "compute": world["compute"],
                                          "datasources": [world["nfs"]], "credentials": [world["registry"]],
                                          "action": "submit"})
    workload = Workload.objects.get(name="job-2")
    assert page.status_code == 302 and page["Location"] == f"/workloads/{workload.pk}"
    spec = workload.spec
    assert spec["image"] == "nvcr.io/nvidia/pytorch:24.01-py3" and spec["command"] == "python"
    assert spec["compute"]["gpuPortionRequest"] == 0.5 and workload.kind == "training"
    assert spec["storage"]["nfs"][0]["server"] == "nfs.example.com"
    assert spec["imagePullSecrets"][0]["name"] == f"studio-credential-{world['registry']}"
    assert {u.asset.name for u in AssetUse.objects.filter(consumer_id=str(workload.pk))} == {
        "pytorch", "half-gpu", "datasets", "registry"}
    listed = member.get("/assets/environments").content.decode()
    assert "Used by training <strong>job-2</strong>" in listed
    workload_delete(workload=workload, user=org.users.member)
    assert not AssetUse.objects.filter(consumer_id=str(workload.pk)).exists()


def test_a_viewer_or_a_stranger_may_not_submit_in_alpha(client, world, org):
    client.force_login(org.users.viewer)
    assert "No project to submit in" in client.get("/workloads/new").content.decode()
    client.force_login(org.users.other)  # beta's member: alpha is not offered, and naming it is refused
    text = client.post("/workloads/new", {"project": org.a.pk, "kind": "training", "name": "x",
                                          "environment": world["env"], "compute": world["compute"],
                                          "action": "submit"}).content.decode()
    assert "Choose a project where you may submit workloads." in text and "pytorch" not in text
    assert not Workload.objects.exists()


def test_the_page_reads_in_the_same_queries_for_few_and_many_assets(member, world, org, client_for,
                                                                      django_assert_num_queries):
    def department_compute(name):
        sent = {"meta": {"name": name, "scope": "department", "departmentId": str(org.department.pk)},
                "spec": {"gpuDevicesRequest": 1}}
        assert client_for(org.users.platform_admin).post("/api/v1/asset/compute", sent,
                                                         format="json").status_code == 202

    department_compute("dept-0")
    member.get("/workloads/new")
    with CaptureQueriesContext(connection) as few:
        assert member.get("/workloads/new").status_code == 200
    few = len(few)  # read now: each later request clears the connection's log
    for i in range(1, 20):
        department_compute(f"dept-{i}")
    with django_assert_num_queries(few):
        assert 'data-asset="dept-19"' in member.get("/workloads/new").content.decode()
    with CaptureQueriesContext(connection) as catalog:
        assert 'data-sku="dept-19"' in member.get("/catalog").content.decode()
    catalog = len(catalog)
    department_compute("dept-20")
    with django_assert_num_queries(catalog):
        member.get("/catalog")


def test_a_catalog_template_opens_new_workload_with_its_assets_and_makes_the_workload_from_it(member, world, org,
                                                                                             client_for):
    """Run:ai's templates are launched from the catalog as the SKUs are: New workload with the template's
    environment, compute and data sources chosen; the workload is made from the template (its own fields under
    the chosen assets', its provenance kept), as `templateId` makes it through the API."""
    made = client_for(org.users.admin).post("/api/v1/asset/workload-template", {
        "meta": {"name": "train-tpl", "scope": "project", "projectId": org.a.pk},
        "spec": {"assets": {"environment": world["env"], "compute": world["compute"],
                            "datasources": [{"id": world["nfs"], "kind": "nfs"}]},
                 "specificEnv": {"environmentVariables": [{"name": "FROM_TEMPLATE", "value": "yes"}]}}}, format="json")
    assert made.status_code == 202, made.json()
    template = made.json()["meta"]["id"]
    catalog = member.get("/catalog").content.decode()
    assert 'data-template="train-tpl"' in catalog and f"template={template}" in catalog
    page = member.get("/workloads/new", {"template": template, "project": org.a.pk, "kind": "training"})
    text = page.content.decode()
    assert 'data-testid="from-template"' in text
    for asset in ("env", "compute", "nfs"):
        assert f'value="{world[asset]}" checked' in text
    submitted = member.post("/workloads/new", {"project": org.a.pk, "kind": "training", "name": "from-tpl",
                                               "template": template, "environment": world["env"],
                                               "compute": world["compute"], "datasources": [world["nfs"]],
                                               "action": "submit"})
    workload = Workload.objects.get(name="from-tpl")
    assert submitted.status_code == 302
    assert str(workload.template_id) == template
    assert {v["name"] for v in workload.spec["environmentVariables"]} == {"EPOCHS", "FROM_TEMPLATE"}
    outsider = member.get("/workloads/new", {"template": world["beta-env"], "project": org.a.pk}).content.decode()
    assert "No such template for this project." in outsider
