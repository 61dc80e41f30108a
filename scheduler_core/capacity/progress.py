"""A progress bar on the terminal for a query that runs over a second (nothing when not a terminal)."""

from __future__ import annotations

import time
from typing import TextIO

__all__ = ["TerminalProgress"]

WIDTH = 30
SHOW_AFTER = 1.0  # seconds
EVERY = 0.1  # seconds between redraws


class TerminalProgress:
    """`progress(done, total)` for a replay; `close()` clears the line it drew."""

    def __init__(self, label: str, stream: TextIO) -> None:
        self.label = label
        self.stream = stream
        self.enabled = stream.isatty()
        self.started = time.monotonic()
        self.drawn_at = 0.0
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.started < SHOW_AFTER or now - self.drawn_at < EVERY:
            return
        self.drawn_at = now
        if total > 0:
            filled = min(WIDTH, WIDTH * done // total)
            bar = f"[{'#' * filled}{' ' * (WIDTH - filled)}] {done}/{total}"
        else:
            bar = f"{done}"
        self.stream.write(f"\r{self.label}: {bar} pods")
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
