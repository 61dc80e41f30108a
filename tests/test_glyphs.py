"""Every symbol the browser UI writes as text has a font on this machine (stock Debian chromium with
the packages `./dev test` installs); symbols no font has are SVG icons (static/js/lib/icons.js)."""

from __future__ import annotations

import shutil
import subprocess
import unicodedata
from functools import cache
from pathlib import Path

from tests.tools import missing_tool

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [*ROOT.glob("static/js/**/*.js"), *ROOT.glob("templates/**/*.html"), ROOT / "static/css/app.css"]
SOURCES += [*ROOT.glob("locale/*/LC_MESSAGES/*.po"), *ROOT.glob("clusterviz/lessons/**/*.yaml")]


@cache
def has_font(char: str) -> bool:
    found = subprocess.run(
        ["fc-list", f":charset={ord(char):x}", "family"], capture_output=True, text=True, check=True
    ).stdout
    return bool(found.strip())


def shown_characters() -> dict[str, str]:
    """Each non-ASCII character of the UI's sources (letters of any script, symbols) → a file using it."""
    chars: dict[str, str] = {}
    for path in SOURCES:
        for char in path.read_text(encoding="utf-8"):
            if ord(char) > 0x7F and unicodedata.category(char)[0] in "LSNP" and char not in chars:
                chars[char] = str(path.relative_to(ROOT))
    return chars


def test_every_character_the_ui_shows_has_a_font() -> None:
    if shutil.which("fc-list") is None:
        missing_tool("fc-list not found: apt-get install fontconfig")
    missing = {
        f"{char} U+{ord(char):04X} ({where})" for char, where in shown_characters().items() if not has_font(char)
    }
    assert missing == set(), f"no font draws: {sorted(missing)} (use an SVG icon: static/js/lib/icons.js)"
