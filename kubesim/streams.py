"""pods/exec, pods/attach and pods/portforward over WebSocket, as KWOK serves them for its fake nodes: the
Kubernetes channel protocols (`v5.channel.k8s.io`, `v4.channel.k8s.io`: binary frames whose first byte is the
channel — 0 stdin, 1 stdout, 2 stderr, 3 the error channel's Status, 4 resize; v5 adds 255, close a channel),
with something local standing in for the container:

- **exec** runs the command as a local process in a folder of its own per pod (KWOK's ClusterExec `local.workDir`):
  `<exec root>/<namespace>/<pod>/`, made on the first exec with `etc/hostname`, `home/`, `tmp/` and `workspace/`.
  The process runs in that folder, and absolute paths among the arguments are read inside it (`ls /` lists the
  pod's folder, not the host's; `cat /etc/hostname` is the pod's name): a stand-in, not a container. With `tty=true` it runs on a pseudo-terminal that resize frames size.
- **attach** sends what the container writes (its log, as it grows) on stdout until the caller closes.
- **portforward** (`v4.channel.k8s.io`, Kubernetes' WebSocket port-forward: per requested port a data channel 2i and
  an error channel 2i+1, each opened by a frame with the port as 2 bytes little-endian) connects to a local
  address standing in for the pod's port (KWOK's ClusterPortForward `target`): rules set with
  `KubeSim.forward_port` or `--port-forward PORT=HOST:PORT`.

Only the WebSocket handshake and framing of RFC 6455 that these need are here (no extensions)."""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import pty
import shutil
import signal
import socket
import struct
import subprocess
import termios
import threading
import time
from urllib.parse import parse_qs, urlsplit

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
EXEC_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
FORWARD_PROTOCOLS = ("v4.channel.k8s.io",)
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
TEXT, BINARY, CLOSE_FRAME, PING, PONG = 0x1, 0x2, 0x8, 0x9, 0xA
MAX_FRAME = 16 * 1024 * 1024
EXEC_SECONDS = 3600  # an exec session's longest life


class WebSocket:
    """A server-side WebSocket on a handler's connection, after the 101 answer."""

    def __init__(self, rfile, wfile, sock):
        self.rfile, self.wfile, self.sock = rfile, wfile, sock
        self.lock = threading.Lock()
        self.closed = False

    def send(self, payload: bytes, opcode: int = BINARY) -> bool:
        header = bytes([0x80 | opcode])
        size = len(payload)
        if size < 126:
            header += bytes([size])
        elif size < 1 << 16:
            header += bytes([126]) + struct.pack("!H", size)
        else:
            header += bytes([127]) + struct.pack("!Q", size)
        with self.lock:
            if self.closed and opcode != CLOSE_FRAME:
                return False
            try:
                self.wfile.write(header + payload)
                self.wfile.flush()
                return True
            except OSError:
                self.closed = True
                return False

    def channel(self, number: int, data: bytes) -> bool:
        return self.send(bytes([number]) + data)

    def close(self, code: int = 1000, reason: str = "") -> None:
        with self.lock:
            already, self.closed = self.closed, True
        if not already:
            self.send(struct.pack("!H", code) + reason.encode()[:120], CLOSE_FRAME)

    def _read(self, size: int) -> bytes:
        data = self.rfile.read(size)
        if len(data) != size:
            raise EOFError
        return data

    def receive(self) -> bytes | None:
        """The next data message (fragments joined); None once the caller closed or the connection ended."""
        parts = []
        try:
            while True:
                first, second = self._read(2)
                opcode, final = first & 0x0F, bool(first & 0x80)
                size = second & 0x7F
                if size == 126:
                    size = struct.unpack("!H", self._read(2))[0]
                elif size == 127:
                    size = struct.unpack("!Q", self._read(8))[0]
                if size > MAX_FRAME:
                    self.close(1009)
                    return None
                mask = self._read(4) if second & 0x80 else b""
                payload = self._read(size)
                if mask:
                    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
                if opcode == CLOSE_FRAME:
                    self.close(struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 1000)
                    return None
                if opcode == PING:
                    self.send(payload, PONG)
                    continue
                if opcode == PONG:
                    continue
                parts.append(payload)
                if final:
                    return b"".join(parts)
        except (EOFError, OSError, ValueError):
            self.closed = True
            return None


