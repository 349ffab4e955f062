"""exec, attach and port-forward: WebSocket sessions through the server (`/api/v1/workloads/{id}/exec|attach|
portforward`) in Kubernetes' channel protocols — frames whose first byte is the channel: 0 stdin, 1 stdout,
2 stderr, 3 the Status that ends an exec, 4 the terminal's size; v5 adds 255, closing a channel. A refusal is a
close code: 4400 bad input, 4401 not logged in, 4403 a role that may not, 4404 not found, 4409 no running pod."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
from urllib.parse import urlencode

from websockets.exceptions import ConnectionClosed, InvalidStatus, InvalidURI, WebSocketException
from websockets.protocol import State
from websockets.sync.client import connect

from paas_cli import __version__
from paas_cli.client import API_ERROR, NOT_AUTHORISED, NOT_FOUND, CliError, code_for

CHANNEL_PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"]
FORWARD_PROTOCOL = "v4.channel.k8s.io"
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
REFUSALS = {4400: API_ERROR, 4401: NOT_AUTHORISED, 4403: NOT_AUTHORISED, 4404: NOT_FOUND, 4409: API_ERROR}


def websocket_url(base: str, path: str, params: list) -> str:
    scheme, _, rest = base.partition("://")
    return {"https": "wss", "http": "ws"}.get(scheme, scheme) + "://" + rest + path + "?" + urlencode(params)


def open_session(base: str, token: str | None, path: str, params: list, protocols: list):
    if not token:
        raise CliError("not logged in: run `studio login` (or set STUDIO_TOKEN)", NOT_AUTHORISED)
    try:
        return connect(websocket_url(base, path, params), subprotocols=protocols, compression=None,
                       additional_headers={"Authorization": f"Bearer {token}"},
                       user_agent_header=f"paas-studio-cli/{__version__}", open_timeout=30, close_timeout=5,
                       max_size=None)
    except InvalidStatus as exc:
        status = exc.response.status_code
        raise CliError(f"the server answered {status} to the session", code_for(status)) from exc
    except (OSError, InvalidURI, WebSocketException, TimeoutError) as exc:
        raise CliError(f"cannot reach {base}: {exc.__class__.__name__}") from exc


def refusal(connection) -> CliError | None:
    """The server's refusal (a 44xx close code with its JSON reason), or None for an ordinary close."""
    code, reason = connection.close_code, connection.close_reason or ""
    if code is None or not 4000 <= code < 5000:
        return None
    try:
        body = json.loads(reason)
        message = body.get("message") or reason
    except (ValueError, AttributeError):
        body, message = None, reason or f"the session was refused ({code})"
    return CliError(message, REFUSALS.get(code, API_ERROR), body if isinstance(body, dict) else None)


def exit_code_of(status: dict) -> int:
    if status.get("status") == "Success":
        return 0
    for cause in (status.get("details") or {}).get("causes") or []:
        if cause.get("reason") == "ExitCode" and str(cause.get("message", "")).isdigit():
            return int(cause["message"])
    raise CliError(status.get("message") or "the session failed")


def terminal_session(base: str, token: str | None, path: str, params: list, *, stdin: bool, tty: bool) -> int:
    """exec or attach: stdout and stderr to ours, our stdin to the session; the command's exit code (or 0)."""
    connection = open_session(base, token, path, params, CHANNEL_PROTOCOLS)
    v5 = connection.subprotocol == "v5.channel.k8s.io"
    out, err = sys.stdout.buffer, sys.stderr.buffer
    restore = None
    if tty and stdin and os.isatty(0):
        import termios
        import tty as tty_module

        saved = termios.tcgetattr(0)
        tty_module.setraw(0)
        restore = lambda: termios.tcsetattr(0, termios.TCSADRAIN, saved)  # noqa: E731

        def resize(*_):
            columns, lines = os.get_terminal_size(0)
            try:
                connection.send(bytes([RESIZE]) + json.dumps({"Width": columns, "Height": lines}).encode())
            except (ConnectionClosed, OSError):
                pass

        resize()
        signal.signal(signal.SIGWINCH, resize)
    if stdin:
        def pump():
            while True:
                try:
                    data = os.read(0, 65536)
                except OSError:
                    data = b""
                try:
                    if not data:
                        if v5:
                            connection.send(bytes([CLOSE, STDIN]))
                        return
                    connection.send(bytes([STDIN]) + data)
                except (ConnectionClosed, OSError):
                    return

        threading.Thread(target=pump, daemon=True).start()
    code = 0
    try:
        for message in connection:
            if not isinstance(message, bytes) or not message:
                continue
            channel, data = message[0], message[1:]
            if channel == STDOUT:
                out.write(data)
                out.flush()
            elif channel == STDERR:
                err.write(data)
                err.flush()
            elif channel == ERROR and data:
                try:
                    status = json.loads(data)
                except ValueError:
                    raise CliError(data.decode("utf-8", "replace")) from None
                code = exit_code_of(status)
    except ConnectionClosed:
        pass
    finally:
        if restore is not None:
            restore()
        connection.close()
    refused = refusal(connection)
    if refused is not None:
        raise refused
    return code


