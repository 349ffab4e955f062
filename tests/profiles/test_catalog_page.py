"""The portal's /catalog page shows a page of the project's catalog (24 profiles, Previous/Next), in the same
number of queries for 1 profile as for 100, and reads the navigation (the user's projects) once."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import ServiceProfileFactory, TemplateVersionFactory

pytestmark = pytest.mark.django_db


def _profiles(org, n, start):
    version = TemplateVersionFactory()
    for i in range(start, start + n):
        ServiceProfileFactory(template_version=version, owner_project=org.a, name=f"p{i:03d}",
                              display_name=f"Profile {i:03d}")


def _shown(response) -> list[str]:
    return [line.split('data-entry="', 1)[1].split('"', 1)[0]
            for line in response.content.decode().splitlines() if 'data-entry="' in line]


@pytest.fixture
def page(client, org):
    client.force_login(org.users.member)
    return client


def test_the_catalog_page_is_paged(page, org):
    _profiles(org, 30, 0)
    first = page.get("/catalog")
    assert first.status_code == 200
    assert len(_shown(first)) == 24 and "Showing" in first.content.decode()
    second = page.get("/catalog?offset=24")
    assert len(_shown(second)) == 6
    assert not set(_shown(first)) & set(_shown(second))
    assert len(_shown(page.get("/catalog?offset=24&search=p02"))) == 0  # the filters page too
    assert len(_shown(page.get("/catalog?search=p02"))) == 10


def test_the_catalog_page_reads_in_the_same_queries_for_1_and_100_profiles(page, org, django_assert_num_queries):
    _profiles(org, 1, 0)
    with CaptureQueriesContext(connection) as one:
        assert len(_shown(page.get("/catalog"))) == 1
    projects_reads = [q for q in one if q["sql"].startswith('SELECT "studio_project"') and "ORDER BY" in q["sql"]]
    assert len(projects_reads) == 1, [q["sql"][:200] for q in projects_reads]  # the navigation, once
    _profiles(org, 99, 1)
    with django_assert_num_queries(len(one)):
        assert len(_shown(page.get("/catalog"))) == 24
