"""The application profile form: supported applications are chosen among the known applications (or '*'), a row
each with its versions, rather than typed as free text."""

import pytest

from kit.models import Application, ApplicationProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client, org):
    Application.objects.create(id="usd-viewer", name="USD Viewer")
    Application.objects.create(id="usd-composer", name="USD Composer")
    client.force_login(org.users.platform_admin)
    return client


BASE = {"id": "l40s", "name": "L40S", "description": "", "projectId": "", "sharing_mode": "none",
        "serviceType": "LoadBalancer", "encryption": "none", "authorization": "on", "overCapacity": "queue"}


def test_the_form_offers_the_known_applications_and_saves_the_chosen_rows(admin):
    page = admin.get("/kit/new/profile").content.decode()
    assert 'name="supportedApplications-0-name"' in page
    assert '<option value="usd-composer">' in page and '<option value="usd-viewer">' in page
    assert '<option value="*">' in page
    assert 'id="id_supportedApplications"' not in page  # no free-text box

    answer = admin.post("/kit/new/profile", {**BASE, "supportedApplications-rows": "2",
                                             "supportedApplications-0-name": "usd-viewer",
                                             "supportedApplications-0-versions": "1.0.0, 1.1.0",
                                             "supportedApplications-1-name": "usd-composer",
                                             "supportedApplications-1-versions": ""})
    assert answer.status_code == 302, answer.content.decode()[-3000:]
    assert ApplicationProfile.objects.get(slug="l40s").supported_applications == [
        {"name": "usd-viewer", "versions": ["1.0.0", "1.1.0"]}, {"name": "usd-composer", "versions": ["*"]}]

    edit = admin.get("/kit/profiles/l40s/edit").content.decode()
    assert '<option value="usd-viewer" selected>' in edit and 'value="1.0.0, 1.1.0"' in edit


def test_a_bad_version_is_said_on_its_row(admin):
    answer = admin.post("/kit/new/profile", {**BASE, "supportedApplications-rows": "1",
                                             "supportedApplications-0-name": "usd-viewer",
                                             "supportedApplications-0-versions": "2.x"})
    assert answer.status_code == 200
    page = answer.content.decode()
    assert 'id="supportedapplications-0-versions-err"' in page
    assert not ApplicationProfile.objects.filter(slug="l40s").exists()
