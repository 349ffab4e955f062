"""The Kit stream page (a session's own page) at 1440 and 390 px, light and dark: its routes, how to connect
and Stop, axe-clean and without sideways scroll."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED
from tests.kit.streams import running_stream
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stream(org):
    return running_stream(org, address="25.124.78.14")


@pytest.mark.parametrize("width", [1440, 390])
def test_the_stream_page_at_both_widths_and_modes(open_session, stream, width):
    session = open_session("bob", width=width)
    page = session.page
    page.goto(f"/kit/sessions/{stream.pk}")
    expect(page.locator("[data-condition]")).to_have_text("Ready")
    expect(page.locator("#routes")).to_contain_text("25.124.78.14")
    expect(page.get_by_role("button", name="Stop")).to_be_visible()
    for mode in ("light", "dark"):
        if mode == "dark":
            page.get_by_role("button", name="Dark mode").click()
            page.reload()
            expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        assert page.evaluate(UNNAMED) == []
        page.add_script_tag(url=AXE)
        assert page.evaluate(AXE_RUN) == [], mode
        session.screenshot(f"kit-stream-{width}" if mode == "light" else f"kit-stream-{width}-dark")


@pytest.mark.parametrize("width", [1440, 390])
def test_the_streams_workload_page_shows_its_routes_and_stops_it(open_session, stream, width):
    session = open_session("bob", width=width)
    page = session.page
    page.goto(f"/workloads/{stream.pk}")
    expect(page.get_by_test_id("routes")).to_contain_text("25.124.78.14:49100")
    expect(page.get_by_role("link", name="Stream page")).to_have_attribute("href", f"/kit/sessions/{stream.pk}")
    expect(page.get_by_role("button", name="Delete")).to_have_count(0)  # a stream ends through its session
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    page.get_by_role("button", name="Stop").click()
    session.confirm("Stop the stream", says="It ends for everyone connected")
    expect(page.get_by_role("status").filter(has_text="Stopped the usd-composer stream")).to_be_visible()
    assert Workload.objects.get(pk=stream.pk).desired_phase == "Deleted"
