"""Clusters, departments and projects as the one table component (studio.tables): natural sort of names,
totals over the filtered list, CSV export of it, bulk delete through the single delete's service."""

import csv
import io

import pytest
from django.test import Client

from studio.models import Department, Project
from tests.factories import DepartmentFactory, ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(org):
    client = Client()
    client.force_login(org.users.platform_admin)
    return client


def _csv(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_projects_sort_naturally_with_totals_and_export(admin, org):
    for name, deserved in (("team-10", 1), ("team-2", 2), ("Team-1", 3)):
        ProjectFactory(name=name, department=org.department, cluster=org.cluster, gpu_deserved=deserved,
                       gpu_limit=None)
    page = admin.get("/org/projects?sortBy=name&search=team").content.decode()
    import re

    assert re.findall(r"aria-label=\"Select ([^\"]+)\"", page)[1:] == ["Team-1", "team-2", "team-10"]
    assert 'data-testid="total-count">3 projects' in page
    assert '<td data-col="deserved" data-label="Total GPUs deserved"' in page and "<strong>6</strong>" in page
    assert 'data-select-row aria-label="Select team-2"' in page and 'value="delete"' in page  # bulk delete
    rows = _csv(admin.get("/org/projects/export.csv?sortBy=name&search=team&columns=name,deserved,actions"))
    assert rows == [["Name", "GPUs deserved"], ["Team-1", "3"], ["team-2", "2"], ["team-10", "1"]]
    assert admin.get("/org/projects/export.csv?sortBy=nosuch").status_code == 400


def test_departments_and_clusters_are_tables_too(admin, org):
    page = admin.get("/org/departments").content.decode()
    assert 'data-table="departments"' in page and 'data-col="projects"' in page
    assert 'data-testid="total-count">1 department<' in page
    rows = _csv(admin.get("/org/departments/export.csv"))
    assert rows[0] == ["Name", "Description", "Projects", "GPUs deserved (projects)", "GPUs allocated",
                       "GPUs requested", "Created"]
    assert rows[1][:3] == ["research", org.department.description, "2"]
    page = admin.get("/org/clusters").content.decode()
    assert 'data-table="clusters"' in page and "Test connection to main" in page
    assert _csv(admin.get("/org/clusters/export.csv"))[1][0] == "main"


def test_bulk_delete_goes_through_the_service_and_reports_each_refusal(admin, org):
    empty = DepartmentFactory(name="empty")
    response = admin.post("/org/departments/bulk", {"action": "delete", "ids": [str(empty.pk), str(org.department.pk)],
                                                    "next": "/org/departments"}, follow=True)
    text = response.content.decode()
    assert not Department.objects.filter(pk=empty.pk).exists()
    assert Department.objects.filter(pk=org.department.pk).exists()  # it has projects: refused, and said why
    assert "Deleted 1 department: empty." in text and "Refused — research" in text
    assert admin.post("/org/projects/bulk", {"action": "delete", "ids": ["nope"]}).status_code == 302
    assert Project.objects.count() == 2


def test_only_platform_admins_use_them(org):
    client = Client()
    client.force_login(org.users.member)
    assert client.get("/org/projects/export.csv").status_code == 403
    assert client.post("/org/projects/bulk", {"action": "delete", "ids": [str(org.a.pk)]}).status_code == 403
    assert Project.objects.filter(pk=org.a.pk).exists()


def test_the_audit_trail_is_a_table_with_its_export(admin, org):
    from studio.models import AuditEvent

    AuditEvent.objects.create(action="delete", object_type="workloads.workload", object_id="1",
                              object_repr="train-1", actor_name="root", changes={"phase": ["Running", None]})
    page = admin.get("/org/audit?filterBy=action==delete").content.decode()
    assert 'data-table="audit"' in page and 'data-testid="total-count">1 event<' in page
    rows = _csv(admin.get("/org/audit/export.csv?filterBy=action==delete"))
    assert rows[0] == ["When", "Who", "Action", "Object type", "Object", "Changes"]
    assert rows[1][1:] == ["root", "delete", "workloads.workload", "train-1", "phase: Running → —"]


def test_access_keys_are_a_table_of_ones_own_with_export_and_bulk_delete(org):
    from studio import services
    from studio.models import AccessKey

    mine = [services.access_key_create(user=org.users.member, name=name)[0] for name in ("ci-10", "ci-2")]
    theirs, _ = services.access_key_create(user=org.users.other, name="theirs")
    client = Client()
    client.force_login(org.users.member)
    page = client.get("/account/access-keys?sortBy=name").content.decode()
    import re

    assert re.findall(r'aria-label="Select ([^"]+)"', page)[1:] == ["ci-2", "ci-10"] and "theirs" not in page
    rows = _csv(client.get("/account/access-keys/export.csv?sortBy=name"))
    assert rows == [["Name", "Client id", "Created", "Last used"],
                    *[[k.name, k.client_id, k.created_at.strftime("%Y-%m-%d %H:%M"), "never"] for k in mine[::-1]]]
    client.post("/account/access-keys/bulk", {"action": "delete", "ids": [str(k.pk) for k in mine] + [str(theirs.pk)]})
    assert list(AccessKey.objects.values_list("name", flat=True)) == ["theirs"]  # another user's key: not found


def test_a_projects_members_are_a_table_its_admins_remove_several_from(org):
    from studio.models import AccessRule

    admin = Client()
    admin.force_login(org.users.admin)  # alpha's project admin
    page = admin.get(f"/org/projects/{org.a.pk}/members?sortBy=username").content.decode()
    assert 'data-table="members"' in page and 'value="remove"' in page
    rows = _csv(admin.get(f"/org/projects/{org.a.pk}/members/export.csv?sortBy=username&columns=user,role"))
    assert rows[0] == ["User", "Role"] and len(rows) > 2
    member_rule = AccessRule.objects.get(user=org.users.member, project=org.a)
    viewer_rule = AccessRule.objects.get(user=org.users.viewer, project=org.a)
    done = admin.post(f"/org/projects/{org.a.pk}/members/bulk",
                      {"action": "remove", "ids": [str(member_rule.pk), str(viewer_rule.pk)]}, follow=True)
    assert "Removed from alpha 2 members" in done.content.decode()
    assert not AccessRule.objects.filter(pk__in=[member_rule.pk, viewer_rule.pk]).exists()
    viewer = Client()
    viewer.force_login(org.users.other)
    assert viewer.post(f"/org/projects/{org.b.pk}/members/bulk", {"action": "remove", "ids": ["1"]}).status_code == 403
