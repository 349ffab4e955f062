"""The catalog looks finished: cards with padding and their default resources, a readme's fenced code readable in
light mode, a launch form with a name already given; at 390 px the home title stands clear of its action."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CONTRAST = """(selector) => {
  const el = document.querySelector(selector);
  const rgb = (c) => c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number);
  const lum = (c) => { const v = rgb(c).map((x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2]; };
  let bgEl = el; let bg = getComputedStyle(bgEl).backgroundColor;
  while (bg === "rgba(0, 0, 0, 0)" && bgEl.parentElement) { bgEl = bgEl.parentElement; bg = getComputedStyle(bgEl).backgroundColor; }
  const [a, b] = [lum(getComputedStyle(el).color), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


@pytest.mark.parametrize("width", [1440, 390])
def test_catalog_cards_show_resources_padding_and_readable_code(open_session, org, make_profile, width):
    make_profile("lab-notebook", display_name="Lab notebook", description="A notebook.",
                 readme="# Lab\n\n```\npip install torch\n```\n", sharing={"mode": "all", "projectIds": []})
    session = open_session("bob", width=width)
    page = session.page
    page.goto("/catalog")
    card = page.locator("article.entry").first
    expect(card.get_by_test_id("resources")).to_be_visible()
    title = card.locator("h3")
    assert title.bounding_box()["x"] - card.bounding_box()["x"] >= 12, "the card's content touches its border"
    card.get_by_text("Readme").click()
    code = card.locator(".readme pre")
    expect(code).to_contain_text("pip install torch")
    assert page.evaluate(CONTRAST, ".readme pre") >= 4.5
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    session.screenshot(f"catalog-{width}")
    card.get_by_role("link", name="Launch Lab notebook").click()
    name = page.get_by_label("Workload name")
    assert name.input_value().startswith("lab-notebook-") and len(name.input_value()) == len("lab-notebook-") + 4


def test_home_title_and_action_do_not_overlap_on_a_phone(open_session, org):
    page = open_session("bob", width=390).page
    page.goto("/")
    title = page.locator("main h1.page-title").bounding_box()
    action = page.locator(".page-actions .btn").first.bounding_box()
    assert action["y"] >= title["y"] + title["height"] - 1 or action["x"] >= title["x"] + title["width"], (title, action)
    toggle = page.get_by_role("button", name="Dark mode").bounding_box()
    logout = page.get_by_role("button", name="Log out").bounding_box()
    assert abs((toggle["y"] + toggle["height"] / 2) - (logout["y"] + logout["height"] / 2)) < 6
    cards = page.locator(".counts .card").all()
    assert len({round(c.bounding_box()["x"]) for c in cards[::2]}) == 1, "the counts' cards are not aligned"
