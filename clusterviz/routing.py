from django.urls import path

from .consumers import ClusterConsumer

websocket_urlpatterns = [
    path("ws/clusters/<slug:slug>/", ClusterConsumer.as_asgi()),  # type: ignore[arg-type]
]
