"""Pages offer only what the user's role allows, by the permission checks the API uses: a viewer is not offered
suspend, resume, delete, Stop or Start (and is told why), a member of one project and viewer of another gets a
checkbox only on the rows of the first."""

import pytest

from studio.models import Level
from tests.browser.test_workload_pages import make_workload
from tests.factories import MembershipFactory
from tests.kit.streams import requested_stream

pytestmark = pytest.mark.django_db


def page(client, user, path):
    client.force_login(user)
    answer = client.get(path)
    assert answer.status_code == 200
    return answer.content.decode()


def test_a_viewer_is_offered_no_workload_action(client, org):
    make_workload(org)
    html = page(client, org.users.viewer, "/workloads")
    assert "train-a" in html
    assert "data-select-row" not in html and 'data-bulk-action' not in html
    assert "Launch from the catalog" not in html
    member = page(client, org.users.member, "/workloads")
    assert "data-select-row" in member and "Launch from the catalog" in member


def test_rows_of_a_project_only_viewed_have_no_checkbox(client, org):
    MembershipFactory(user=org.users.other, project=org.a, role=Level.VIEWER)  # dave: member of beta, views alpha
    mine = make_workload(org, name="train-b", project=org.b)
    theirs = make_workload(org, name="train-a")
    html = page(client, org.users.other, "/workloads?scope=all")
    assert f'value="{mine.pk}" form="bulk-workloads"' in html
    assert f'value="{theirs.pk}" form="bulk-workloads"' not in html


@pytest.fixture
def stream(org):
    return requested_stream(org)


def test_a_viewer_is_not_offered_start_or_stop_on_streams_and_is_told_why(client, org, stream):
    html = page(client, org.users.viewer, "/kit/sessions")
    assert "Starting a session takes a Member role" in html or "starting a session there takes a Member role" in html
    assert 'name="application"' not in html  # no Start form
    assert f'action="/kit/sessions/{stream.pk}/stop"' not in html and "data-select-row" not in html
    assert "A member of alpha may stop it" in html
    member = page(client, org.users.member, "/kit/sessions")
    assert 'name="application"' in member and f'action="/kit/sessions/{stream.pk}/stop"' in member


def test_a_department_admin_gets_checkboxes_only_on_the_projects_she_may_delete(client, org):
    from studio.models import AccessRule, Role
    from tests.factories import DepartmentFactory, ProjectFactory

    other = DepartmentFactory(name="vision")
    seen = ProjectFactory(name="gamma", department=other, cluster=org.cluster)
    head = org.users.other
    for role, department in (("Department administrator", org.department), ("Department viewer", other)):
        AccessRule.objects.create(subject_type="user", subject_id=head.username, user=head,
                                  role=Role.objects.get(name=role), scope_type="department",
                                  scope_id=str(department.pk), department=department)
    html = page(client, head, "/org/projects")
    assert f'value="{org.a.pk}" form="bulk-projects"' in html
    assert "gamma" in html and f'value="{seen.pk}" form="bulk-projects"' not in html


def test_a_bulk_request_the_page_did_not_offer_is_still_refused_per_row(client, org):
    from workloads.models import Workload

    workload = make_workload(org, name="train-v")
    client.force_login(org.users.viewer)
    answer = client.post("/workloads/bulk", {"action": "suspend", "ids": [str(workload.pk)]}, follow=True)
    assert "Refused — train-v" in answer.content.decode()
    assert Workload.objects.get(pk=workload.pk).desired_phase == "Running"


def test_the_metrics_open_on_a_window_that_holds_the_workloads_life(org):
    """A minute-old workload opens on 15 minutes, a five-hour-old one on 6 hours, one of last week on 7 days."""
    from datetime import timedelta

    from django.test import Client
    from django.utils import timezone

    from tests.workloads.cluster_support import make_workload
    from workloads.models import Workload

    portal = Client()
    portal.force_login(org.users.member)
    for age, opened in ((timedelta(minutes=1), "900"), (timedelta(hours=5), "21600"), (timedelta(days=9), "604800")):
        workload = make_workload(org.a, f"aged-{opened}")
        Workload.objects.filter(pk=workload.pk).update(created_at=timezone.now() - age)
        page = portal.get(f"/workloads/{workload.pk}").content.decode()
        assert f'data-window="{opened}"' in page
        assert f'data-range="{opened}" aria-pressed="true"' in page and page.count('aria-pressed="true"') == 1
