"""Line-numbered reading of JSONL input and typed field access with precise errors."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from datetime import UTC, datetime

from .errors import SeedImportError


def iter_jsonl(
    *, path: str | None = None, content: str | None = None
) -> Iterator[tuple[int, dict]]:
    """Yield (line number, JSON object) for every non-blank line of a file or a string.

    Line numbers are 1-based and count blank lines, so they match what an editor shows.
    A ``.gz`` path is read through gzip. Raises SeedImportError naming the line on bad
    UTF-8, bad JSON, or a line that is not a JSON object.
    """
    if (path is None) == (content is None):
        raise SeedImportError("give exactly one of a file path or the file content")
    if content is not None:
        # split("\n"), not splitlines(): exported text may hold U+2028 and friends inside
        # JSON strings, and those are not line ends in JSONL.
        yield from _parse_lines(_bounded(enumerate(content.split("\n"), start=1)))
        return
    opener = gzip.open if path.endswith(".gz") else open
    try:
        handle = opener(path, "rb")
    except OSError as exc:
        raise SeedImportError(f"cannot read {path}: {exc.strerror or exc}")
    with handle:
        yield from _parse_lines(_decoded(handle))


def _line_limit() -> int:
    from django.conf import settings

    return settings.MAX_IMPORT_LINE_BYTES


def _too_long(number: int, size: int, limit: int) -> SeedImportError:
    return SeedImportError(
        f"the line is longer than {limit} bytes (MAX_IMPORT_LINE_BYTES); nothing was imported",
        line=number,
    )


def _bounded(lines) -> Iterator[tuple[int, str]]:
    limit = _line_limit()
    for number, text in lines:
        # Characters bound bytes from below; only a line that may be too long is encoded.
        if len(text) * 4 > limit and len(text.encode("utf-8")) > limit:
            raise _too_long(number, len(text), limit)
        yield number, text


def _decoded(handle) -> Iterator[tuple[int, str]]:
    limit = _line_limit()
    number = 0
    while True:
        # readline(limit + 1) never holds more than the limit of one line in memory.
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw.rstrip(b"\r\n")) > limit:
            raise _too_long(number, len(raw), limit)
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SeedImportError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", line=number)


NUL_MESSAGE = "contains a NUL character (U+0000), which no text field accepts"


def nul_field(value, path: str = "") -> str | None:
    """The path (``tests[2].input``) of the first string or key in ``value`` that holds a NUL
    character, which PostgreSQL cannot store in text; None when there is none. A NUL inside
    a key is written ``\\x00`` in the path, so the path itself can be stored."""
    if isinstance(value, str):
        return (path or "(value)") if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = str(key).replace("\x00", "\\x00")
            here = f"{path}.{name}" if path else name
            if "\x00" in str(key):
                return here
            if (found := nul_field(item, here)) is not None:
                return found
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            if (found := nul_field(item, f"{path}[{index}]")) is not None:
                return found
    return None


def refuse_nul(value: dict, *, line: int | None) -> None:
    """SeedImportError naming the line and the field when a record holds a NUL character."""
    if (field := nul_field(value)) is not None:
        raise SeedImportError(NUL_MESSAGE, line=line, field=field)


def _parse_lines(lines) -> Iterator[tuple[int, dict]]:
    for number, text in lines:
        if not text.strip():
            continue
        if "\x00" in text:
            raise SeedImportError("contains a NUL byte, which no text field accepts", line=number)
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SeedImportError(f"bad JSON: {exc.msg} at column {exc.colno}", line=number)
        if not isinstance(value, dict):
            raise SeedImportError(
                f"expected a JSON object, got {type(value).__name__}", line=number
            )
        # Only a line holding an escape (\u0000, any case) can decode to a NUL.
        if "0000" in text:
            refuse_nul(value, line=number)
        yield number, value


def check_size(value: str, *, limit_name: str, line: int | None, field: str) -> None:
    """SeedImportError naming the line and field when ``value`` exceeds settings.<limit_name>
    bytes of UTF-8."""
    from django.conf import settings

    limit = getattr(settings, limit_name)
    # Characters bound bytes from below (at most 4 bytes each): encode only when needed.
    if len(value) > limit or (len(value) * 4 > limit and len(value.encode("utf-8")) > limit):
        raise SeedImportError(
            f"is larger than {limit} bytes ({limit_name}); nothing was imported",
            line=line,
            field=field,
        )


class Fields:
    """Typed access to one JSON object; every failure names the line and the field."""

    def __init__(self, obj: dict, *, line: int | None, prefix: str = ""):
        self.obj = obj
        self.line = line
        self.prefix = prefix

    def name(self, key: str) -> str:
        return f"{self.prefix}{key}"

    def fail(self, key: str, message: str):
        raise SeedImportError(message, line=self.line, field=self.name(key))

    def required_text(self, key: str) -> str:
        """A present, non-blank string (ints are accepted for ids and turned into text)."""
        value = self.obj.get(key)
        if value is None:
            self.fail(key, "is missing")
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {type(value).__name__}")
        if not value.strip():
            self.fail(key, "must not be empty")
        return value

    def text(self, key: str, default: str = "") -> str:
        value = self.obj.get(key)
        if value is None:
            return default
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {type(value).__name__}")
        return value

    def choice(self, key: str, choices, default: str | None = None) -> str:
        value = self.obj.get(key, default)
        if value not in choices:
            self.fail(key, f"must be one of {', '.join(choices)}, got {value!r}")
        return value

    def number(self, key: str, default: float, *, above: float) -> float:
        value = self.obj.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(key, f"must be a number, got {type(value).__name__}")
        if not value > above:
            self.fail(key, f"must be greater than {above}, got {value}")
        return float(value)

    def integer(self, key: str, default: int | None, *, minimum: int) -> int:
        value = self.obj.get(key, default)
        if value is None:
            self.fail(key, "is missing")
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {type(value).__name__}")
        if value < minimum:
            self.fail(key, f"must be at least {minimum}, got {value}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        value = self.obj.get(key, default)
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, got {value!r}")
        return value

    def mapping(self, key: str) -> dict:
        """An object, or a string holding a JSON object ('' and null mean {})."""
        value = self.obj.get(key)
        if value is None or value == "":
            return {}
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                self.fail(key, f"is a string but not JSON ({exc.msg})")
        if not isinstance(value, dict):
            self.fail(key, f"must be an object, got {type(value).__name__}")
        return value

    def optional_text(self, key: str) -> str | None:
        value = self.obj.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            self.fail(key, f"must be a non-empty string or null, got {value!r}")
        return value

    def timestamp(self, key: str) -> str | None:
        """An ISO 8601 date-time, returned normalised to UTC ISO text (naive means UTC)."""
        value = self.obj.get(key)
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            self.fail(key, f"must be an ISO 8601 date-time string, got {type(value).__name__}")
        return normalise_timestamp(value, fail=lambda msg: self.fail(key, msg))


def normalise_timestamp(value: str, *, fail) -> str:
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        fail(f"is not an ISO 8601 date-time: {value!r}")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC).isoformat()
