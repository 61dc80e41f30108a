"""The shared pause of Python's cycle collector (scheduler_core/collector.py)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from scheduler_core.collector import collector_paused


@pytest.fixture(autouse=True)
def _collector_running() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_paused_within_and_resumed_after_even_on_error() -> None:
    with pytest.raises(ValueError), collector_paused():
        assert not gc.isenabled()
        raise ValueError
    assert gc.isenabled()


def test_nested_pauses_resume_after_the_outermost() -> None:
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled(), "the inner pause ended; the outer one still holds"
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    with collector_paused():
        pass
    assert not gc.isenabled()


def test_overlapping_pauses_in_threads_resume_after_the_last() -> None:
    """Thread A pauses, B pauses, A ends while B still reads: the collector stays paused until B ends
    (a plain isenabled/disable/enable per pauser would resume it under B, or leave it off for good)."""
    a_paused, b_paused, a_done = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def a() -> None:
        with collector_paused():
            a_paused.set()
            b_paused.wait(5)
        a_done.set()

    def b() -> None:
        a_paused.wait(5)
        with collector_paused():
            b_paused.set()
            a_done.wait(5)
            seen["during B after A"] = gc.isenabled()

    threads = [threading.Thread(target=a), threading.Thread(target=b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"during B after A": False}
    assert gc.isenabled()
