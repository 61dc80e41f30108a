"""Django settings: an embedded default (SQLite, in-memory channel layer) unless the environment says otherwise."""

from __future__ import annotations

import os
from pathlib import Path

from django.utils.csp import CSP

from clusterviz.log_redaction import install as install_log_redaction
from clusterviz.secret_key import env_flag, secret_key

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_flag("DJANGO_DEBUG")
# DJANGO_SECRET_KEY, else (DEBUG off) a random key generated once into DJANGO_SECRET_KEY_FILE
# (default: .secret_key beside manage.py, mode 0600). Several machines must share DJANGO_SECRET_KEY.
SECRET_KEY = secret_key(DEBUG, BASE_DIR / ".secret_key")
ALLOWED_HOSTS = os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# HTTPS deployments (DJANGO_HTTPS=1): secure cookies, redirect to https, HSTS. Behind a proxy that
# terminates TLS, DJANGO_TRUST_X_FORWARDED_PROTO=1 lets its X-Forwarded-Proto header say "https".
if env_flag("DJANGO_HTTPS"):
    SECURE_SSL_REDIRECT = env_flag("DJANGO_SECURE_SSL_REDIRECT", True)
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", 365 * 24 * 3600))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_flag("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_flag("DJANGO_HSTS_PRELOAD", True)
if env_flag("DJANGO_TRUST_X_FORWARDED_PROTO"):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# The page loads only its own scripts, styles and sockets: no inline script, nothing from elsewhere.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

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
    "clusterviz.health.health_check_middleware",  # first: a load balancer's probe needs no Host or https
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # the language: the switch's cookie, else the browser's Accept-Language (zh-CN → zh-hans)
    "django.middleware.locale.LocaleMiddleware",
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
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
            ]
        },
    }
]

if os.environ.get("DATABASE_URL"):
    import dj_database_url

    # Health checks: the shared sync thread keeps its connection between messages (clusterviz/shared_db.py)
    # and has it checked before its next query, so a restarted PostgreSQL costs no action.
    database = dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=0, conn_health_checks=True)
    DATABASES = {"default": database}
    DATABASES["default"]["TEST"] = {"NAME": os.environ.get("TEST_DATABASE_NAME", "test_clusterviz")}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # WAL + a busy timeout: several server processes may share one file. synchronous=NORMAL (WAL's
            # usual mode): commits do not wait for fsync; a killed process loses nothing, power loss at most
            # the last commits, and the file always stays consistent.
            "OPTIONS": {
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
            },
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
    # One process: channels' in-memory layer, without its per-message sweeps (clusterviz/channel_layer.py).
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "clusterviz.channel_layer.SharedCopyInMemoryChannelLayer",
            "CONFIG": {"capacity": 1000},
        }
    }

# How long a server process's claim to drive a cluster's control loops lasts without renewal (it renews
# every third of it): the longest a cluster stalls after its process is killed without a clean exit.
CLUSTERVIZ_LEASE_SECONDS = float(os.environ.get("CLUSTERVIZ_LEASE_SECONDS", "15"))
# The most pods one control-loop step schedules or starts at the instant pace (1: one by one)
CLUSTERVIZ_BATCH_PODS = int(os.environ.get("CLUSTERVIZ_BATCH_PODS", "1000"))

# The cluster stream (clusterviz/consumers.py): how much one client may fall behind before it is told
# to resync (close 4429), and how often an idle stream renews its group and checks the watch log.
CLUSTERVIZ_STREAM_BACKLOG_BYTES = int(os.environ.get("CLUSTERVIZ_STREAM_BACKLOG_BYTES", 4 * 1024 * 1024))
CLUSTERVIZ_STREAM_HEARTBEAT_SECONDS = float(os.environ.get("CLUSTERVIZ_STREAM_HEARTBEAT_SECONDS", 2.0))

install_log_redaction()  # no owner key in any log line (a legacy kubeconfig's path, an edit link's ?key=)
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# The largest dump a cluster import reads (clusterviz/imports.py; default 1 GiB: a 5,000-node `-o json` dump).
CLUSTERVIZ_IMPORT_MAX_BYTES = int(os.environ.get("CLUSTERVIZ_IMPORT_MAX_BYTES", 1024 * 1024 * 1024))

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
# English and Simplified Chinese (the lesson notes' language): templates and Python through gettext
# (locale/), the browser's strings through Django's JavaScript catalog, lessons in clusterviz/lessons/zh-Hans/.
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
