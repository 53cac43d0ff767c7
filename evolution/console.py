"""A small terminal progress bar for long commands (stderr, redrawn in place)."""

from __future__ import annotations

import time


class ProgressBar:
    def __init__(self, stream, *, label: str, width: int = 30):
        self.stream = stream
        self.label = label
        self.width = width
        self.started = time.monotonic()
        self._last = ""

    def update(self, done: int, total: int, note: str = "") -> None:
        fraction = done / total if total else 1.0
        filled = int(self.width * fraction)
        elapsed = time.monotonic() - self.started
        line = (
            f"\r{self.label} [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
            f"{elapsed:5.0f}s {note}"
        )
        if line != self._last:
            self.stream.write(line[:200].ljust(len(self._last)))
            self.stream.flush()
            self._last = line

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()
