from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from .consumers import ClusterConsumer


class NoSuchStream(AsyncWebsocketConsumer):  # type: ignore[misc]
    """Any other WebSocket path (e.g. a slug that is no slug): the handshake is refused (403), where
    channels' router would raise and the server answer 500."""

    async def connect(self) -> None:
        await self.close()

    async def receive(self, *args: Any, **kwargs: Any) -> None:  # never accepted: nothing arrives
        return None


websocket_urlpatterns = [
    path("ws/clusters/<slug:slug>/", ClusterConsumer.as_asgi()),  # type: ignore[arg-type]
    re_path(r"", NoSuchStream.as_asgi()),  # type: ignore[arg-type]
]
