"""Real servers on loopback for the notifications' tests: an SMTP server (aiosmtpd) that keeps every message it
is given, with a login it checks, and an HTTP receiver (http.server in a thread) that keeps every request and
answers the statuses a test queues (then 200 with Slack's `{"ok": true}`)."""

import json
import socket
import threading
from collections import deque
from email import message_from_bytes, policy
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SmtpServer:
    def __init__(self, *, username: str = "mailer", password: str = "smtp-pass-9f2"):
        self.username, self.password = username, password
        self.messages: list = []  # (envelope sender, recipients, email.message.EmailMessage)
        self.logins: list = []
        self.received = threading.Event()
        self.port = free_port()
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port, authenticator=self._authenticate,
                                     auth_require_tls=False)

    def _authenticate(self, server, session, envelope, mechanism, auth_data):
        login, password = auth_data.login.decode(), auth_data.password.decode()
        self.logins.append((mechanism, login))
        return AuthResult(success=(login, password) == (self.username, self.password))

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos),
                              message_from_bytes(envelope.original_content, policy=policy.default)))
        self.received.set()
        return "250 Message accepted for delivery"

    def __enter__(self):
        self.controller.start()
        return self

    def __exit__(self, *exc):
        self.controller.stop()


class HttpReceiver:
    def __init__(self):
        self.requests: list[dict] = []
        self.statuses: deque = deque()  # answered first, one per request
        self.answers: dict[str, dict] = {}  # a path's JSON answer (when it answers 200)
        self.received = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status = receiver.statuses.popleft() if receiver.statuses else 200
                ok = receiver.answers.get(self.path.split("?")[0], {"ok": True, "app_id": "A0TEST"})
                answer = json.dumps(ok if status == 200 else {"ok": False}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                if status == 200:
                    receiver.received.set()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
