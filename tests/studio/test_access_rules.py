"""Access rules as the way roles are granted: scopes cover what they should, through HTTP, in few queries."""

import pytest
from django.contrib.auth.models import Group
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from studio.iam.permissions import project_role
from studio.models import AccessRule, Role, is_platform_admin
from tests.factories import AccessRuleFactory, DepartmentFactory, ProjectFactory, UserFactory


def project_names(api):
    return sorted(p["name"] for p in api.get("/api/v1/org-unit/projects").json()["projects"])


def test_a_department_rule_covers_its_projects_and_no_other(client_for, org):
    elsewhere = ProjectFactory(name="gamma", cluster=org.cluster, department=DepartmentFactory(name="sales"))
    head = UserFactory(username="erin")
    AccessRuleFactory(user=head, role=Role.objects.get(name="Department administrator"), project=None,
                      scope_type="department", department=org.department)
    api = client_for(head)
    assert project_names(api) == ["alpha", "beta"]
    assert project_role(head, org.a) == "admin" and project_role(head, elsewhere) is None
    assert api.get(f"/api/v1/org-unit/projects/{elsewhere.pk}").status_code == 404
    # An admin-level role on a department lets its holder manage the members of its projects.
    added = api.post(f"/api/v1/org-unit/projects/{org.b.pk}/members", {"username": "carol", "role": "viewer"},
                     format="json")
    assert added.status_code == 201, added.content
    assert not is_platform_admin(head)


def test_a_tenant_viewer_sees_every_project_but_changes_nothing(client_for, org):
    auditor = UserFactory(username="frank")
    AccessRuleFactory(user=auditor, role=Role.objects.get(name="Viewer"), project=None, scope_type="tenant")
    api = client_for(auditor)
    assert project_names(api) == ["alpha", "beta"]
    assert project_role(auditor, org.b) == "viewer"
    spec = {"name": "x", "projectId": str(org.a.pk), "clusterId": str(org.cluster.pk), "spec": {"image": "busybox"}}
    assert api.post("/api/v1/workloads/trainings", spec, format="json").status_code == 403
    assert not is_platform_admin(auditor)


def test_a_tenant_admin_role_is_a_platform_admin(client_for, org):
    boss = UserFactory(username="grace")
    AccessRuleFactory(user=boss, role=Role.objects.get(name="System administrator"), project=None, scope_type="tenant")
    assert is_platform_admin(boss)
    assert client_for(boss).post("/api/v1/org-unit/departments", {"name": "ops"}, format="json").status_code == 201


def test_a_group_rule_applies_to_the_groups_members(client_for, org):
    team = Group.objects.create(name="vision-team")
    user = UserFactory(username="heidi")
    user.groups.add(team)
    AccessRule.objects.create(subject_type="group", subject_id="vision-team", role=Role.objects.get(name="L1 researcher"),
                              scope_type="project", scope_id=str(org.b.pk), project=org.b)
    assert project_names(client_for(user)) == ["beta"]
    assert project_role(user, org.b) == "member"


def test_the_highest_of_several_rules_wins_and_members_show_one_row(client_for, org):
    AccessRuleFactory(user=org.users.viewer, role=Role.objects.get(name="Editor"), project=org.a)
    assert project_role(org.users.viewer, org.a) == "admin"
    members = client_for(org.users.admin).get(f"/api/v1/org-unit/projects/{org.a.pk}/members").json()["members"]
    carol = [m for m in members if m["username"] == "carol"]
    assert len(carol) == 1 and carol[0]["role"] == "admin" and carol[0]["roleName"] == "Editor"


def test_visibility_and_roles_cost_one_query(org, django_assert_num_queries):
    user = org.users.member
    with django_assert_num_queries(1):  # the user's rules, read once and cached on the user for the request
        assert not is_platform_admin(user)
    with django_assert_num_queries(1):
        assert [p.name for p in type(org.a).objects.visible_to(user)] == ["alpha"]
    with django_assert_num_queries(0):  # every level of the user, from the rules the admin check read
        assert project_role(user, org.a) == "member"
        assert project_role(user, org.b) is None
    fresh = type(user).objects.get(pk=user.pk)
    with django_assert_num_queries(1):  # on its own, the role check reads the same rules once
        assert project_role(fresh, org.a) == "member"
        assert project_role(fresh, org.b) is None
        assert not is_platform_admin(fresh)


@pytest.mark.django_db(transaction=True)
def test_the_migration_turns_memberships_into_project_rules():
    executor = MigrationExecutor(connection)
    executor.migrate([("studio", "0001_initial")])
    old = executor.loader.project_state([("studio", "0001_initial")]).apps
    User = old.get_model("auth", "User")
    cluster = old.get_model("studio", "Cluster").objects.create(name="c", api_server_url="http://x")
    dept = old.get_model("studio", "Department").objects.create(name="d")
    project = old.get_model("studio", "Project").objects.create(name="p", department=dept, cluster=cluster,
                                                                namespace="studio-p")
    for name, role in [("ann", "admin"), ("ben", "member"), ("cid", "viewer")]:
        old.get_model("studio", "Membership").objects.create(user=User.objects.create(username=name),
                                                             project=project, role=role)
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    rules = {r.subject_id: (r.role.name, r.role.level, r.scope_type, r.scope_id)
             for r in AccessRule.objects.filter(subject_type="user").select_related("role")}
    assert rules == {"ann": ("Editor", "admin", "project", str(project.pk)),
                     "ben": ("L1 researcher", "member", "project", str(project.pk)),
                     "cid": ("Viewer", "viewer", "project", str(project.pk))}
    group_rule = AccessRule.objects.get(subject_type="group")
    assert (group_rule.subject_id, group_rule.role.name, group_rule.scope_type) == (
        "platform-admins", "System administrator", "tenant")
