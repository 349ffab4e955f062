"""The audit trail in plain words, over HTTP: the audit page says who suspended, resumed, launched, changed a
password, created or deleted what; and the workload, project, service profile and user pages each show their
object's History."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from studio.models import Project
from tests.factories import ServiceProfileFactory
from tests.workloads.cluster_support import make_workload
from workloads.models import Workload

pytestmark = pytest.mark.django_db


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def history(html: str) -> list[str]:
    section = re.search(r'data-testid="history">(.*?)</section>', html, re.S)
    assert section, "no History section"
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", item)).strip()
            for item in re.findall(r"<li[^>]*>(.*?)</li>", section.group(1), re.S)]


def test_a_password_change_reads_as_one(org):
    bob = client_of(org.users.member)
    response = bob.post(reverse("account-password"), {"current_password": "pw-for-tests-1",
                                                      "new_password": "a-new-long-pass-22",
                                                      "new_password_again": "a-new-long-pass-22"})
    assert response.status_code in (200, 302), response.content[:500]
    admin = client_of(org.users.platform_admin)
    html = admin.get(reverse("audit-trail")).content.decode()
    assert "bob changed their password" in html
    assert "0 fields" not in html and "pw-for-tests" not in html and "a-new-long-pass" not in html
    user_page = admin.get(reverse("portal-user", args=[org.users.member.pk])).content.decode()
    assert history(user_page)[0].endswith("bob changed their password")
    # an admin's reset of another's password
    admin.post(reverse("portal-user", args=[org.users.viewer.pk]), {"action": "reset-password"})
    assert "root reset the password of user carol" in admin.get(reverse("audit-trail")).content.decode()


def test_a_workloads_history_suspended_resumed(org):
    workload = make_workload(org.a, "train", kind="workspace")
    Workload.objects.filter(pk=workload.pk).update(actual_phase="Running")
    bob = client_of(org.users.member)
    assert bob.post(reverse("workload-suspend", args=[workload.pk])).status_code in (200, 302)
    assert bob.post(reverse("workload-resume", args=[workload.pk])).status_code in (200, 302)
    lines = history(bob.get(reverse("workload-detail", args=[workload.pk])).content.decode())
    assert lines[0].endswith("bob resumed workspace train") and lines[1].endswith("bob suspended workspace train")
    html = client_of(org.users.platform_admin).get(reverse("audit-trail")).content.decode()
    assert 'data-action="update"' in html and ">suspended<" in html and ">resumed<" in html
    # the history of a workload the user may not see is not shown: its page is a 404
    assert client_of(org.users.other).get(reverse("workload-detail", args=[workload.pk])).status_code == 404


def test_created_changed_and_deleted_read_as_such(org):
    admin = client_of(org.users.platform_admin)
    response = admin.post(reverse("org-list", args=["departments"]), {"name": "physics"})
    assert response.status_code in (200, 302)
    from studio.audit import AuditEvent
    from studio.services import model_update

    model_update(org.a, actor=org.users.platform_admin, gpu_deserved=3)
    html = admin.get(reverse("audit-trail")).content.decode()
    assert "root created department physics" in html
    assert re.search(r"root changed project alpha \([^)]*gpu deserved", html)
    lines = history(admin.get(reverse("project-quota", args=[org.a.pk])).content.decode())
    assert any("root changed project alpha" in line and "gpu deserved" in line for line in lines)
    project = Project.objects.get(pk=org.b.pk)
    AuditEvent.objects.create(actor=org.users.platform_admin, actor_name="root", action="delete",
                              object_type="studio.project", object_id=str(project.pk), object_repr="beta")
    assert "root deleted project beta" in admin.get(reverse("audit-trail")).content.decode()


def test_a_service_profiles_history(org):
    profile = ServiceProfileFactory(name="jupyter-small")
    admin = client_of(org.users.platform_admin)
    from studio.services import model_update

    model_update(profile, actor=org.users.platform_admin, description="Small notebooks")
    lines = history(admin.get(reverse("profile-detail", args=[profile.pk])).content.decode())
    assert lines and lines[0].endswith("root changed service profile jupyter-small (description)")