@contextlib.contextmanager
def threads_spare_ctrl_c():
    """Threads started inside (a session's, a relay's) have SIGINT blocked, so Ctrl-C reaches the main thread.
    Python runs a signal's handler only there; a SIGINT that landed on another thread was not always handled
    (a full test run found a port-forward still in its accept loop 30 s after Ctrl-C, twice)."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: Ctrl-C is an event there, not a thread's signal
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)  # a Ctrl-C meanwhile is delivered now


class PortForward:
    """A local listener; each connection to it is one session (Kubernetes' WebSocket port-forward carries one
    connection per port), opened before the first is accepted so that a refusal ends the command at once."""

    def __init__(self, base: str, token: str | None, path: str, params: list, address: str, local_port: int):
        self.base, self.token, self.path, self.params = base, token, path, params
        self.waiting = self._open()
        self.listener = socket.create_server((address, local_port))
        self.address = self.listener.getsockname()

    def _open(self):
        with threads_spare_ctrl_c():
            connection = open_session(self.base, self.token, self.path, self.params, [FORWARD_PROTOCOL])
        try:
            # Each of the port's two channels (data, error) opens with the port, 2 bytes little-endian.
            opening = [connection.recv(timeout=30), connection.recv(timeout=30)]
        except (ConnectionClosed, TimeoutError):
            connection.close()
            refused = refusal(connection)
            raise refused or CliError("the server closed the port-forward session") from None
        if any(not isinstance(frame, bytes) or len(frame) != 3 for frame in opening):
            connection.close()
            raise CliError("the server did not open the port's channels")
        return connection

    def serve(self) -> None:
        # Ctrl-C's signal does not interrupt accept() when it lands on another thread (threads_spare_ctrl_c keeps
        # it off ours; the process may have others): waking every half second lets the main thread handle it.
        self.listener.settimeout(0.5)
        while True:
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            client.settimeout(None)
            connection, self.waiting = self.waiting, None
            if connection is not None and connection.protocol.state is not State.OPEN:
                connection = None  # the first session, opened at the start, ended while nobody connected
            if connection is None:
                try:
                    connection = self._open()
                except CliError as exc:
                    print(f"studio: {exc.message}", file=sys.stderr, flush=True)
                    client.close()
                    continue
            with threads_spare_ctrl_c():
                threading.Thread(target=self.relay, args=(client, connection), daemon=True).start()

    @staticmethod
    def relay(client: socket.socket, connection) -> None:
        def upward():
            while True:
                try:
                    data = client.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    connection.close()
                    return
                try:
                    connection.send(bytes([0]) + data)
                except (ConnectionClosed, OSError):
                    return

        threading.Thread(target=upward, daemon=True).start()
        try:
            for message in connection:
                if not isinstance(message, bytes) or not message:
                    continue
                if message[0] == 0:
                    client.sendall(message[1:])
                elif message[0] == 1 and message[1:]:
                    print(f"studio: {message[1:].decode('utf-8', 'replace')}", file=sys.stderr, flush=True)
        except (ConnectionClosed, OSError):
            pass
        finally:
            try:
                client.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            client.close()
