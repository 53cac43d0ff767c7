"""Decode pickles from untrusted datasets without executing anything.

LiveCodeBench ships private tests as base64(zlib(pickle(json string))). ``pickle.loads``
on such bytes is arbitrary code execution: a pickle can name any importable callable
(``os.system``) and have the unpickler call it. This loader refuses every pickle that
references a global (the only way a pickle reaches a callable or a class), and then checks
that what was built is plain data: str, int, float, bool, None, and lists and dicts of them
(dict keys must be str). Anything else is refused, never coerced.
"""

from __future__ import annotations

import io
import pickle
import zlib

# A zlib bomb must not exhaust memory before the pickle is even looked at: the default limit
# is settings.MAX_DECOMPRESSED_BYTES, enforced while decompressing.

_SCALARS = (str, int, float, bool, type(None))


class UnsafePickleError(ValueError):
    """The bytes are not a plain-data pickle; the message says why it was refused."""


class _DataOnlyUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        # GLOBAL, STACK_GLOBAL and the EXT* opcodes all resolve through here.
        raise UnsafePickleError(f"refused: pickle references a global ({module}.{name})")

    def persistent_load(self, pid):
        raise UnsafePickleError("refused: pickle uses a persistent id")


def _check_plain(value) -> None:
    """Raise unless ``value`` is JSON-shaped plain data. Iterative: deep or cyclic input
    (a pickle can build a list that contains itself) must not overflow the stack."""
    stack = [value]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        # Exact types: a pickle cannot build a subclass without a global anyway.
        if type(item) in _SCALARS:
            continue
        if type(item) is list:
            if id(item) in seen:
                raise UnsafePickleError("refused: pickle contains a self-referencing list")
            seen.add(id(item))
            stack.extend(item)
        elif type(item) is dict:
            if id(item) in seen:
                raise UnsafePickleError("refused: pickle contains a self-referencing dict")
            seen.add(id(item))
            for key, sub in item.items():
                if type(key) is not str:
                    raise UnsafePickleError(
                        f"refused: pickle holds a dict key of type {type(key).__name__}"
                    )
                stack.append(sub)
        else:
            raise UnsafePickleError(
                f"refused: pickle holds a {type(item).__name__}; only str, int, float, "
                "bool, None, list and dict are accepted"
            )


def safe_pickle_loads(data: bytes):
    """Unpickle ``data`` if it is plain data (see module docstring); else UnsafePickleError."""
    try:
        value = _DataOnlyUnpickler(io.BytesIO(data)).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # truncated or corrupt stream: any of a dozen exception types
        raise UnsafePickleError(f"not a readable pickle ({exc.__class__.__name__}: {exc})")
    _check_plain(value)
    return value


def bounded_zlib_decompress(data: bytes, *, limit: int | None = None) -> bytes:
    """zlib-decompress, refusing output larger than ``limit`` bytes (default
    settings.MAX_DECOMPRESSED_BYTES) with a ValueError; never holds more than that."""
    if limit is None:
        from django.conf import settings

        limit = settings.MAX_DECOMPRESSED_BYTES
    decompressor = zlib.decompressobj()
    try:
        out = decompressor.decompress(data, limit)
    except zlib.error as exc:
        raise ValueError(f"not zlib data ({exc})")
    if decompressor.unconsumed_tail:
        raise ValueError(f"decompresses to more than {limit} bytes (MAX_DECOMPRESSED_BYTES)")
    if not decompressor.eof:
        raise ValueError("truncated zlib data")
    return out
