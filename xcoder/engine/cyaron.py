"""Tool-based test generation (section 2 (ii), appendix D.2): the generator program a model
writes against the CYaRon library, and the framing that brings its test files out of the
sandbox.

The sandbox runs Debian's interpreter with nothing but the standard library, so CYaRon travels
with the program: ``generator_program`` prepends the sources of the installed ``cyaron`` package
(a project dependency, pinned in pyproject.toml) and of ``xeger``, the one package it needs, as
an in-memory importer (no file is written for them, nothing on the sandbox's read-only mounts
changes, and the docker backend's plain image works the same). CYaRon's optional ``colorful``
(coloured log lines) is left out; CYaRon falls back to plain output without it.

The model's program runs as ``__main__`` with ``--seed`` in an empty directory of the sandbox's
own /tmp and writes each test case to its own ``<category>_<characteristics>.in`` file, as the
document's generators do. When it ends, the wrapper sends every ``.in`` file back on stdout,
one frame each (``#XCODER-CASE <chars> <name>`` then the text), ending with
``#XCODER-END <count>``; what the program itself printed is kept aside and sent as one
``#XCODER-STDOUT`` frame only when it wrote no file (a generator that prints the JSON
``{"test_cases": [...]}`` object instead is still read).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Callable, Iterator
from functools import cache

from evolution.llm.parsing import ParseError

VENDORED = ("cyaron", "xeger")
CATEGORIES = ("nominal", "complex", "boundary", "stress")
# Words of a file name that say which E.2 category a test is (the first one found decides).
_CATEGORY_WORDS = {
    "nominal": "nominal",
    "base": "nominal",
    "basic": "nominal",
    "small": "nominal",
    "sample": "nominal",
    "complex": "complex",
    "medium": "complex",
    "random": "complex",
    "boundary": "boundary",
    "edge": "boundary",
    "corner": "boundary",
    "min": "boundary",
    "minimum": "boundary",
    "stress": "stress",
    "large": "stress",
    "max": "stress",
    "maximum": "stress",
    "big": "stress",
}
_FRAME = re.compile(r"#XCODER-(CASE|STDOUT|END) (\d+)(?: (.*))?\n")


@cache
def vendored_sources() -> dict[str, str]:
    """{module name: source} of CYaRon and xeger as installed (their own test suites left out).
    Raises ModuleNotFoundError when CYaRon is not installed."""
    sources: dict[str, str] = {}
    for package in VENDORED:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ModuleNotFoundError(f"{package} is not installed (pip install cyaron)")
        root = list(spec.submodule_search_locations)[0]
        for directory, dirs, names in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in ("tests", "__pycache__"))
            for name in sorted(names):
                if not name.endswith(".py"):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, os.path.dirname(root))[: -len(".py")]
                module = relative.replace(os.sep, ".")
                with open(path, encoding="utf-8") as handle:
                    sources[module] = handle.read()
    return sources


def cyaron_version() -> str:
    from importlib.metadata import version

    return version("cyaron")


_IMPORTER = """
import importlib.abc as _abc, importlib.util as _util, sys as _sys
_VENDORED = %(sources)s
class _Vendored(_abc.MetaPathFinder, _abc.Loader):
    def _key(self, name):
        if name + ".__init__" in _VENDORED:
            return name + ".__init__"
        return name if name in _VENDORED else None
    def find_spec(self, name, path=None, target=None):
        key = self._key(name)
        if key is None:
            return None
        return _util.spec_from_loader(name, self, is_package=key.endswith(".__init__"))
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        key = self._key(module.__name__)
        if key.endswith(".__init__"):
            module.__path__ = []
        exec(compile(_VENDORED[key], "<vendored " + key + ">", "exec"), module.__dict__)
_sys.meta_path.insert(0, _Vendored())
"""

_RUNNER = """
import contextlib as _contextlib, io as _io, os as _os, sys as _sys, tempfile as _tempfile
_PROGRAM = %(program)s
_work = _tempfile.mkdtemp(prefix="cases-")
_os.chdir(_work)
_printed = _io.StringIO()
_sys.argv = ["generator.py", *_sys.argv[1:]]
with _contextlib.redirect_stdout(_printed):
    try:
        exec(compile(_PROGRAM, "generator.py", "exec"), {"__name__": "__main__"})
    except SystemExit as _exit:
        if _exit.code not in (None, 0):
            raise
_files = []
for _dir, _subdirs, _names in _os.walk(_work):
    _subdirs.sort()
    for _name in sorted(_names):
        if _name.endswith(".in"):
            _files.append(_os.path.join(_dir, _name))
