import pytest

from studio.models import AccessRule, AuditEvent, Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, org):
    client.force_login(org.users.platform_admin)
    return client


def test_admin_creates_a_project_from_the_page_and_sees_errors_inline(admin_client, org):
    page = admin_client.get("/org/projects")
    assert page.status_code == 200 and b"alpha" in page.content
    bad = admin_client.post("/org/projects", {"name": "Bad Name", "department": org.department.pk,
                                              "cluster": org.cluster.pk})
    assert bad.status_code == 200 and b'id="id_name-error"' in bad.content
    good = admin_client.post("/org/projects", {"name": "gamma", "department": org.department.pk,
                                               "cluster": org.cluster.pk})
    gamma = Project.objects.get(name="gamma")
    assert good.status_code == 302 and good["Location"] == f"/org/projects/{gamma.pk}/edit"  # its quotas next
    assert gamma.namespace == "studio-gamma"
    assert AuditEvent.objects.filter(object_type="studio.project", action="create", actor_name="root").exists()


def test_delete_in_use_department_shows_a_message(admin_client, org):
    response = admin_client.post(f"/org/departments/{org.department.pk}/delete", follow=True)
    assert b"still in use" in response.content


def test_audit_page_and_org_pages_are_for_platform_admins_only(client, admin_client, org):
    assert admin_client.get("/org/audit").status_code == 200
    assert admin_client.get("/org/clusters").status_code == 200
    client.force_login(org.users.member)
    assert client.get("/org/audit").status_code == 403
    assert client.get("/org/clusters").status_code == 403
    assert client.get("/org/nothing").status_code == 404


def test_project_admin_manages_members_on_the_page_viewer_cannot(client, org):
    client.force_login(org.users.admin)
    response = client.post(f"/org/projects/{org.a.pk}/members", {"username": "dave", "role": "Viewer"})
    assert response.status_code == 302
    assert AccessRule.objects.get(project=org.a, user=org.users.other).role.name == "Viewer"
    client.force_login(org.users.viewer)
    assert client.get(f"/org/projects/{org.a.pk}/members").status_code == 200
    assert client.post(f"/org/projects/{org.a.pk}/members", {"username": "dave", "role": "Editor"}).status_code == 403
    client.force_login(org.users.other)
    assert client.get(f"/org/projects/{org.b.pk}/members").status_code == 200
