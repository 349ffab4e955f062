import pytest

from studio.models import AccessRule, AuditEvent, Cluster, Department, Project
from tests.factories import ProjectFactory
from tests.runai_spec import assert_matches_spec

pytestmark = pytest.mark.django_db


def test_platform_admin_crud_of_everything(client_for, org):
    api = client_for(org.users.platform_admin)
    cluster = api.post(
        "/api/v1/clusters",
        {"name": "gpu-east", "apiServerUrl": "https://k8s.example.com:6443", "token": "s3cret"},
        format="json",
    )
    assert cluster.status_code == 201, cluster.json()
    cluster_id = cluster.json()["clusterId"]
    assert "token" not in cluster.json()
    assert Cluster.objects.get(pk=cluster_id).token == "s3cret"
    assert api.patch(f"/api/v1/clusters/{cluster_id}", {"verifyTls": False}, format="json").json()["clusterId"] == cluster_id

    dept = api.post("/api/v1/org-unit/departments", {"name": "vision"}, format="json").json()
    project = api.post(
        "/api/v1/org-unit/projects",
        {"name": "cv-team", "departmentId": dept["id"], "clusterId": cluster_id,
         "resources": {"gpu": {"deserved": 2, "limit": 4}}},
        format="json",
    )
    assert project.status_code == 201, project.json()
    body = project.json()
    assert body["namespace"] == "studio-cv-team"
    # Run:ai's per-pool array; CONTRACT's totals as its one pool-less entry (studio.org.units)
    assert body["resources"] == [{"nodePool": None, "gpu": {"deserved": 2.0, "limit": 4.0, "overQuotaWeight": None}}]
    assert body["departmentId"] == dept["id"] == body["parentId"]  # one type: a string, as Run:ai's parentId
    pid = body["id"]
    assert api.get(f"/api/v1/org-unit/projects/{pid}").json()["name"] == "cv-team"
    updated = api.patch(f"/api/v1/org-unit/projects/{pid}", {"resources": {"gpu": {"deserved": 3, "limit": 6}}}, format="json")
    assert updated.json()["resources"][0]["gpu"] == {"deserved": 3.0, "limit": 6.0, "overQuotaWeight": None}

    member = api.post(f"/api/v1/org-unit/projects/{pid}/members", {"username": "dave", "role": "viewer"}, format="json")
    assert member.status_code == 201 and member.json()["role"] == "viewer"
    uid = member.json()["userId"]
    assert api.put(f"/api/v1/org-unit/projects/{pid}/members/{uid}", {"role": "admin"}, format="json").json()["role"] == "admin"
    assert api.get(f"/api/v1/org-unit/projects/{pid}/members").json()["members"][0]["username"] == "dave"
    assert api.delete(f"/api/v1/org-unit/projects/{pid}/members/{uid}").status_code == 204

    assert api.delete(f"/api/v1/org-unit/projects/{pid}").status_code == 204
    assert api.delete(f"/api/v1/org-unit/departments/{dept['id']}").status_code == 204
    assert api.delete(f"/api/v1/clusters/{cluster_id}").status_code == 204
    assert not Project.objects.filter(pk=pid).exists() and not Department.objects.filter(pk=dept["id"]).exists()

    actions = list(AuditEvent.objects.filter(object_type="studio.project").values_list("action", flat=True))
    assert sorted(actions) == ["create", "delete", "update"]
    audit = api.get("/api/v1/audit-events?filterBy=objectType==studio.cluster").json()["auditEvents"]
    assert [e["action"] for e in audit] == ["delete", "update", "create"]
    assert audit[2]["actor"] == "root" and audit[2]["changes"]["token"] == [None, "***"]
    assert audit[1]["changes"]["verify_tls"] == [True, False]


def test_project_name_breaking_the_rules_is_400_naming_the_field(client_for, org):
    api = client_for(org.users.platform_admin)
    response = api.post(
        "/api/v1/org-unit/projects",
        {"name": "Bad_Name", "departmentId": org.department.id, "clusterId": str(org.cluster.id)},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == 400 and body["message"]
    assert [e["field"] for e in body["errors"]] == ["name"]


def test_every_problem_is_named_at_once(client_for, org):
    response = client_for(org.users.platform_admin).post(
        "/api/v1/org-unit/projects",
        {"name": "-x", "departmentId": 999, "clusterId": "nope", "color": "red",
         "resources": {"gpu": {"deserved": -1}}},
        format="json",
    )
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    # Unknown fields and bad values together: the contract lists every problem at once.
    assert fields == {"color", "name", "departmentId", "clusterId", "resources.gpu.deserved"}
    response = client_for(org.users.platform_admin).post(
        "/api/v1/org-unit/projects",
        {"name": "-x", "departmentId": 999, "clusterId": "nope", "resources": {"gpu": {"deserved": -1}}},
        format="json",
    )
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"name", "departmentId", "clusterId", "resources.gpu.deserved"}


