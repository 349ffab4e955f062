"""An HTTP proxy in front of an API server that fails chosen requests — a 503, or a connection closed without an
answer — so that a client's handling of one failed write can be tested exactly, not by racing a restart."""

import http.client
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

UNAVAILABLE = b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server is ' \
              b'currently unable to handle the request","reason":"ServiceUnavailable","code":503}'


class FaultyProxy:
    """`FaultyProxy(upstream_url).start()`; `.url`; `.fail(method, path, action, nth=1)` fails the nth request
    of `method` on exactly `path` (no query) with `action` "503" or "drop"; `.failed` lists what it failed."""

    def __init__(self, upstream: str):
        parts = urllib.parse.urlsplit(upstream)
        self.host, self.port = parts.hostname, parts.port
        self.rules = {}   # (method, path) -> [nth, action]
        self.seen = {}    # (method, path) -> requests so far
        self.failed = []  # (method, path, action)
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def start(self) -> "FaultyProxy":
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def fail(self, method: str, path: str, action: str, nth: int = 1) -> None:
        with self.lock:
            self.rules[(method, path)] = [nth, action]

    def _verdict(self, method: str, path: str) -> str | None:
        key = (method, path)
        with self.lock:
            self.seen[key] = self.seen.get(key, 0) + 1
            rule = self.rules.get(key)
            if rule is None or rule[0] != self.seen[key]:
                return None
            self.failed.append((method, path, rule[1]))
            return rule[1]

    def _handler(self):
        proxy = self

        class Handler(BaseHTTPRequestHandler):  # HTTP/1.0: one request per connection, bodies end at close
            def log_message(self, format, *args):  # noqa: A002
                pass

            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                verdict = proxy._verdict(self.command, urllib.parse.urlsplit(self.path).path)
                if verdict == "drop":
                    self.close_connection = True
                    return  # no status line: the client sees the connection close
                if verdict == "503":
                    self.send_response(503)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(UNAVAILABLE)))
                    self.end_headers()
                    self.wfile.write(UNAVAILABLE)
                    return
                upstream = http.client.HTTPConnection(proxy.host, proxy.port, timeout=120)
                headers = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "accept",
                                                                                  "content-type")}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                self.send_response(response.status)
                self.send_header("Content-Type", response.getheader("Content-Type") or "application/json")
                self.end_headers()
                try:
                    while line := response.readline():  # a watch: each event as it comes
                        self.wfile.write(line)
                        self.wfile.flush()
                except OSError:
                    pass
                finally:
                    upstream.close()

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _any  # noqa: N815

        return Handler
