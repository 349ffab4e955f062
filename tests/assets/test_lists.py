"""Run:ai's list parameters of the asset lists (name, scope, projectId, departmentId, clusterId,
includeDescendants, assetIds, usageInfo and the workload-type flags), bad ones a 400 naming each, and the cost of a
list: the same few queries for 1 asset as for 40."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from assets.models import Asset, AssetUse
from tests.assets.test_access import names, spread  # noqa: F401 — the fixture

pytestmark = pytest.mark.django_db
MOST = 8  # authentication and roles, the assets with their projects, their uses


def test_scope_and_ids_filter_as_run_ai_documents_them(spread, client_for, org):  # noqa: F811
    root = client_for(org.users.platform_admin)
    assert names(root, projectId=org.a.pk) == ["of-alpha", "of-research", "on-main", "tenant-wide"]
    assert names(root, projectId=org.a.pk, scope="project") == ["of-alpha"]
    assert names(root, departmentId=org.department.pk) == ["of-research", "on-main", "tenant-wide"]
    assert names(root, departmentId=org.department.pk, includeDescendants="true") == ["of-alpha", "of-beta",
                                                                                      "of-research"]
    assert names(root, clusterId=str(org.cluster.pk)) == ["on-main", "tenant-wide"]
    assert names(root, clusterId=str(org.cluster.pk), includeDescendants="true") == [
        "of-alpha", "of-beta", "of-research", "on-main"]
    assert names(root, scope="tenant") == ["tenant-wide"]
    assert names(root, name="of-beta") == ["of-beta"]
    ids = ",".join(spread[k]["meta"]["id"] for k in ("alpha", "beta"))
    assert names(root, assetIds=ids) == ["of-alpha", "of-beta"]
    # Dave (beta) asking for alpha's assets gets what he could use anyway: none of alpha's.
    assert names(client_for(org.users.other), projectId=org.a.pk) == []


def test_every_bad_list_parameter_is_named_in_one_400(client_for, org):
    response = client_for(org.users.member).get("/api/v1/asset/datasource", {
        "scope": "galaxy", "projectId": "x", "clusterId": "nope", "assetIds": "1,2", "usageInfo": "maybe",
        "complyToWorkloadType": "Batch", "departmentId": "-1"})
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {
        "scope", "projectId", "clusterId", "assetIds", "usageInfo", "complyToWorkloadType", "departmentId"}
    both = client_for(org.users.member).get("/api/v1/asset/compute?scope=project&includeDescendants=true")
    assert both.status_code == 400 and both.json()["errors"][0]["field"] == "includeDescendants"


def _assets(org, n: int, start: int) -> None:
    made = Asset.objects.bulk_create([
        Asset(kind=kind, name=f"{kind.lower()}-{start + i}", scope="project", project=org.a,
              department=org.department, cluster=org.cluster, scope_key=f"project:{org.a.pk}",
              created_by_name="alice", updated_by_name="alice", spec={"path": "/d", "claimInfo": {"size": "1Gi"}})
        for i in range(n) for kind in ("pvc", "accessKey")])
    AssetUse.objects.bulk_create([AssetUse(asset=a, consumer="training", consumer_id=f"w{a.name}",
                                           consumer_name="w") for a in made])


@pytest.mark.parametrize("url", ["/api/v1/asset/datasource/pvc?usageInfo=true", "/api/v1/asset/datasource",
                                 "/api/v1/asset/credentials?usageInfo=true", "/api/v1/asset/compute"])
def test_a_list_reads_in_the_same_few_queries_for_1_and_40_assets(url, client_for, org):
    api = client_for(org.users.member)
    _assets(org, 1, 0)
    with CaptureQueriesContext(connection) as one:
        assert api.get(url).status_code == 200
    _assets(org, 39, 1)
    with CaptureQueriesContext(connection) as many:
        answer = api.get(url)
    rows = len(answer.json()["entries"])
    assert rows in (0, 40, 80), rows
    assert len(many) == len(one) <= MOST, [q["sql"] for q in many.captured_queries]
