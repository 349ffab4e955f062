"""The ASGI application: WebSocket sessions into running containers (exec, attach, port-forward:
workloads/api/streams.py) beside Django's own ASGI handler for every HTTP request.

A small router rather than Django Channels: the sessions are relays between two WebSockets (the caller's and the
cluster's, with the `websockets` library), with no channel layer, groups or consumers to keep, so Channels (and its
Redis channel layer) would add a framework for one route. Served by uvicorn (`make run`, deploy/'s web pods for
/api/v1/workloads/*/exec|attach|portforward); gunicorn's WSGI tier serves the rest in deploy/."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_application = get_asgi_application()

from studio.keys import require_keys  # noqa: E402  (needs the settings loaded above)
from workloads.api import streams  # noqa: E402

require_keys()


async def application(scope, receive, send):
    if scope["type"] == "websocket":
        found = streams.route(scope["path"])
        if found is None:
            return await streams.not_found(receive, send)
        return await streams.stream_session(scope, receive, send, *found)
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    return await django_application(scope, receive, send)
