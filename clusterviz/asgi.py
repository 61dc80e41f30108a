"""ASGI entry point: HTTP now; WebSockets join in with the live cluster."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "clusterviz.settings")

from django.core.asgi import get_asgi_application

django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter  # noqa: E402

application = ProtocolTypeRouter({"http": django_asgi_app})
