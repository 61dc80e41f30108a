"""Django settings: an embedded default (SQLite, in-memory channel layer) unless the environment says otherwise."""

from __future__ import annotations

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent

SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "clusterviz-dev-only-not-secret")
DEBUG = os.environ.get("DJANGO_DEBUG", "0") == "1"
ALLOWED_HOSTS = os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "channels",
    "clusterviz",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "clusterviz.urls"
ASGI_APPLICATION = "clusterviz.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]

if os.environ.get("DATABASE_URL"):
    import dj_database_url

    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=0)}
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_DATABASE_NAME", "test_clusterviz")}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # WAL + a busy timeout: several server processes may share one file.
            "OPTIONS": {"timeout": 20, "init_command": "PRAGMA journal_mode=WAL;", "transaction_mode": "IMMEDIATE"},
            "TEST": {"NAME": os.environ.get("TEST_SQLITE_PATH", str(BASE_DIR / ".test-db.sqlite3"))},
        }
    }

if os.environ.get("REDIS_URL"):
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [os.environ["REDIS_URL"]], "capacity": 1000, "expiry": 30},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer", "CONFIG": {"capacity": 1000}}}

# How long a server process's claim to drive a cluster's control loops lasts without renewal (it renews
# every third of it): the longest a cluster stalls after its process is killed without a clean exit.
CLUSTERVIZ_LEASE_SECONDS = float(os.environ.get("CLUSTERVIZ_LEASE_SECONDS", "15"))

# The cluster stream (clusterviz/consumers.py): how much one client may fall behind before it is told
# to resync (close 4429), and how often an idle stream renews its group and checks the watch log.
CLUSTERVIZ_STREAM_BACKLOG_BYTES = int(os.environ.get("CLUSTERVIZ_STREAM_BACKLOG_BYTES", 4 * 1024 * 1024))
CLUSTERVIZ_STREAM_HEARTBEAT_SECONDS = float(os.environ.get("CLUSTERVIZ_STREAM_HEARTBEAT_SECONDS", 2.0))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# The largest dump a cluster import reads (clusterviz/imports.py; default 512 MiB).
CLUSTERVIZ_IMPORT_MAX_BYTES = int(os.environ.get("CLUSTERVIZ_IMPORT_MAX_BYTES", 512 * 1024 * 1024))

# Request bodies: up to the YAML limit of an import (scheduler_core.api.limits.MAX_YAML_BYTES) + slack.
DATA_UPLOAD_MAX_MEMORY_SIZE = 17 * 1024 * 1024

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Set STATIC_ROOT (and run collectstatic) for production; by default WhiteNoise serves from the finders.
STATIC_ROOT = os.environ.get("STATIC_ROOT") or None
WHITENOISE_USE_FINDERS = True

USE_TZ = True
TIME_ZONE = "UTC"
LANGUAGE_CODE = "en"
