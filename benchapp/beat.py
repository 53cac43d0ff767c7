"""A ``celery beat`` whose liveness can be checked: the scheduler writes a heartbeat file next
to its schedule file each time its loop turns, at least every ``BEAT_HEARTBEAT_SECONDS``.

The loop turning is what matters: a beat process that is up but stuck (a publish blocked on a
broker that does not answer, a hung database call in a schedule entry) stops writing, and
``python -m benchapp.beat --schedule FILE --max-age SECONDS`` (the compose file's health check
of the ``beat`` service) exits 1 saying how old the last heartbeat is. It needs no Django and
no broker, so it answers in a few milliseconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from celery.beat import PersistentScheduler

DEFAULT_HEARTBEAT_SECONDS = 15.0


def heartbeat_path(schedule: str | os.PathLike) -> Path:
    return Path(f"{os.fspath(schedule)}.heartbeat")


def write_heartbeat(path: Path, now: float | None = None) -> None:
    """Atomically replace ``path`` with the current time (seconds since the epoch)."""
    now = time.time() if now is None else now
    partial = path.with_name(path.name + ".partial")
    partial.write_text(f"{now:.3f}\n", encoding="ascii")
    os.replace(partial, path)


def heartbeat_seconds() -> float:
    from django.conf import settings

    return float(getattr(settings, "BEAT_HEARTBEAT_SECONDS", DEFAULT_HEARTBEAT_SECONDS))


class Scheduler(PersistentScheduler):
    """Celery's persistent scheduler, writing ``<schedule file>.heartbeat`` on every tick and
    ticking at least every ``BEAT_HEARTBEAT_SECONDS`` (benchapp.settings)."""

    def tick(self, *args, **kwargs):
        interval = super().tick(*args, **kwargs)
        try:
            write_heartbeat(heartbeat_path(self.schedule_filename))
        except OSError as exc:  # a full disk must not stop the schedule; the check will say
            self.logger.warning("beat heartbeat not written: %s", exc)
        # 0 means "call again at once" (an entry was just sent): keep it, never wait instead.
        every = heartbeat_seconds()
        return every if interval is None else min(interval, every)


def check(schedule: str, max_age: float, now: float | None = None) -> tuple[bool, str]:
    """(alive, what was found) for the beat whose schedule file is ``schedule``."""
    path = heartbeat_path(schedule)
    try:
        beat = float(path.read_text(encoding="ascii").strip())
    except (OSError, ValueError) as exc:
        return False, f"no beat heartbeat at {path} ({exc.__class__.__name__})"
    age = (time.time() if now is None else now) - beat
    if age > max_age:
        return False, f"beat's last heartbeat is {age:.0f} s old (more than {max_age:g} s)"
    return True, f"beat alive: last heartbeat {age:.1f} s ago"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Is celery beat alive? (exit 0 yes, 1 no)")
    parser.add_argument("--schedule", required=True, help="beat's --schedule file")
    parser.add_argument("--max-age", type=float, default=120.0, help="seconds (default 120)")
    args = parser.parse_args(argv)
    alive, message = check(args.schedule, args.max_age)
    print(message)
    return 0 if alive else 1


if __name__ == "__main__":
    sys.exit(main())
