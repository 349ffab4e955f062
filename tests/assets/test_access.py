"""Who reads, creates, changes and deletes assets at each scope, from Run:ai's roles: a project's asset is a 404 to
another project's member; its members read it and the assets of their department, cluster and tenant; only the
admins of a scope (and the asset administrators, for their kinds) create there; a researcher's private asset is
its own alone."""

import pytest

from studio.models import AccessRule, Level, Role
from tests.assets.bodies import body
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


def grant(user, role: str, scope: str, row=None):
    AccessRule.objects.create(subject_type="user", subject_id=user.username, user=user,
                              role=Role.objects.get(name=role), scope_type=scope,
                              scope_id=str(row.pk) if row is not None else "1",
                              **({scope: row} if row is not None else {}))


def names(api, url="/api/v1/asset/compute", **params):
    response = api.get(url, params)
    assert response.status_code == 200, response.json()
    return sorted(e["meta"]["name"] for e in response.json()["entries"])


@pytest.fixture
def spread(make_asset, org):
    """A compute asset at every scope: the tenant's, the cluster's, the department's, alpha's and beta's."""
    root = org.users.platform_admin
    return {
        "tenant": make_asset("compute", "tenant-wide", user=root, scope="tenant"),
        "cluster": make_asset("compute", "on-main", user=root, scope="cluster", clusterId=str(org.cluster.pk)),
        "department": make_asset("compute", "of-research", user=root, scope="department",
                                 departmentId=str(org.department.pk)),
        "alpha": make_asset("compute", "of-alpha", user=root, project=org.a),
        "beta": make_asset("compute", "of-beta", user=root, project=org.b),
    }


def test_a_member_reads_its_projects_assets_and_those_above_not_another_projects(spread, client_for, org):
    bob, dave = client_for(org.users.member), client_for(org.users.other)
    assert names(bob) == ["of-alpha", "of-research", "on-main", "tenant-wide"]
    assert names(dave) == ["of-beta", "of-research", "on-main", "tenant-wide"]
    assert names(client_for(org.users.viewer)) == names(bob)
    beta = f"/api/v1/asset/compute/{spread['beta']['meta']['id']}"
    for verb in ("get", "delete"):
        assert getattr(bob, verb)(beta).status_code == 404
    assert bob.put(beta, {"meta": {"name": "x"}}, format="json").status_code == 404
    assert bob.get(f"/api/v1/asset/environment/{spread['alpha']['meta']['id']}").status_code == 404  # other kind
    assert names(client_for(UserFactory(username="nobody"))) == []  # no role: not even the tenant's
    assert len(names(client_for(org.users.platform_admin))) == 5


def test_only_the_admins_of_a_scope_change_its_assets(spread, client_for, org):
    lou = UserFactory(username="lou")
    grant(lou, "L2 researcher", "project", org.a)  # Run:ai's researcher "without asset management"
    lou, alice = client_for(lou), client_for(org.users.admin)
    alpha = f"/api/v1/asset/compute/{spread['alpha']['meta']['id']}"
    assert lou.post("/api/v1/asset/compute", body("compute", "mine", project=org.a), format="json").status_code == 403
    assert lou.delete(alpha).status_code == 403
    assert lou.put(alpha, {"meta": {"name": "x"}}, format="json").status_code == 403
    # Alice (Editor of alpha) manages alpha's assets, reads the ones above, and changes none of them.
    assert alice.put(alpha, {"meta": {"name": "alpha-small"}}, format="json").status_code == 202
    for scope in ("tenant", "cluster", "department"):
        assert alice.delete(f"/api/v1/asset/compute/{spread[scope]['meta']['id']}").status_code == 403
    refused = alice.post("/api/v1/asset/compute", body("compute", "for-all", scope="tenant"), format="json")
    assert refused.status_code == 403 and refused.json()["code"] == 403
    # Beta is not hers: creating there names the project as unknown, as for a project that does not exist.
    other = alice.post("/api/v1/asset/compute", body("compute", "b", project=org.b), format="json")
    assert other.status_code == 400 and other.json()["errors"][0]["field"] == "meta.projectId"
    assert alice.delete(alpha).status_code == 202


