"""The SECRET_KEY: from the environment, or generated once and kept in a file (never a fixed default
outside DEBUG)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.core.management.utils import get_random_secret_key

DEBUG_ONLY_KEY = "clusterviz-debug-only-key-never-used-without-DJANGO_DEBUG=1"


def env_flag(name: str, default: bool = False) -> bool:
    """A yes/no setting from the environment: 1/true/yes/on or 0/false/no/off (else the default)."""
    value = os.environ.get(name, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    return default


def secret_key(debug: bool, default_file: Path) -> str:
    """DJANGO_SECRET_KEY; else, in DEBUG, a fixed development key; else the key kept in
    DJANGO_SECRET_KEY_FILE (default `default_file`), generated there on first use."""
    if key := os.environ.get("DJANGO_SECRET_KEY", "").strip():
        return key
    if debug:
        return DEBUG_ONLY_KEY
    path = Path(os.environ.get("DJANGO_SECRET_KEY_FILE") or default_file)
    try:
        return _read_or_create(path)
    except OSError as exc:
        raise ImproperlyConfigured(
            f"no DJANGO_SECRET_KEY, and the generated key cannot be kept in {path} ({exc.strerror}): "
            "set DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE to a writable path)"
        ) from None


def _read_or_create(path: Path) -> str:
    if path.exists():
        key = path.read_text().strip()
        if len(key) < 50:
            raise ImproperlyConfigured(f"{path}: the secret key there is shorter than 50 characters")
        return key
    # Several processes may start at once: write a whole file aside, then link it into place; the
    # first link wins and everyone reads the winner's key.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".secret_key.")
    try:
        with os.fdopen(fd, "w") as out:
            out.write(get_random_secret_key() + "\n")
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)
    return path.read_text().strip()
