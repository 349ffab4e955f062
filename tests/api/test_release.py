"""A rendered API response's data is freed by reference counting, not left to Python's cyclic collector
(perf.release): under load the collector's passes over the pages in flight were the API's tail latency."""

import gc
import io

from django.core.signals import request_finished
from django.db import close_old_connections
from django.test.client import ClientHandler, RequestFactory

from studio.iam.auth import issue_token


def _get(path: str, query: str, token: str) -> tuple[int, bytes]:
    """A GET through Django's request handler, as the test client sends it, keeping nothing of the response."""
    environ = RequestFactory()._base_environ(PATH_INFO=path, QUERY_STRING=query, REQUEST_METHOD="GET",
                                            HTTP_AUTHORIZATION=f"Bearer {token}", SERVER_NAME="testserver")
    environ["wsgi.input"] = io.BytesIO(b"")
    response = ClientHandler()(environ)
    status, body = response.status_code, response.content
    request_finished.disconnect(close_old_connections)  # as the test client: the test's transaction stays open
    try:
        response.close()
    finally:
        request_finished.connect(close_old_connections)
    return status, body


def test_a_catalog_pages_entries_are_not_left_to_the_cyclic_collector(org, make_profile):
    for i in range(3):
        make_profile(f"lab-{i}")
    token = issue_token(user=org.users.member)["accessToken"]
    _get("/api/v1/catalog", f"projectId={org.a.id}", token)  # the first request of a process fills caches
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        status, body = _get("/api/v1/catalog", f"projectId={org.a.id}", token)
        gc.collect()
        entries = [o for o in gc.garbage if isinstance(o, dict) and "readmeHtml" in o]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert status == 200 and b"lab-2" in body
    assert entries == []
