"""The web tier's guard against slow clients (security round 3, S21), around the WSGI application.

gunicorn runs the application in gevent workers (gunicorn.conf.py): a connection is a greenlet, so a client that
sends its body a byte a minute holds a greenlet and a socket, not one of the worker processes, as it did with sync
workers (three such clients stalled a production web pod). This middleware completes that:

* **The body is read before the application runs**, within REQUEST_BODY_TIMEOUT_SECONDS for the whole body (a
  client trickling bytes gets no more time than one that stops): a stalled body is answered 408 and never reaches
  Django, so it holds no database connection, no request slot, nothing but its greenlet.
* **At most WEB_MAX_CONCURRENT_REQUESTS requests run the application at once per worker**, so a flood of whole,
  fast requests is queued in greenlets rather than opening a database connection each (the sync workers of before
  ran one per process). The slot is taken once the body is in and given back when the application returns its
  response (a streamed log is then sent without holding one). The probes (/healthz, /readyz) and /metrics take no
  slot: requests stuck on an unreachable cluster never make a pod look dead.

Outside a gevent worker (runserver, `make bench`'s gthread workers, tests) the body is still read first but there
is no deadline or slot: the server's own threads bound the work there."""

import io
import json
import time

from django.conf import settings

READ_CHUNK = 64 * 1024
UNSLOTTED = ("/healthz", "/readyz", "/metrics")


def _gevent_active() -> bool:
    try:
        from gevent import monkey
    except ImportError:
        return False
    return monkey.is_module_patched("socket")


class SlowClientGuard:
    def __init__(self, application):
        self.application = application
        self.green = _gevent_active()
        self.slots = None
        if self.green:
            from gevent.lock import BoundedSemaphore

            self.slots = BoundedSemaphore(settings.WEB_MAX_CONCURRENT_REQUESTS)

    def __call__(self, environ, start_response):
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        # Django refuses a body over DATA_UPLOAD_MAX_MEMORY_SIZE itself (413) without reading it; one without a
        # length (chunked) it does not read at all.
        if 0 < length <= (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or length):
            body = self._read(environ["wsgi.input"], length)
            if body is None:
                return _timed_out(start_response)
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
        if self.slots is None or environ.get("PATH_INFO") in UNSLOTTED:
            return self.application(environ, start_response)
        with self.slots:
            return self.application(environ, start_response)

    def _read(self, stream, length: int) -> bytes | None:
        """The whole body (shorter if the client closed early), or None when the deadline passed first."""
        deadline = time.monotonic() + settings.REQUEST_BODY_TIMEOUT_SECONDS
        chunks, left = [], length
        timeout = None
        if self.green:
            from gevent import Timeout

            timeout = Timeout(settings.REQUEST_BODY_TIMEOUT_SECONDS)
            timeout.start()
        try:
            while left > 0:
                chunk = stream.read(min(left, READ_CHUNK))
                if not chunk:
                    break
                chunks.append(chunk)
                left -= len(chunk)
                if time.monotonic() > deadline:
                    return None
        except BaseException as exc:  # gevent's Timeout is a BaseException
            if timeout is not None and exc is timeout:
                return None
            raise
        finally:
            if timeout is not None:
                timeout.close()
        return b"".join(chunks)


def _timed_out(start_response):
    body = json.dumps({"code": 408, "message": "The request body did not arrive in time "
                                               f"({settings.REQUEST_BODY_TIMEOUT_SECONDS} seconds)."}).encode()
    start_response("408 Request Timeout", [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                           ("Connection", "close")])
    return [body]
