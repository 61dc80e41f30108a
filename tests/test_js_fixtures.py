"""The JS model's fixtures are what the core emits today (regenerate: python -m tests.js.make_fixtures)."""

from tests.js.make_fixtures import FIXTURE, render


def test_js_fixtures_match_the_core() -> None:
    assert FIXTURE.read_text() == render(), "stale: run `python -m tests.js.make_fixtures`"


def test_js_capacity_fixture_matches_the_core() -> None:
    from tests.js.make_capacity_fixture import FIXTURE as CAPACITY
    from tests.js.make_capacity_fixture import render as render_capacity

    assert CAPACITY.read_text() == render_capacity(), "stale: run `python -m tests.js.make_capacity_fixture`"
