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
from collections.abc import Iterator
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
for _path in _files:
    with open(_path, encoding="utf-8", errors="replace") as _handle:
        _text = _handle.read()
    _name = _os.path.relpath(_path, _work).replace("\\n", " ")
    _out.write("#XCODER-CASE %%d %%s\\n" %% (len(_text), _name))
    _out.write(_text)
    del _text
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


def frames(stdout: str) -> Iterator[tuple[str, str, str]]:
    """(kind, name, text) of each frame of a wrapped generator's stdout, kind "case" or
    "stdout". Raises ParseError when the framing is broken or the end frame is missing (the run
    was cut short)."""
    position, count = 0, 0
    while True:
        match = _FRAME.match(stdout, position)
        if match is None:
            raise ParseError(f"generator output is not framed at character {position}")
        kind, size = match.group(1), int(match.group(2))
        if kind == "END":
            if size != count:
                raise ParseError(f"generator framing: {count} file(s) sent, {size} announced")
            return
        start = match.end()
        if start + size > len(stdout):
            raise ParseError("generator output ends inside a test file (output cap reached?)")
        text = stdout[start : start + size]
        position = start + size
        if kind == "CASE":
            count += 1
            yield "case", match.group(3) or f"case{count}.in", text
        else:
            yield "stdout", "", text


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
