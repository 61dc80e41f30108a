from django.apps import AppConfig


class ClustervizConfig(AppConfig):
    name = "clusterviz"
    default_auto_field = "django.db.models.BigAutoField"
