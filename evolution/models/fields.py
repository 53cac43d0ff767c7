"""Compressed storage for large text payloads (stress tests, model exchanges)."""

from __future__ import annotations

import zlib

# Payloads above this size are stored zlib-compressed in a BinaryField.
INLINE_LIMIT = 16 * 1024


def pack_text(value: str | None) -> tuple[str, bytes | None]:
    """Return (inline_text, compressed_blob): exactly one of them carries the value."""
    value = value or ""
    if len(value) <= INLINE_LIMIT:
        return value, None
    return "", zlib.compress(value.encode("utf-8"), 6)


def unpack_text(inline: str, blob: bytes | memoryview | None) -> str:
    if blob:
        return zlib.decompress(bytes(blob)).decode("utf-8")
    return inline or ""


def compress_json_text(value: str) -> bytes:
    return zlib.compress(value.encode("utf-8"), 6)


def decompress_text(blob: bytes | memoryview | None) -> str:
    return zlib.decompress(bytes(blob)).decode("utf-8") if blob else ""
