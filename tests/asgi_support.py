"""config.asgi's application under uvicorn in a thread of the test process (so on the test database), for tests
of the WebSocket sessions: `asgi_server.url` serves HTTP (Django) and WebSocket (exec, attach, port-forward)."""

from __future__ import annotations

import socket
import threading

import uvicorn

from tests.workloads.cluster_support import wait_for


class AsgiServer:
    """config.asgi's application under uvicorn, in a thread of the test process (the test database's)."""

    def __init__(self):
        from config.asgi import application

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(application, lifespan="off", log_level="warning",
                                                    ws="websockets-sansio"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def start(self) -> AsgiServer:
        self.thread.start()
        wait_for(lambda: self.server.started, what="uvicorn serving config.asgi")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
