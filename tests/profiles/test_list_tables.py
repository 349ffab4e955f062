"""Service profiles and environment templates as the table component: natural sort, totals, CSV export of the
filtered list, bulk delete through the single delete's service (refusals named)."""

import csv
import io
import re

import pytest
from django.test import Client

from profiles.models import EnvironmentTemplate, ServiceProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(org):
    client = Client()
    client.force_login(org.users.platform_admin)
    return client


def _csv(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_profiles_sort_naturally_export_and_bulk_delete(admin, org, make_profile):
    for name in ("nb-10", "nb-2", "nb-1"):
        make_profile(name, display_name=name.upper())
    page = admin.get("/studio/service-profiles?sortBy=name&search=nb-").content.decode()
    assert re.findall(r'aria-label="Select ([^"]+)"', page)[1:] == ["nb-1", "nb-2", "nb-10"]
    assert 'data-testid="total-count">3 service profiles' in page
    rows = _csv(admin.get("/studio/service-profiles/export.csv?sortBy=name&search=nb-&columns=name,display,kind"))
    assert rows == [["Unique name", "Display name", "Workload kind"], ["nb-1", "NB-1", "training"],
                    ["nb-2", "NB-2", "training"], ["nb-10", "NB-10", "training"]]
    ids = [str(p.pk) for p in ServiceProfile.objects.filter(name__in=["nb-1", "nb-2"])]
    done = admin.post("/studio/service-profiles/bulk", {"action": "delete", "ids": [*ids, "999999"],
                                                        "next": "/studio/service-profiles"}, follow=True)
    assert sorted(ServiceProfile.objects.filter(name__startswith="nb-").values_list("name", flat=True)) == ["nb-10"]
    text = done.content.decode()
    assert "Deleted 2 service profiles: nb-1, nb-2." in text and "Refused — 999999: not found" in text


def test_templates_table_counts_profiles_and_refuses_a_template_in_use(admin, org, make_profile):
    profile = make_profile("in-use")
    template = profile.template_version.template
    page = admin.get("/studio/environment-templates").content.decode()
    assert 'data-table="templates"' in page and '<td data-col="profiles" data-label="Profiles">1</td>' in page
    rows = _csv(admin.get("/studio/environment-templates/export.csv"))
    assert rows[0] == ["Name", "Description", "Versions", "Profiles", "Sharing", "Created"]
    assert rows[1][0] == template.name and rows[1][3] == "1"
    done = admin.post("/studio/environment-templates/bulk", {"action": "delete", "ids": [str(template.pk)]},
                      follow=True).content.decode()
    assert EnvironmentTemplate.objects.filter(pk=template.pk).exists() and f"Refused — {template.name}" in done


def test_members_may_not_export_or_delete(org, make_profile):
    profile = make_profile("kept")
    client = Client()
    client.force_login(org.users.member)
    assert client.get("/studio/service-profiles/export.csv").status_code == 403
    assert client.post("/studio/service-profiles/bulk", {"action": "delete", "ids": [str(profile.pk)]}).status_code == 403
    assert ServiceProfile.objects.filter(pk=profile.pk).exists()