_out = _sys.stdout
def _pieces(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        while True:
            piece = handle.read(1 << 20)
            if not piece:
                return
            yield piece
for _path in _files:
    # Counted, then copied, a piece at a time; each file is removed once sent, so the files
    # left and the output sent together hold about one copy of the tests.
    _chars = sum(len(_piece) for _piece in _pieces(_path))
    _name = _os.path.relpath(_path, _work).replace("\\n", " ")
    _out.write("#XCODER-CASE %%d %%s\\n" %% (_chars, _name))
    for _piece in _pieces(_path):
        _out.write(_piece)
    try:
        _os.unlink(_path)
    except OSError:
        pass
if not _files:
    _text = _printed.getvalue()
    _out.write("#XCODER-STDOUT %%d\\n" %% len(_text))
    _out.write(_text)
_out.write("#XCODER-END %%d\\n" %% len(_files))
_out.flush()
"""


def generator_program(code: str) -> str:
    """The program the sandbox runs: CYaRon's importer, then ``code`` as ``__main__`` in an
    empty directory, then the framing of the ``.in`` files it wrote."""
    return _IMPORTER % {"sources": repr(vendored_sources())} + _RUNNER % {"program": repr(code)}


def category_of_name(name: str) -> str:
    """The E.2 category a test file's name gives (``stress_max_n.in`` -> stress); nominal when
    no word of the name says."""
    stem = os.path.basename(name).rsplit(".", 1)[0].lower()
    for word in re.split(r"[^a-z]+", stem):
        if word in _CATEGORY_WORDS:
            return _CATEGORY_WORDS[word]
    return "nominal"


# The longest header line read (its file name included) before a frame is called broken.
_HEADER_CHARS = 8192
# Characters of a test file read from a file at a time (an over-long one is skipped so).
_PIECE_CHARS = 1 << 18


def _frames(
    readline: Callable[[], str], read: Callable[[int], str], max_chars: int | None
) -> Iterator[tuple[str, str, int, str | None]]:
    """The frame format, read through ``readline()`` (the next header line, at most
    _HEADER_CHARS) and ``read(n)`` (the next ``n`` characters, fewer at the end): (kind, name,
    characters, text) per frame, the text None for a frame above ``max_chars`` (skipped a piece
    at a time, never held)."""
    position, count = 0, 0
    while True:
        line = readline()
        match = _FRAME.fullmatch(line)
        if match is None:
            raise ParseError(f"generator output is not framed at character {position}")
        position += len(line)
        kind, size = match.group(1), int(match.group(2))
        if kind == "END":
            if size != count:
                raise ParseError(f"generator framing: {count} file(s) sent, {size} announced")
            return
        if max_chars is not None and size > max_chars:
            text, got = None, 0
            while got < size:
                piece = len(read(min(_PIECE_CHARS, size - got)))
                if not piece:
                    break
                got += piece
        else:
            text = read(size)
            got = len(text)
        if got < size:
            raise ParseError("generator output ends inside a test file (output cap reached?)")
        position += size
        if kind == "CASE":
            count += 1
            yield "case", match.group(3) or f"case{count}.in", size, text
        else:
            yield "stdout", "", size, text
        text = None  # not held while the next frame is read


def frames(stdout: str) -> Iterator[tuple[str, str, str]]:
    """(kind, name, text) of each frame of a wrapped generator's stdout, kind "case" or
    "stdout". Raises ParseError when the framing is broken or the end frame is missing (the run
    was cut short)."""
    position = 0

    def readline() -> str:
        nonlocal position
        end = stdout.find("\n", position, position + _HEADER_CHARS)
        stop = position + _HEADER_CHARS if end < 0 else end + 1
        line, position = stdout[position:stop], min(stop, len(stdout))
        return line

    def read(n: int) -> str:
        nonlocal position
        text, position = stdout[position : position + n], min(position + n, len(stdout))
        return text

    for kind, name, _, text in _frames(readline, read, None):
        yield kind, name, text


def frames_in_file(
    path, *, max_chars: int | None = None
) -> Iterator[tuple[str, str, int, str | None]]:
    """The frames of a wrapped generator's stdout stored in the file ``path`` (as the sandbox's
    ``run_to_file`` writes it), read one at a time: (kind, name, characters, text), only the
    frame being yielded in memory. A frame above ``max_chars`` characters is skipped without
    being read whole and yields text None. ParseError as ``frames``."""

    def read(n: int) -> str:
        # In pieces, joined once: the frame and its pieces at the peak, not the reader's own
        # buffers of the whole frame on top.
        pieces = []
        while n > 0:
            piece = handle.read(min(n, _PIECE_CHARS))
            if not piece:
                break
            pieces.append(piece)
            n -= len(piece)
        return "".join(pieces)

    # newline="\n": no newline translation, so character counts match what the sandbox sent.
    with open(path, encoding="utf-8", errors="replace", newline="\n") as handle:
        yield from _frames(lambda: handle.readline(_HEADER_CHARS), read, max_chars)


def check_input(text: str, *, harness: str, where: str) -> str:
    """A generated input as the harness takes it: stdio text ending with a newline; function
    arguments one JSON value per line. Raises ParseError naming ``where``."""
    if not text.strip():
        raise ParseError(f"{where} is empty")
    if harness == "function":
        for line in text.splitlines():
            if line.strip():
                try:
                    json.loads(line)
                except ValueError as exc:
                    raise ParseError(f"{where}: argument line is not JSON ({exc})") from exc
        return text
    return text if text.endswith("\n") else text + "\n"
