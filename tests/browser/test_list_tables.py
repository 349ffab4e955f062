"""Service profiles, environment templates, Kit applications and application profiles in the one table
component: natural sort, totals, the column chooser, export, bulk delete where there are actions; at 1440 and
390 px, light and dark, axe-clean, no sideways scroll."""

import pytest
from playwright.sync_api import expect

from kit import services as kit_services
from profiles.models import ServiceProfile
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def lists(org, make_profile):
    for name in ("lab-10", "lab-2", "lab-1"):
        make_profile(name, display_name=name.title())
    for app_id in ("usd-viewer-10", "usd-viewer-2"):
        app = kit_services.application_create(actor=org.users.platform_admin, app_id=app_id, name=app_id.upper(),
                                              description="A viewer.", tags=["viewer"])
        kit_services.version_create(actor=org.users.platform_admin, application=app, version="1.0.0",
                                    container="nvcr.io/x/viewer", container_version="1.0.0")
    kit_services.profile_create(actor=org.users.platform_admin, profile_id="gpu-l40s", owner_project_id=org.a.pk,
                                fields={"name": "L40S", "supported_applications": [{"name": "*", "versions": ["*"]}]})
    return org


def _clean(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == []
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []


def _names(page, table, column):
    return page.locator(f"table[data-table={table}] tbody td[data-col={column}]").all_inner_texts()


@pytest.mark.parametrize("width", [1440, 390])
def test_admin_lists_are_tables(open_session, lists, width):
    session = open_session("root", width=width)
    page = session.page
    page.goto("/studio/service-profiles?sortBy=name&search=lab-")
    assert [n.split("\n")[0].strip() for n in _names(page, "profiles", "name")] == ["lab-1", "lab-2", "lab-10"]
    expect(page.get_by_test_id("total-count")).to_have_text("3 service profiles")
    _clean(page, width)
    session.screenshot(f"service-profiles-table-{width}")
    page.get_by_label("Select lab-1", exact=True).check()
    page.get_by_label("Select lab-2").check()
    page.get_by_role("button", name="Delete").first.click()
    session.confirm("Delete 2 service profiles", says="lab-1, lab-2")
    expect(page.locator(".toast-success")).to_contain_text("Deleted 2 service profiles: lab-1, lab-2.")
    assert sorted(ServiceProfile.objects.filter(name__startswith="lab-").values_list("name", flat=True)) == ["lab-10"]

    page.goto("/studio/environment-templates")
    expect(page.locator("table[data-table=templates] td[data-col=profiles]").first).to_have_text("1")
    _clean(page, width)
    page.goto("/kit/apps?sortBy=id&search=usd-viewer-")
    assert _names(page, "kit-apps", "id") == ["usd-viewer-2", "usd-viewer-10"]
    expect(page.locator("tfoot td[data-col=versions]")).to_contain_text("2")
    _clean(page, width)
    session.screenshot(f"kit-apps-table-{width}")
    page.goto("/kit/profiles")
    expect(page.locator("table[data-table=kit-profiles] td[data-col=id]").first).to_have_text("gpu-l40s")
    _clean(page, width)
    page.goto("/kit/sessions")  # the stream form: a version list, not free text
    expect(page.get_by_label("Version", exact=True)).to_have_value("")
    _clean(page, width)


def test_list_tables_are_axe_clean_in_dark_mode(open_session, lists):
    session = open_session("root")
    page = session.page
    page.goto("/kit/apps")
    page.get_by_role("button", name="Dark mode").click()
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for path in ("/studio/service-profiles", "/studio/environment-templates", "/kit/apps", "/kit/profiles", "/kit/sessions"):
            page.goto(path)
            _clean(page, width)


@pytest.mark.parametrize("width", [1440, 390])
def test_a_member_deletes_two_access_keys_at_once(open_session, org, width):
    from studio import services
    from studio.models import AccessKey

    for name in ("ci-10", "ci-2", "laptop"):
        services.access_key_create(user=org.users.member, name=name)
    session = open_session("bob", width=width)
    page = session.page
    page.goto("/account/access-keys?sortBy=name")
    assert _names(page, "access-keys", "name") == ["ci-2", "ci-10", "laptop"]
    _clean(page, width)
    page.get_by_label("Select ci-2").check()
    page.get_by_label("Select ci-10").check()
    page.get_by_role("button", name="Delete").first.click()
    session.confirm("Delete 2 access keys", says="ci-2, ci-10")
    expect(page.locator(".toast-success")).to_contain_text("Deleted 2 access keys")
    assert list(AccessKey.objects.values_list("name", flat=True)) == ["laptop"]
    page.get_by_role("button", name="Dark mode").click()
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    _clean(page, width)