def test_a_department_administrator_manages_its_department_and_its_projects(client_for, org):
    dana = UserFactory(username="dana")
    grant(dana, "Department administrator", "department", org.department)
    api = client_for(dana)
    made = api.post("/api/v1/asset/environment", body("environment", "dept-env", scope="department",
                                                      departmentId=str(org.department.pk)), format="json")
    assert made.status_code == 202, made.json()
    assert api.post("/api/v1/asset/compute", body("compute", "c", project=org.b), format="json").status_code == 202
    assert api.post("/api/v1/asset/compute", body("compute", "c", scope="cluster", clusterId=str(org.cluster.pk)),
                    format="json").status_code == 403
    # Alpha's members read the department's environment.
    assert names(client_for(org.users.member), "/api/v1/asset/environment") == ["dept-env"]


@pytest.mark.parametrize("role,allowed,refused", [
    ("Environments administrator", "environment", "compute"),
    ("Compute resource administrator", "compute", "datasource/nfs"),
    ("Data source administrator", "datasource/nfs", "credentials/password"),
    ("Credentials administrator", "credentials/password", "environment"),
])
def test_an_asset_administrator_manages_its_kinds_only(role, allowed, refused, client_for, org):
    erik = UserFactory(username="erik")
    grant(erik, role, "project", org.a)
    api = client_for(erik)
    assert api.post(f"/api/v1/asset/{allowed}", body(allowed, "ok", project=org.a), format="json").status_code == 202
    assert api.post(f"/api/v1/asset/{refused}", body(refused, "no", project=org.a), format="json").status_code == 403


def test_a_tenant_administrator_manages_every_scope(client_for, org):
    sam = UserFactory(username="sam")
    grant(sam, "System administrator", "tenant")
    api = client_for(sam)
    for scope, ids in (("tenant", {}), ("cluster", {"clusterId": str(org.cluster.pk)}),
                       ("department", {"departmentId": str(org.department.pk)})):
        response = api.post("/api/v1/asset/compute", body("compute", f"at-{scope}", scope=scope, **ids), format="json")
        assert response.status_code == 202, response.json()


def test_a_private_asset_is_its_creators_alone(client_for, org):
    bob = client_for(org.users.member)
    made = bob.post("/api/v1/asset/credentials/password", body("credentials/password", "my-git", project=org.a,
                                                               private=True), format="json")
    assert made.status_code == 202 and made.json()["meta"]["private"] is True
    url = f"/api/v1/asset/credentials/password/{made.json()['meta']['id']}"
    assert bob.get(url).status_code == 200
    assert client_for(org.users.admin).get(url).status_code == 404  # not even alpha's admin
    assert names(client_for(org.users.admin), "/api/v1/asset/credentials/password") == []
    # Another member may use the same name for a private asset of its own.
    ann = UserFactory(username="ann")
    MembershipFactory(user=ann, project=org.a, role=Level.MEMBER)
    assert client_for(ann).post("/api/v1/asset/credentials/password", body(
        "credentials/password", "my-git", project=org.a, private=True), format="json").status_code == 202
    assert client_for(org.users.viewer).post("/api/v1/asset/credentials/password", body(
        "credentials/password", "v", project=org.a, private=True), format="json").status_code == 403
    assert bob.delete(url).status_code == 202


def test_a_project_admin_may_not_place_an_asset_in_beta_by_naming_its_cluster(client_for, org):
    response = client_for(org.users.admin).post("/api/v1/asset/compute", body(
        "compute", "c", project=org.a, clusterId="7c0c1a49-62f6-4a55-8a2e-0c55a3e8a1b2"), format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "meta.clusterId"


def test_an_l1_researcher_manages_its_projects_environments_compute_and_data_not_credentials(spread, client_for,
                                                                                               org):
    bob = client_for(org.users.member)  # L1 researcher of alpha
    made = bob.post("/api/v1/asset/compute", body("compute", "bobs", project=org.a), format="json")
    assert made.status_code == 202, made.json()
    alpha = f"/api/v1/asset/compute/{spread['alpha']['meta']['id']}"
    assert bob.put(alpha, {"meta": {"name": "alpha-renamed"}}, format="json").status_code == 202
    assert bob.post("/api/v1/asset/compute", body("compute", "b", project=org.b), format="json").status_code == 400
    for scope in ("tenant", "cluster", "department"):
        assert bob.delete(f"/api/v1/asset/compute/{spread[scope]['meta']['id']}").status_code == 403
    credential = bob.post("/api/v1/asset/credentials/password", body("credentials/password", "bobs-git", project=org.a),
                          format="json")
    assert credential.status_code == 403, credential.json()
