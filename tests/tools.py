"""External tools the end-to-end suites need (kubectl, Chromium, redis-server, PostgreSQL).

Locally a missing tool skips its tests, with the reason. Under CI (`CI=true`) and in `./dev test`
(`CLUSTERVIZ_REQUIRE_TOOLS=1`) it fails them instead: a green run must have run every suite.
"""

from __future__ import annotations

import os

import pytest


def tools_required() -> bool:
    """True when a missing tool must fail the run rather than skip its tests."""
    flags = (os.environ.get("CI", ""), os.environ.get("CLUSTERVIZ_REQUIRE_TOOLS", ""))
    return any(flag.strip().lower() in ("1", "true", "yes") for flag in flags)


def missing_tool(reason: str) -> None:
    """Stop the current test because a tool is missing: a failure when tools are required, else a skip."""
    if tools_required():
        pytest.fail(f"{reason} (required under CI=true and in ./dev test)", pytrace=False)
    pytest.skip(reason)
