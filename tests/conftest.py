"""Shared test configuration."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]  # tests/test_tools.py runs pytest itself


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything under tests/browser/ is a browser test (run in its own session: `-m browser`)."""
    for item in items:
        if "/tests/browser/" in str(item.path):
            item.add_marker(pytest.mark.browser)
