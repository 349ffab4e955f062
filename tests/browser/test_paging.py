"""List pages that grew past one page: the catalog and the Kit lists page through the project's pager (the API's
FilterSet and offset), keep the search in their links, and say why when a hand-edited filter cannot apply."""

import pytest
from playwright.sync_api import expect

from kit.models import Application, ApplicationProfile

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def pages_through(page, entries, *, first: int, rest: int):
    expect(entries).to_have_count(first)
    expect(page.get_by_text(f"Showing 1–{first}")).to_be_visible()
    page.get_by_role("link", name="Next").click()
    expect(entries).to_have_count(rest)
    expect(page.get_by_text(f"Showing {first + 1}–{first + rest}")).to_be_visible()
    expect(page.get_by_role("link", name="Next")).to_have_attribute("aria-disabled", "true")
    page.get_by_role("link", name="Previous").click()
    expect(entries).to_have_count(first)


def test_the_catalog_pages_24_entries_at_a_time_and_keeps_its_search(open_session, org, make_profile):
    for n in range(30):
        make_profile(f"nb-{n:02d}", display_name=f"Notebook {n:02d}")
    make_profile("other", display_name="Other")
    session = open_session("bob")
    page = session.page
    page.goto("/catalog")
    entries = page.locator("article.entry")
    pages_through(page, entries, first=24, rest=7)
    session.screenshot("catalog-paged")
    page.get_by_label("Search", exact=True).fill("nb-")
    page.get_by_role("button", name="Search").click()
    expect(entries).to_have_count(24)
    page.get_by_role("link", name="Next").click()
    expect(entries).to_have_count(6)  # "other" is not in the search's second page
    assert "search=nb-" in page.url and "offset=24" in page.url
    page.goto("/catalog?sortBy=bogus")
    expect(page.get_by_role("alert").first).to_contain_text("sortBy")
    expect(entries).to_have_count(0)


def test_kit_applications_and_profiles_page_25_at_a_time(open_session, org):
    Application.objects.bulk_create([Application(id=f"app-{n:02d}", name=f"App {n:02d}") for n in range(27)])
    for n in range(28):
        ApplicationProfile.objects.create(slug=f"profile-{n:02d}", name=f"Profile {n:02d}", owner_project=org.a,
                                          supported_applications=[{"name": "*", "versions": ["*"]}])
    session = open_session("bob")
    page = session.page
    page.goto("/kit/apps")
    rows = page.locator("main table tbody tr")
    pages_through(page, rows, first=25, rest=2)
    page.goto("/kit/profiles")
    pages_through(page, rows, first=25, rest=3)
    page.goto("/kit/profiles?search=profile-2")
    expect(rows).to_have_count(8)  # profile-2 and profile-20…27: one page, no pager
    expect(page.get_by_role("link", name="Next")).to_have_count(0)
    page.goto("/kit/apps?filterBy=bogus==1")
    expect(page.get_by_role("alert").first).to_be_visible()
