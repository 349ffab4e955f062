"""Drive NVIDIA's web-viewer-sample's request sequence (scripts/kit_client_sequence.js, written from its source)
in Chromium, from a page on an origin of its own, against a PaaS Studio server through a client URL: CORS and
its preflights, the catalogue, create, 202 polling, the routes, end. The tests use it against their live server;
by hand, against `make run`:

    .venv/bin/python -m scripts.kit_client_check --server http://127.0.0.1:8000 --username admin --password …

It makes a client URL of the user's first project (or takes `--client-url`), prints each request and its answer,
and exits 0 once the session was ready with signaling and media routes and was ended. The server must allow the
page's origin (`CORS_ALLOWED_ORIGINS`; `make run` allows http://127.0.0.1:5173, which is where it serves it)."""

import argparse
import json
import os
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SEQUENCE = Path(__file__).with_name("kit_client_sequence.js")
PAGE = b"<!doctype html><meta charset=utf-8><title>Kit client</title><script src=/sequence.js></script>"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium-headless-shell")  # `make system-deps` installs it
FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


@contextmanager
def client_origin(port: int = 0):
    """A page on its own origin (http://127.0.0.1:<port>) that loads the sequence; yields the origin."""
    script = SEQUENCE.read_bytes()

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body, kind = (script, "text/javascript") if self.path == "/sequence.js" else (PAGE, "text/html")
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", port), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def run_sequence(page, origin: str, base: str, *, step=lambda: None, timeout: float = 120.0,
                 choose: dict | None = None, poll_ms: int = 1000) -> dict:
    """Open the client page and run the sequence against `base` (a client URL) as both app and stream server;
    `step` runs between checks (a test's sync round). Returns {"state", "error", "stream", "transcript"}."""
    page.goto(origin + "/")
    page.evaluate("([base, choose, pollMs]) => { window.kitClient.start(base, base, choose, pollMs); }",
                  [base, choose or {}, poll_ms])
    deadline = time.monotonic() + timeout
    while page.evaluate("window.kitClient.state") not in ("streaming", "failed"):
        if time.monotonic() > deadline:
            break
        step()
        time.sleep(0.3)
    if page.evaluate("window.kitClient.state") == "streaming":
        page.evaluate("(base) => window.kitClient.end(base)", base)
        while page.evaluate("window.kitClient.state") == "streaming" and time.monotonic() < deadline + 30:
            time.sleep(0.2)
    return page.evaluate("({state: window.kitClient.state, error: window.kitClient.error,"
                         " stream: window.kitClient.stream, transcript: window.kitClient.transcript})")


def transcript_lines(result: dict) -> list[str]:
    lines = []
    for entry in result["transcript"]:
        data = entry["data"]
        if isinstance(data, dict) and "items" in data:
            shown = {"count": data.get("count"), "items": [i.get("id") or i.get("version") for i in data["items"]]}
        elif isinstance(data, dict) and "status" in data:
            shown = {k: data[k] for k in ("id", "status", "routes", "projectChosenBy") if k in data}
        else:
            shown = data
        sent = f" {json.dumps(entry['body'])}" if entry["body"] is not None else ""
        lines.append(f"{entry['method']} {entry['url']}{sent} -> {entry['status']} {json.dumps(shown)}")
    return lines


def _api(server: str, path: str, body=None, token=None) -> dict:
    request = urllib.request.Request(server + path, data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {token}"} if token else {})})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", default="http://127.0.0.1:8000")
    parser.add_argument("--client-url", help="a client URL; else one is made for --username")
    parser.add_argument("--username", default="admin")
    parser.add_argument("--password", default=os.environ.get("DEMO_ADMIN_PASSWORD", ""))
    parser.add_argument("--origin-port", type=int, default=5173, help="where the client page is served")
    parser.add_argument("--app", help="the application to stream (default: the first listed)")
    args = parser.parse_args(argv)
    base = args.client_url
    if not base:
        token = _api(args.server, "/api/v1/token", {"grantType": "password", "username": args.username,
                                                   "password": args.password})["accessToken"]
        project = _api(args.server, "/api/v1/org-unit/projects", token=token)["projects"][0]
        base = _api(args.server, "/api/v1/kit/client-urls",
                    {"projectId": project["id"], "name": "web-viewer-sample check", "expiresInSeconds": 3600},
                    token=token)["url"]
    from playwright.sync_api import sync_playwright

    with client_origin(args.origin_port) as origin, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page()
        result = run_sequence(page, origin, base.rstrip("/"), timeout=300, choose={"app": args.app} if args.app else None)
        browser.close()
    print(f"client page at {origin}; app and stream server: {base.split('/kit-client/')[0]}/kit-client/kcu_[redacted]")
    print("\n".join(transcript_lines(result)))
    print(f"state: {result['state']}" + (f" ({result['error']})" if result["error"] else "")
          + (f"; stream: {json.dumps(result['stream'])}" if result["stream"] else ""))
    return 0 if result["state"] == "ended" else 1


if __name__ == "__main__":
    sys.exit(main())
