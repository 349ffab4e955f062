"""Playwright driving Debian's Chromium (it cannot download its own browser here) against live_server."""

import os
import sys
import threading
import time
from pathlib import Path

import pytest

from tests import docs_output

# Debian's chromium-headless-shell: the same Chromium build without the browser's window layer, as Playwright runs
# headless by default. test_policy_form alone took 169 CPU s with it against 194 with the full browser in
# --headless=new (the renderers 112 against 123, the browser process 9 against 21).
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell")
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]



@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect, sync_playwright

    # An assertion waits as long as an action (Session's 15 s), not Playwright's 5 s: on a loaded machine an htmx
    # answer took longer than 5 s (test_profile_pages, stop 64's full run). A true condition returns at once.
    expect.set_options(timeout=15_000)

    # Playwright's sync API runs an event loop in this thread; the test's own ORM calls stay synchronous.
    # Set only while the browser runs, so later tests (and their subprocesses) don't inherit it.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: run `make system-deps` (apt-get install chromium-headless-shell)"
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
        self.page.set_default_timeout(15_000)  # a page here answers in well under a second
        self.base_url = base_url
        self.console_errors: list[tuple[str, str]] = []  # (message, the URL it is about)
        self.expected_failures: set[str] = set()
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(
            (f"{m.text} ({m.location.get('url', '')})", m.location.get("url", ""))))
        self.page.on("response", lambda r: r.status >= 400 and self.console_errors.append((f"{r.status} {r.url}", r.url))
                     if r.request.resource_type in ("fetch", "xhr", "script", "stylesheet", "image") else None)
        self.page.on("pageerror", lambda e: self.console_errors.append((str(e), "")))
        self.page.on("dialog", self._accept)

    def _accept(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.accept()

    def goto_expecting(self, path: str, status: int):
        """Open a page that must answer `status` (a 404 for what the user may not see); the browser's report
        of that failed page is expected, not an error of the test."""
        response = self.page.goto(path)
        assert response.status == status, f"{path}: {response.status}"
        self.expected_failures.add(self.base_url + path)
        return response

    def errors(self) -> list[str]:
        return [message for message, url in self.console_errors if url not in self.expected_failures]

    def login(self, username, password="pw-for-tests-1"):
        self.page.goto("/login")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Log in").click()
        self.page.wait_for_url("**/")
        return self

    def confirm(self, button: str, *, says: str = ""):
        """Answer the page's confirmation dialog (a modal, never the browser's confirm()) with `button`."""
        from playwright.sync_api import expect

        dialog = self.page.get_by_role("dialog")
        expect(dialog).to_be_visible()
        if says:
            expect(dialog).to_contain_text(says)
        dialog.get_by_role("button", name=button).click()
        expect(dialog).to_be_hidden()

    def screenshot(self, name: str):
        """docs/screenshots/<name>.png when refreshing the docs (STUDIO_REFRESH_DOCS=1), else the run's own."""
        self.page.screenshot(path=str(docs_output.folder("screenshots") / f"{name}.png"), full_page=True)


def _serving(thread: threading.Thread) -> bool:
    """Whether a live-server thread is answering a request (its stack holds wsgiref's handler running the app),
    rather than waiting on a kept-alive connection for the next request line, which may never come."""
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_filename.endswith(os.path.join("wsgiref", "handlers.py")):
            return True
        frame = frame.f_back
    return False


def live_requests_finish(timeout: float = 10.0) -> None:
    """Wait for the live server's requests still running when the browser closed (a page's polling, a chart's
    fetch): the database flush after the test would otherwise race one of them, and PostgreSQL answers TRUNCATE
    of every table and a query's locks taken one by one with a deadlock ("Database couldn't be flushed").
    Threads idle on a kept-alive connection are not waited for: they hold no database work, and waiting for them
    cost every browser test its full timeout (about ten minutes of a run)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        # ThreadingMixIn's request threads: Thread(target=server.process_request_thread), named after it
        busy = [t for t in threading.enumerate() if t.name.endswith("(process_request_thread)") and _serving(t)]
        if not busy:
            return
        busy[0].join(min(0.05, max(0.0, deadline - time.monotonic())))


@pytest.fixture
def open_session(browser, live_server):
    sessions = []

    def open_(username=None, width=1280):
        session = Session(browser, live_server.url, width)
        sessions.append(session)
        return session.login(username) if username else session

    yield open_
    errors = [e for s in sessions for e in s.errors()]
    for session in sessions:
        session.context.close()
    live_requests_finish()
    assert errors == [], f"browser console errors: {errors}"
