"""The JS compare model's fixture is what the core emits today (regenerate: python -m tests.js.make_compare_fixture)."""

from tests.js.make_compare_fixture import FIXTURE, render


def test_js_compare_fixture_matches_the_core() -> None:
    assert FIXTURE.read_text() == render(), "stale: run `python -m tests.js.make_compare_fixture`"
