"""ASGI entry point: pages, static files and the API over HTTP; the cluster stream over WebSockets."""

import asyncio
import logging
import os
from typing import Any

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clusterviz.settings")

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from clusterviz import import_process, shutdown  # noqa: E402
from clusterviz.controllers.runner import stop_runners  # noqa: E402
from clusterviz.routing import websocket_urlpatterns  # noqa: E402

shutdown.install()  # a SIGTERM ends the process within seconds, whatever requests were in flight


async def lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """ASGI lifespan (uvicorn): on shutdown, stop this process's control loops and release their leases,
    so that another (or a restarted) server process takes the clusters over at once, and stop its
    import workers (their jobs settled as interrupted: uvicorn then ends by the signal itself, without
    the interpreter's exit hooks that do it elsewhere)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            try:
                await stop_runners()
            except Exception:
                logging.getLogger(__name__).exception("stopping the control loops failed")
            await asyncio.to_thread(import_process.stop_all)
            await send({"type": "lifespan.shutdown.complete"})
            return


application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # The session (and user) tell the stream whether this browser holds the cluster's edit link.
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        "lifespan": lifespan,
    }
)