def upgrade(handler, supported: tuple[str, ...]) -> tuple[WebSocket, str] | None:
    """Answer 101 with the first of the caller's subprotocols that is supported; None (answered 400) when the
    request is no WebSocket upgrade or offers none of them."""
    headers = handler.headers
    key = headers.get("Sec-WebSocket-Key", "")
    offered = [p.strip() for p in headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
    chosen = next((p for p in offered if p in supported), None)
    if "websocket" not in headers.get("Upgrade", "").lower() or not key or chosen is None:
        return None
    accept = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
    handler.wfile.write((f"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         f"Sec-WebSocket-Accept: {accept}\r\nSec-WebSocket-Protocol: {chosen}\r\n\r\n").encode())
    handler.wfile.flush()
    handler.close_connection = True
    return WebSocket(handler.rfile, handler.wfile, handler.connection), chosen


def stream_query(path: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(path).query, keep_blank_values=True)


def _flag(query: dict, name: str, default: bool) -> bool:
    values = query.get(name)
    return default if not values else values[-1].lower() in ("true", "1")


def status(exit_code: int | None, message: str = "") -> bytes:
    """The error channel's last word: the Status kubelets send (Success, or NonZeroExitCode with the code)."""
    if exit_code == 0:
        return json.dumps({"metadata": {}, "status": "Success"}).encode()
    if exit_code is None:
        return json.dumps({"metadata": {}, "status": "Failure", "message": message, "reason": "InternalError",
                           "code": 500}).encode()
    return json.dumps({"metadata": {}, "status": "Failure", "message": message or
                       f"command terminated with non-zero exit code: exit status {exit_code}",
                       "reason": "NonZeroExitCode",
                       "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]}}).encode()


# --- exec -----------------------------------------------------------------------------------------------------

class Runtime:
    """The stand-ins for containers: a folder per pod for exec, and the local addresses of forwarded ports."""

    def __init__(self, root: str | None = None):
        self._root, self._own_root = root, root is None
        self.forwards: dict[tuple[str | None, str | None, int], tuple[str, int]] = {}
        self.lock = threading.Lock()

    @property
    def root(self) -> str:
        with self.lock:
            if self._root is None:
                import tempfile

                self._root = tempfile.mkdtemp(prefix="kubesim-exec-")
            return self._root

    def pod_root(self, namespace: str, pod: str) -> str:
        folder = os.path.join(self.root, namespace, pod)
        if not os.path.isdir(folder):
            for sub in ("etc", "home", "tmp", "workspace"):
                os.makedirs(os.path.join(folder, sub), exist_ok=True)
            with open(os.path.join(folder, "etc", "hostname"), "w") as out:
                out.write(pod + "\n")
        return folder

    def forward_port(self, port: int, target_port: int, host: str = "127.0.0.1", *, namespace: str | None = None,
                     pod: str | None = None) -> None:
        """Port `port` of the pods (all, a namespace's, or one) is served at host:target_port."""
        self.forwards[(namespace, pod, int(port))] = (host, int(target_port))

    def forward_target(self, namespace: str, pod: str, port: int) -> tuple[str, int] | None:
        for key in ((namespace, pod, port), (namespace, None, port), (None, None, port)):
            if key in self.forwards:
                return self.forwards[key]
        return None

    def cleanup(self) -> None:
        if self._own_root and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)


def _inside(argument: str) -> str:
    """An absolute path as the same path under the pod's folder, the process's working directory (`/` is `.`)."""
    if argument.startswith("/"):
        return argument.lstrip("/") or "."
    return argument


def run_exec(ws: WebSocket, protocol: str, query: dict, root: str, pod: str) -> None:
    command = query.get("command") or []
    stdin, stdout, stderr, tty = (_flag(query, "stdin", False), _flag(query, "stdout", True),
                                  _flag(query, "stderr", True), _flag(query, "tty", False))
    argv = [command[0], *(_inside(a) for a in command[1:])]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(root, "home"),
           "HOSTNAME": pod, "TERM": "xterm-256color" if tty else "dumb", "PS1": f"{pod}$ "}
    master = None
    try:
        if tty:
            master, slave = pty.openpty()
            process = subprocess.Popen(argv, cwd=root, env=env, stdin=slave, stdout=slave, stderr=slave,
                                       start_new_session=True)
            os.close(slave)
        else:
            process = subprocess.Popen(argv, cwd=root, env=env, start_new_session=True,
                                       stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                       stdout=subprocess.PIPE if stdout else subprocess.DEVNULL,
                                       stderr=subprocess.PIPE if stderr else subprocess.DEVNULL)
    except OSError as exc:
        if master is not None:
            os.close(master)
        message = (f'exec: "{command[0]}": executable file not found in $PATH' if isinstance(
            exc, FileNotFoundError) else f"exec failed: {exc.strerror}")
        ws.channel(ERROR, status(None, f"failed to exec in container: {message}"))
        ws.close()
        return

    def pump(read, channel: int):
        while True:
            try:
                data = read(65536)
            except OSError:  # the pty's other side closed (EIO): the process ended
                return
            if not data:
                return
            ws.channel(channel, data)

    pumps = []
    if tty:
        pumps.append(threading.Thread(target=pump, args=(lambda n: os.read(master, n), STDOUT), daemon=True))
    else:
        if stdout:
            pumps.append(threading.Thread(target=pump, args=(process.stdout.read1, STDOUT), daemon=True))
        if stderr:
            pumps.append(threading.Thread(target=pump, args=(process.stderr.read1, STDERR), daemon=True))
    for thread in pumps:
        thread.start()

    def input_loop():
        while True:
            message = ws.receive()
            if message is None:
                break
            if not message:
                continue
            channel, data = message[0], message[1:]
            try:
                if channel == STDIN and stdin:
                    if tty:
                        os.write(master, data)
                    else:
                        process.stdin.write(data)
                        process.stdin.flush()
                elif channel == RESIZE and tty:
                    size = json.loads(data or b"{}")
                    fcntl.ioctl(master, termios.TIOCSWINSZ,
                                struct.pack("HHHH", int(size.get("Height", 24)), int(size.get("Width", 80)), 0, 0))
                elif channel == CLOSE and protocol.startswith("v5") and data[:1] == bytes([STDIN]) and stdin \
                        and not tty:
                    process.stdin.close()
            except (OSError, ValueError, TypeError):
                continue
        if process.poll() is None:  # the caller went away: so does the session's process
            os.killpg(process.pid, signal.SIGHUP)

    threading.Thread(target=input_loop, daemon=True).start()
    try:
        code = process.wait(timeout=EXEC_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        code = process.wait()
    for thread in pumps:
        thread.join(timeout=5)
    if master is not None:
        os.close(master)
    ws.channel(ERROR, status(code, "" if code == 0 else f"command terminated with non-zero exit code: error "
                                                         f"executing command {command}, exit code {code}"))
    ws.close()


# --- attach ---------------------------------------------------------------------------------------------------

def run_attach(ws: WebSocket, log_text, stop: threading.Event, tick: float = 0.5) -> None:
    """What the container writes: `log_text()` (the log so far, None once the pod is gone) as it grows."""
    sent = 0
    threading.Thread(target=lambda: (_drain(ws), stop.set()), daemon=True).start()
    while not stop.is_set() and not ws.closed:
        text = log_text()
        if text is None:
            break
        data = text.encode()
        if len(data) > sent:
            ws.channel(STDOUT, data[sent:])
            sent = len(data)
        stop.wait(tick)
    ws.channel(ERROR, status(0))
    ws.close()


def _drain(ws: WebSocket) -> None:
    while ws.receive() is not None:
        pass  # what the caller types reaches no process: the simulated container reads no input


# --- port-forward ---------------------------------------------------------------------------------------------

def run_portforward(ws: WebSocket, ports: list[int], target, pod: str) -> None:
    """One connection per port to its stand-in, relayed on the port's data channel until either side closes."""
    connections = []
    for index, port in enumerate(ports):
        prefix = struct.pack("<H", port)
        ws.channel(2 * index, prefix)
        ws.channel(2 * index + 1, prefix)
        address = target(port)
        sock = None
        if address is not None:
            try:
                sock = socket.create_connection(address, timeout=10)
                sock.settimeout(None)
            except OSError:
                sock = None
        if sock is None:
            ws.channel(2 * index + 1, f"error forwarding port {port} to pod {pod}: failed to connect to "
                                      f"localhost:{port} inside namespace: connection refused".encode())
        connections.append(sock)
    if not any(connections):
        time.sleep(0.05)
        ws.close()
        return

    def from_target(index: int, sock: socket.socket):
        while True:
            try:
                data = sock.recv(65536)
            except OSError:
                data = b""
            if not data:
                ws.close()
                return
            ws.channel(2 * index, data)

    for index, sock in enumerate(connections):
        if sock is not None:
            threading.Thread(target=from_target, args=(index, sock), daemon=True).start()
    while True:
        message = ws.receive()
        if message is None:
            break
        if not message or message[0] % 2 or message[0] // 2 >= len(connections):
            continue
        sock = connections[message[0] // 2]
        if sock is not None:
            try:
                sock.sendall(message[1:])
            except OSError:
                break
    for sock in connections:
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
    ws.close()


def ports_of(query: dict) -> list[int]:
    ports = []
    for value in query.get("ports", []) + query.get("port", []):
        for part in value.split(","):
            if part.strip():
                ports.append(int(part))
    return ports
