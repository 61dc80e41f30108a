"""A missing tool skips its tests locally and fails them under CI (tests/tools.py)."""

from __future__ import annotations

import pytest

from tests.tools import missing_tool, tools_required


@pytest.mark.parametrize(
    ("env", "required"),
    [
        ({}, False),
        ({"CI": "true"}, True),
        ({"CI": "1"}, True),
        ({"CI": "false"}, False),
        ({"CLUSTERVIZ_REQUIRE_TOOLS": "1"}, True),
    ],
)
def test_a_missing_tool_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], required: bool
) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("CLUSTERVIZ_REQUIRE_TOOLS", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert tools_required() is required
    expected = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(expected, match="kubectl not found"):
        missing_tool("kubectl not found")


def test_pytest_reports_a_missing_tool_under_ci_as_a_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """End to end: a pytest run whose test needs a missing tool is red under CI=true, skipped otherwise."""
    pytester.makepyfile(
        "from tests.tools import missing_tool\n"
        "def test_needs_tool():\n"
        "    missing_tool('no-such-tool is not installed')\n"
    )
    monkeypatch.delenv("CLUSTERVIZ_REQUIRE_TOOLS", raising=False)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest_inprocess(
        "-p", "no:django", "-p", "no:playwright", "-p", "no:base_url", "-p", "no:asyncio"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no-such-tool is not installed (required under CI=true*"])
    monkeypatch.setenv("CI", "false")
    result = pytester.runpytest_inprocess(
        "-p", "no:django", "-p", "no:playwright", "-p", "no:base_url", "-p", "no:asyncio"
    )
    result.assert_outcomes(skipped=1)
