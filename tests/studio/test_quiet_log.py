"""`make run` stays quiet after its banner: a request is a DEBUG line (studio.request), and a refusal the product
meant (a 403, a 404) is one line, at WARNING at most, with no traceback — as `make run` configures the log (DEBUG on,
the console format, LOG_LEVEL=INFO) and as production does (DEBUG off, JSON lines)."""

import contextlib
import io
import logging

import pytest
from django.test import Client
from django.utils.log import configure_logging

from studio.logs import logging_config


@contextlib.contextmanager
def _logged(settings, *, debug: bool, fmt: str):
    """A function that runs a request and answers what the log printed meanwhile, at LOG_LEVEL=INFO."""
    settings.DEBUG = debug
    out = io.StringIO()
    with contextlib.redirect_stderr(out):  # every handler made now writes here (Django's own ones too)
        configure_logging(settings.LOGGING_CONFIG, logging_config(level="INFO", fmt=fmt))

    def run(call):
        out.seek(0), out.truncate()
        response = call()
        return response, out.getvalue()

    try:
        yield run
    finally:
        configure_logging(settings.LOGGING_CONFIG, settings.LOGGING)


@pytest.fixture(params=[(True, "console"), (False, "json")], ids=["make-run", "production"])
def log_text(request, settings):
    debug, fmt = request.param
    with _logged(settings, debug=debug, fmt=fmt) as run:
        yield run


def quiet_refusal(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) <= 1 and "Traceback" not in text and not any(level in text.lower() for level in ("error", "critical"))


def test_an_answered_request_logs_nothing_at_info(log_text, client_for, org):
    response, text = log_text(lambda: client_for(org.users.member).get("/api/v1/org-unit/projects"))
    assert response.status_code == 200 and text == ""


@pytest.mark.parametrize("path", ["/api/v1/users", "/api/v1/service-accounts"])
def test_an_api_403_is_one_line_without_traceback(log_text, client_for, org, path):
    response, text = log_text(lambda: client_for(org.users.member).get(path))
    assert response.status_code == 403 and quiet_refusal(text), text


@pytest.mark.parametrize("path", ["/api/v1/workloads/00000000-0000-0000-0000-000000000000", "/api/v1/nothing-here"])
def test_an_api_404_is_one_line_without_traceback(log_text, client_for, org, path):
    response, text = log_text(lambda: client_for(org.users.member).get(path))
    assert response.status_code == 404 and quiet_refusal(text), text


def test_a_page_403_is_one_line_without_traceback(log_text, org):
    """A page refuses by raising PermissionDenied, which Django logs with the exception attached."""
    browser = Client()
    browser.force_login(org.users.member)
    response, text = log_text(lambda: browser.get("/org/users"))
    assert response.status_code == 403 and quiet_refusal(text), text


def test_a_server_error_still_logs_its_traceback_once(settings):
    """Only the expected refusals lose their traceback: a 500's stays, printed once by `make run`."""

    def fail():
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            logging.getLogger("django.request").exception("Internal Server Error: /x", extra={"status_code": 500})

    with _logged(settings, debug=True, fmt="console") as log_text:
        _, text = log_text(fail)
    assert "RuntimeError" in text and text.count("Traceback") == 1, text
