"""Playwright driving Debian's Chromium (it cannot download its own browser here) against live_server."""

import os
from pathlib import Path

import pytest

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]



@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls stay synchronous.
    # Set only while the browser runs, so later tests (and their subprocesses) don't inherit it.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run `make system-deps` (apt-get install chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield browser
        browser.close()
    if previous is None:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    else:
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


class Session:
    """A logged-in browser page that fails the test on any console error."""

    def __init__(self, browser, base_url, width=1280):
        self.context = browser.new_context(viewport={"width": width, "height": 900}, base_url=base_url)
        self.page = self.context.new_page()
        self.console_errors: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(
            f"{m.text} ({m.location.get('url', '')})"))
        self.page.on("response", lambda r: r.status >= 400 and self.console_errors.append(f"{r.status} {r.url}")
                     if r.request.resource_type in ("fetch", "xhr", "script", "stylesheet", "image") else None)
        self.page.on("pageerror", lambda e: self.console_errors.append(str(e)))
        self.page.on("dialog", lambda d: d.accept())

    def login(self, username, password="pw-for-tests-1"):
        self.page.goto("/login")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Log in").click()
        self.page.wait_for_url("**/")
        return self

    def screenshot(self, name: str):
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


@pytest.fixture
def open_session(browser, live_server):
    sessions = []

    def open_(username=None, width=1280):
        session = Session(browser, live_server.url, width)
        sessions.append(session)
        return session.login(username) if username else session

    yield open_
    errors = [e for s in sessions for e in s.console_errors]
    for session in sessions:
        session.context.close()
    assert errors == [], f"browser console errors: {errors}"
