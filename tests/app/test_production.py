"""The production profile: settings from the environment, `check --deploy` clean for HTTPS, the
secret key, security headers and the load balancer's health endpoint."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from django.test import Client

from .servers import REPO, Processes, free_port, http_json, server_env, start_server

# The production environment README documents (an HTTPS deployment behind a TLS-terminating proxy).
PRODUCTION_ENV = {
    "DJANGO_SECRET_KEY": "k" * 10 + "-q8Zr2pLx7VnW4tYc9HbJ3sMd6FgK1eA5uRiO0yT8wQ2zX",
    "DJANGO_HTTPS": "1",
    "DJANGO_TRUST_X_FORWARDED_PROTO": "1",
    "ALLOWED_HOSTS": "clusterviz.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://clusterviz.example.org",
}


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "PYTEST", "CSRF_", "ALLOWED_"))}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**clean, "DJANGO_SETTINGS_MODULE": "clusterviz.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_under_the_documented_production_environment(tmp_path: Path) -> None:
    out = _manage(
        {**PRODUCTION_ENV, "SQLITE_PATH": str(tmp_path / "db.sqlite3")}, "check", "--deploy", "--fail-level", "DEBUG"
    )
    assert out.returncode == 0, out.stderr
    assert "System check identified no issues (0 silenced)." in out.stdout


def test_check_deploy_without_https_names_what_is_missing(tmp_path: Path) -> None:
    """The plain-http default is for one machine: `check --deploy` says what HTTPS would need."""
    env = {**PRODUCTION_ENV, "DJANGO_HTTPS": "0", "SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    out = _manage(env, "check", "--deploy", "--fail-level", "ERROR")
    assert out.returncode == 0, out.stderr
    for code in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert code in out.stderr
    assert "security.W009" not in out.stderr  # the key is never the weak one


def test_without_a_secret_key_one_is_generated_once_and_kept_private(tmp_path: Path) -> None:
    key_file = tmp_path / "secret"
    env = {"DJANGO_SECRET_KEY_FILE": str(key_file), "SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    script = "from django.conf import settings; print(settings.SECRET_KEY)"
    first = _manage(env, "shell", "-c", script)
    assert first.returncode == 0, first.stderr
    key = key_file.read_text().strip()
    assert first.stdout.strip().splitlines()[-1] == key and len(key) >= 50 and len(set(key)) >= 5
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    second = _manage(env, "shell", "-c", script)
    assert second.stdout.strip().splitlines()[-1] == key  # sessions survive a restart
    assert _manage(env, "check", "--deploy").stderr.count("security.W009") == 0


def test_without_a_secret_key_and_nowhere_to_keep_one_the_server_refuses_to_start(tmp_path: Path) -> None:
    env = {"DJANGO_SECRET_KEY_FILE": "/proc/clusterviz/secret", "SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    out = _manage(env, "check")
    assert out.returncode != 0
    assert "set DJANGO_SECRET_KEY" in out.stderr
    assert "/proc/clusterviz/secret" in out.stderr


def test_debug_uses_a_development_key_and_writes_no_file(tmp_path: Path) -> None:
    key_file = tmp_path / "secret"
    env = {"DJANGO_DEBUG": "1", "DJANGO_SECRET_KEY_FILE": str(key_file), "SQLITE_PATH": str(tmp_path / "db.sqlite3")}
    out = _manage(env, "shell", "-c", "from django.conf import settings; print(settings.DEBUG)")
    assert out.stdout.strip().splitlines()[-1] == "True", out.stderr
    assert not key_file.exists()


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy_without_inline_script(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 200
    policy = dict(
        part.strip().split(" ", 1) for part in response.headers["Content-Security-Policy"].split(";") if part.strip()
    )
    assert policy["script-src"] == "'self'"
    assert policy["default-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_no_template_has_inline_script_or_event_handlers() -> None:
    """What the CSP forbids must not be in the templates: scripts come from static files."""
    import re

    for template in (REPO / "templates").rglob("*.html"):
        text = template.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag, f"{template}: inline <script>"
        assert not re.search(r"\son[a-z]+\s*=", text), f"{template}: inline event handler"
        assert "javascript:" not in text, f"{template}: javascript: URL"


@pytest.mark.django_db
def test_healthz_answers_a_probe_by_ip_over_plain_http_even_in_https_mode(client: Client, settings: object) -> None:
    settings.SECURE_SSL_REDIRECT = True  # type: ignore[attr-defined]
    response = client.get("/healthz", HTTP_HOST="10.1.2.3")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok"}
    assert client.get("/", HTTP_HOST="127.0.0.1").status_code == 301  # everything else goes to https
    assert client.post("/healthz").status_code == 405


def test_healthz_on_a_real_server_reports_an_unreachable_database(processes: Processes) -> None:
    """uvicorn with a PostgreSQL URL where nothing listens: the process serves, /healthz says 503."""
    env = server_env(f"postgres://app@127.0.0.1:{free_port()}/app")
    server = start_server(processes, "uvicorn", env)
    status, body = http_json(f"{server.base_url}/healthz")
    assert (status, body) == (503, {"status": "unavailable", "database": "unreachable"})
    with urllib.request.urlopen(f"{server.base_url}/api/lessons", timeout=10) as response:
        assert response.status == 200  # the process itself is up


def test_healthz_on_the_dev_server(processes: Processes, tmp_path: Path) -> None:
    env = server_env(str(tmp_path / "db.sqlite3"))
    from .servers import manage

    manage(env, "migrate", "-v0")
    server = start_server(processes, "daphne", env)
    assert http_json(f"{server.base_url}/healthz") == (200, {"status": "ok", "database": "ok"})
