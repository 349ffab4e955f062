"""Every main page at 1280 px and at 390 px (a phone): no horizontal page scroll, a label on every control, a
name on every button and link, and no console errors (the harness). Screenshots of the pages that the other
tests do not take are saved at 1280 px."""

import re

import pytest
from playwright.sync_api import expect

from kit import services as kit_services
from kit import sessions as kit_sessions
from workloads.launch import launch
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Controls without a label (or aria-label / aria-labelledby / a title), and buttons or links without a name.
UNNAMED = """() => {
  const visible = (el) => el.checkVisibility({visibilityProperty: true});
  const named = (el) => (el.labels && el.labels.length) || el.getAttribute("aria-label")
    || el.getAttribute("aria-labelledby") || el.getAttribute("title");
  const controls = [...document.querySelectorAll("input:not([type=hidden]), select, textarea")]
    .filter((el) => visible(el) && !named(el));
  const actions = [...document.querySelectorAll("button, a[href], summary")]
    .filter((el) => visible(el) && !(el.innerText.trim() || el.getAttribute("aria-label")));
  return [...controls, ...actions].map((el) => el.outerHTML.slice(0, 120));
}"""
AXE = "/static/vendor/axe-core/axe.min.js"  # vendored from npm (scripts/vendor_static.sh); a test asset only
AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.filter((v) => ["serious", "critical"].includes(v.impact))
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`);
}"""


def shot_name(username: str, path: str) -> str:
    """A screenshot's file name from the page's path: /org/projects/3/edit → page-root-org-projects-detail-edit."""
    words = [("detail" if any(c.isdigit() for c in w) else w) for w in path.strip("/").split("/") if w] or ["home"]
    return "-".join(["page", username, *words])


@pytest.fixture
def pages(org, make_profile, notebook_version):
    """A Kit application, a finished profile, a draft, and a catalog launch of the first: every page has content."""
    app = kit_services.application_create(actor=org.users.platform_admin, app_id="usd-composer", name="USD Composer",
                                          description="Author and compose OpenUSD scenes.", tags=["omniverse"])
    for version in ("2024.1.0", "2025.1.0"):
        kit_services.version_create(actor=org.users.platform_admin, application=app, version=version,
                                    container="nvcr.io/nvidia/omniverse/usd-composer", container_version=version)
    profile = make_profile("lab-notebook", display_name="Lab notebook", readme="# Lab\n\nA notebook.",
                           labels={"team": "ml"}, sharing={"mode": "all", "projectIds": []})
    draft = make_profile("half-done", draft_step="inputs")
    kit_services.profile_create(actor=org.users.platform_admin, profile_id="any-app", owner_project_id=org.a.pk,
                                fields={"name": "Any application", "supported_applications": [
                                    {"name": "*", "versions": ["*"]}]})
    stream = kit_sessions.session_request(user=org.users.member, app_id="usd-composer", profile_id="any-app")
    Workload.objects.filter(pk=stream.pk).update(actual_phase="Running", endpoints={
        "serviceAddress": "25.124.78.14", "serviceType": "LoadBalancer",
        "ports": [{"name": "port-49100", "port": 49100}, {"name": "port-47998-udp", "port": 47998, "protocol": "UDP"}]})
    workload = launch.profile_launch(profile=profile, project=org.a, user=org.users.member, name="nb-1", inputs={})
    Workload.objects.filter(pk=workload.pk).update(actual_phase="Pending", phase_message="Waiting for a node")
    template = notebook_version.template_id
    admin = ["/", "/studio/service-profiles", "/studio/service-profiles/new", f"/studio/service-profiles/{profile.pk}",
             *(f"/studio/service-profiles/{draft.pk}/edit/{step}" for step in ("details", "inputs", "outputs", "sharing")),
             f"/studio/service-profiles/{draft.pk}/try",
             "/studio/environment-templates", f"/studio/environment-templates/{template}", "/org/clusters",
             "/org/departments", "/org/projects", "/org/audit", f"/org/projects/{org.a.pk}/members",
             "/studio/system-profiles", "/org/users", f"/org/users/{org.users.member.pk}", "/account/access-keys",
             f"/org/projects/{org.a.pk}/edit", f"/org/clusters/{org.cluster.pk}/edit", "/gpus", "/quota",
             f"/quota/projects/{org.a.pk}"]
    member = ["/", "/catalog", f"/catalog/{profile.pk}/launch", "/workloads", f"/workloads/{workload.pk}",
              "/kit/apps", "/kit/profiles", "/kit/sessions", f"/kit/sessions/{stream.pk}", "/account/access-keys",
              "/account/password", "/gpus", "/quota"]
    return {"root": admin, "bob": member}


@pytest.mark.parametrize("width", [1280, 390])
def test_main_pages_fit_the_width_label_every_control_and_pass_axe(open_session, pages, width):
    """Every page at 1280 and 390 px: no sideways scroll, named controls, axe-core without serious or
    critical violations, in light mode; a screenshot of each in docs/screenshots."""
    for username, paths in pages.items():
        session = open_session(username, width=width)
        page = session.page
        for path in paths:
            page.goto(path)
            expect(page.locator("main h1.page-title").first).to_be_visible()
            overflow = page.evaluate("document.documentElement.scrollWidth")
            assert overflow <= width, f"{path} at {width}px is {overflow}px wide"
            assert page.evaluate(UNNAMED) == [], f"{path}: unnamed controls"
            page.add_script_tag(url=AXE)
            assert page.evaluate(AXE_RUN) == [], f"{path} at {width}px: axe-core violations"
            session.screenshot(f"{shot_name(username, path)}-{width}")


def test_main_pages_pass_axe_in_dark_mode_chosen_with_the_toggle(open_session, pages):
    """Dark mode, chosen once with the header's toggle and kept on every later page: axe-core without serious
    or critical violations there too (contrast in particular)."""
    violations = {}
    for username, paths in pages.items():
        session = open_session(username)
        page = session.page
        page.goto(paths[0])
        toggle = page.get_by_role("button", name="Dark mode")
        expect(toggle).to_have_attribute("aria-pressed", "false")
        toggle.click()
        expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
        expect(toggle).to_have_attribute("aria-pressed", "true")  # a toggle button: its name stays, it is pressed
        for path in paths:
            page.goto(path)
            expect(page.locator("main h1.page-title").first).to_be_visible()
            expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")  # applied before paint
            page.add_script_tag(url=AXE)
            found = page.evaluate(AXE_RUN)
            if found:
                violations[path] = found
        session.screenshot(f"dark-{username}")
    assert violations == {}, f"axe-core violations in dark mode: {violations}"


def test_the_mobile_menu_button_opens_the_navigation_and_follows_a_link(open_session, org):
    session = open_session("bob", width=390)
    page = session.page
    nav = page.get_by_role("navigation", name="Main")
    menu = page.get_by_role("button", name="Menu")
    expect(nav).to_be_hidden()  # folded away at phone width
    expect(menu).to_have_attribute("aria-expanded", "false")
    menu.click()
    expect(nav).to_be_visible()
    expect(menu).to_have_attribute("aria-expanded", "true")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == [], "axe-core violations with the menu open"
    session.screenshot("menu-open-390")
    nav.get_by_role("link", name="Workloads").click()
    expect(page.locator("main h1.page-title")).to_contain_text("Workloads")
    expect(nav).to_be_hidden()  # a new page starts with it folded
    menu.click()
    expect(nav.get_by_role("link", name="Workloads")).to_have_attribute("aria-current", "page")
    expect(page.locator("#sidebar-menu")).to_have_class(re.compile(r"\bshow\b"))  # opened (no longer sliding)
    menu.click()
    expect(nav).to_be_hidden()


SPAN = "() => { const x = Chart.getChart(document.getElementById('chart-cpu')).options.scales.x; return x.max - x.min; }"


def test_the_metrics_range_picker_sets_the_charts_time_span(open_session, pages):
    session = open_session("bob")
    page = session.page
    path = next(p for p in pages["bob"] if p.startswith("/workloads/"))
    page.goto(path)
    picker = page.get_by_role("group", name="Time range")
    # a workload made minutes ago opens on the window that holds its life: 15 minutes
    expect(picker.get_by_role("button", name="15 min")).to_have_attribute("aria-pressed", "true")
    page.wait_for_function(f"() => typeof Chart !== 'undefined' && Chart.getChart(document.getElementById('chart-cpu'))"
                           f" && ({SPAN})() > 0")
    assert abs(page.evaluate(SPAN) - 900_000) < 60_000
    for label, seconds in (("1 h", 3_600), ("24 h", 86_400), ("15 min", 900)):
        with page.expect_response(lambda r: "/metrics?" in r.url):
            picker.get_by_role("button", name=label).click()
        expect(picker.get_by_role("button", name=label)).to_have_attribute("aria-pressed", "true")
        expect(picker.locator("[aria-pressed=true]")).to_have_count(1)
        page.wait_for_function(f"() => Math.abs(({SPAN})() - {seconds * 1000}) < 60000")