def test_gpu_limit_below_deserved_is_400(client_for, org):
    response = client_for(org.users.platform_admin).patch(
        f"/api/v1/org-unit/projects/{org.a.id}", {"resources": {"gpu": {"deserved": 5, "limit": 2}}}, format="json"
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "resources.gpu.limit"


def test_duplicate_project_name_is_409(client_for, org):
    response = client_for(org.users.platform_admin).post(
        "/api/v1/org-unit/projects",
        {"name": "alpha", "departmentId": org.department.id, "clusterId": str(org.cluster.id)},
        format="json",
    )
    assert response.status_code in (400, 409)
    assert response.json()["code"] == response.status_code


def test_member_of_a_asking_for_b_is_404(client_for, org):
    api = client_for(org.users.member)
    assert api.get(f"/api/v1/org-unit/projects/{org.a.id}").status_code == 200
    response = api.get(f"/api/v1/org-unit/projects/{org.b.id}")
    assert response.status_code == 404
    assert response.json() == {"code": 404, "message": "The specified resource was not found."}
    assert api.get(f"/api/v1/org-unit/projects/{org.b.id}/members").status_code == 404
    assert api.patch(f"/api/v1/org-unit/projects/{org.b.id}", {"name": "beta"}, format="json").status_code == 404
    assert [p["name"] for p in api.get("/api/v1/org-unit/projects").json()["projects"]] == ["alpha"]


def test_viewer_adding_a_member_is_403(client_for, org):
    response = client_for(org.users.viewer).post(
        f"/api/v1/org-unit/projects/{org.a.id}/members", {"username": "dave", "role": "member"}, format="json"
    )
    assert response.status_code == 403
    assert response.json()["code"] == 403


def test_project_admin_manages_members_but_not_the_project(client_for, org):
    api = client_for(org.users.admin)
    added = api.post(f"/api/v1/org-unit/projects/{org.a.id}/members", {"username": "dave", "role": "viewer"}, format="json")
    assert added.status_code == 201
    assert AccessRule.objects.get(project=org.a, user=org.users.other).role.name == "Viewer"
    assert api.patch(f"/api/v1/org-unit/projects/{org.a.id}", {"resources": {"gpu": {"deserved": 1}}}, format="json").status_code == 403
    assert api.post("/api/v1/clusters", {"name": "x", "apiServerUrl": "https://x"}, format="json").status_code == 403


def test_members_see_only_clusters_and_departments_of_their_projects(client_for, org):
    api = client_for(org.users.member)
    clusters = api.get("/api/v1/clusters")  # Run:ai's bare array of DisplayedCluster
    assert [c["name"] for c in clusters.json()] == ["main"]
    assert_matches_spec(clusters, "get", "/api/v1/clusters")
    assert api.get("/api/v1/audit-events").status_code == 403
    outsider = client_for(type(org.users.member).objects.create_user("eve", password="x"))
    assert outsider.get("/api/v1/clusters").json() == []
    assert outsider.get(f"/api/v1/clusters/{org.cluster.id}").status_code == 404


def test_project_cluster_cannot_change(client_for, org):
    other = Cluster.objects.create(name="other", api_server_url="http://x")
    response = client_for(org.users.platform_admin).patch(
        f"/api/v1/org-unit/projects/{org.a.id}", {"clusterId": str(other.id)}, format="json"
    )
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "clusterId"


@pytest.mark.parametrize("path,key", [
    ("/api/v1/org-unit/projects", "projects"),
    ("/api/v1/org-unit/departments", "departments"),
    ("/api/v1/clusters", None),
    ("/api/v1/audit-events", "auditEvents"),
])
def test_list_query_count_is_the_same_for_1_and_50_rows(client_for, org, django_assert_num_queries, path, key):
    api = client_for(org.users.platform_admin)

    def count_queries():
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as ctx:
            assert api.get(path + "?limit=100").status_code == 200
        return len(ctx.captured_queries)

    few = count_queries()
    for i in range(50):
        ProjectFactory(name=f"bulk{i}", department__name=f"bulkdept{i}", cluster__name=f"bulkcluster{i}")
    many = count_queries()
    assert few == many
    with django_assert_num_queries(few):
        body = api.get(path + "?limit=100").json()
        assert len(body[key] if key else body) >= 50 or key == "auditEvents"


def test_members_list_query_count_is_flat(client_for, org, django_assert_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from tests.factories import MembershipFactory

    api = client_for(org.users.platform_admin)
    with CaptureQueriesContext(connection) as one_row:
        assert len(api.get(f"/api/v1/org-unit/projects/{org.b.id}/members").json()["members"]) == 1
    for _ in range(50):
        MembershipFactory(project=org.b)
    with django_assert_num_queries(len(one_row.captured_queries)):
        assert len(api.get(f"/api/v1/org-unit/projects/{org.b.id}/members?limit=100").json()["members"]) == 51


def test_etag_and_if_match_on_project_updates(client_for, org):
    api = client_for(org.users.platform_admin)
    url = f"/api/v1/org-unit/projects/{org.a.id}"
    etag = api.get(url)["ETag"]
    assert etag
    first = api.patch(url, {"resources": {"gpu": {"deserved": 2, "limit": 8}}}, format="json", HTTP_IF_MATCH=etag)
    assert first.status_code == 200 and first["ETag"] != etag
    stale = api.patch(url, {"resources": {"gpu": {"deserved": 3, "limit": 8}}}, format="json", HTTP_IF_MATCH=etag)
    assert stale.status_code == 412
    assert stale.json()["code"] == 412
    assert api.get(url).json()["resources"][0]["gpu"]["deserved"] == 2.0
    assert api.patch(url, {"resources": {"gpu": {"deserved": 3, "limit": 8}}}, format="json",
                     HTTP_IF_MATCH=first["ETag"]).status_code == 200
    assert api.delete(url, HTTP_IF_MATCH=etag).status_code == 412
