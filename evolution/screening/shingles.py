"""What the contamination screen compares: word shingles of a normalised statement and token
shingles of a normalised program. Pure functions, no database.

Statement: Markdown, LaTeX and punctuation are dropped, words lower-cased, numbers kept as one
token each (constraints and examples are part of a problem), and the words of
``STOP_WORDS`` left out, so rewording the glue of a sentence ("You are given" / "Given")
moves fewer shingles, and so are a judge's format words (``FORMAT_WORDS``: "Sample Input",
"Standard Input", "test cases"), which every statement of a site shares; shingles are
``STATEMENT_SHINGLE`` consecutive words.

Program: Python is cut into tokens; comments and docstrings are dropped (a docstring is
statement text) and every name the program binds itself (variables, parameters, functions,
classes, loop and comprehension targets: ``symtable``) becomes ``$``, so a copy with renamed
variables has the same tokens. Names it only reads (builtins, modules, attributes, methods
such as ``startswith``) and imports are kept: they carry the algorithm. Code that is not Python (a C++
reference of CodeContests) falls back to a regular-expression tokeniser that renames every
identifier that is not a keyword of common languages. Shingles are ``CODE_SHINGLE``
consecutive tokens.
"""

from __future__ import annotations

import builtins
import keyword
import re
import symtable

STATEMENT_SHINGLE = 2
CODE_SHINGLE = 5


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Glue words: leaving them out makes a reworded sentence share more shingles with its original,
# and two unrelated statements share no more (they never carried the meaning).
STOP_WORDS = _word_set(
    """a an the of to in on at by for from with and or is are be been being it its this that
    these those as if then than so such there their them they you your we our us i he she his
    her which who whom whose what when where how do does did can could should would will shall
    may might must not no any each every all some given print output input return returns line
    lines contains contain first second number numbers integer integers value values"""
)
# The furniture of a judge's statement (AtCoder's "The input is given from Standard Input in the
# following format", Codeforces' "t test cases", "Sample Input 1"): every problem of a site has
# it, so it says nothing about which problem this is.
FORMAT_WORDS = _word_set(
    """sample standard format following constraints example examples explanation test tests case
    cases note otherwise answer determine find single exactly yes no true false inclusive"""
)

_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_CODE_FENCE = re.compile(r"```[A-Za-z0-9_+-]*")
_STATEMENT_TOKEN = re.compile(r"[a-z]+|\d+")
_KEPT_NAMES = frozenset(dir(builtins)) | {"self", "cls"}
# Keywords and common type names of the languages a corpus reference may be written in.
_GENERIC_KEYWORDS = _word_set(
    """auto bool break case catch char class const continue default delete do double else enum
    extern false final float for friend goto if include inline int long namespace new null
    nullptr operator private protected public return short signed sizeof static std struct
    switch template this throw true try typedef typename union unsigned using virtual void
    volatile while string vector map set pair cin cout endl printf scanf main define import
    package boolean byte extends implements instanceof interface super synchronized var let
    function fn mut impl pub use mod println"""
)
_GENERIC_TOKEN = re.compile(r"[A-Za-z_]\w*|\d+(?:\.\d+)?|\S")


def normalise_statement(text: str) -> list[str]:
    """The statement's words as the screen compares them."""
    text = _CODE_FENCE.sub(" ", text or "")
    text = _LATEX_COMMAND.sub(" ", text).lower()
    return [
        w for w in _STATEMENT_TOKEN.findall(text) if w not in STOP_WORDS and w not in FORMAT_WORDS
    ]


def normalise_code(code: str) -> list[str]:
    """The program's tokens as the screen compares them (Python, else any C-like language)."""
    try:
        return _python_tokens(code or "")
    except (SyntaxError, ValueError):
        return _generic_tokens(code or "")


def shingle_set(tokens: list[str], size: int) -> set[str]:
    """Consecutive ``size``-grams joined by a space; a text shorter than ``size`` is one
    shingle (empty: none)."""
    if not tokens:
        return set()
    if len(tokens) < size:
        return {" ".join(tokens)}
    return {" ".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def statement_shingles(text: str) -> set[str]:
    return shingle_set(normalise_statement(text), STATEMENT_SHINGLE)


def code_shingles(code: str) -> set[str]:
    return shingle_set(normalise_code(code), CODE_SHINGLE)


def jaccard(a: set[str], b: set[str]) -> float:
    """The exact similarity the MinHash signatures estimate."""
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


# --- Python ----------------------------------------------------------------------------------


def _bound_names(code: str) -> set[str]:
    """Every name the program binds itself (``symtable``: the compiler's own scopes, fast):
    assigned, parameters, functions, classes, loop, ``with``, ``except`` and comprehension
    targets. Imported names keep their names."""
    names: set[str] = set()
    stack = [symtable.symtable(code, "<reference>", "exec")]
    while stack:
        table = stack.pop()
        for symbol in table.get_symbols():
            if symbol.is_assigned() or symbol.is_parameter():
                names.add(symbol.get_name())
        stack.extend(table.get_children())
    return names - _KEPT_NAMES


# Python's tokens where they matter here: strings with their prefixes (one token each, as
# ``tokenize`` gives them), comments, names, numbers, operators. A regular expression, not
# ``tokenize``: ten times faster, which is what indexing 50,000 references takes.
_PY_TOKEN = re.compile(
    r"""
    (?P<string>[rRbBuUfF]{0,2}(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
    |(?P<comment>\#[^\n]*)
    |(?P<name>[^\W\d]\w*)
    |(?P<number>\d[\w.]*|\.\d\w*)
    |(?P<op>\*\*=?|//=?|>>=?|<<=?|->|:=|\.\.\.|[-+*/%&|^@=<>!]=|\S)
    """,
    re.VERBOSE,
)
_OPENING, _CLOSING = set("([{"), set(")]}")


def _python_tokens(code: str) -> list[str]:
    bound = _bound_names(code)
    out: list[str] = []
    depth = end = 0
    header = previous = ""  # the first token of the logical line being read; the last token
    pending = None  # a string that opened a line and may be a docstring: (its text, previous)
    for match in _PY_TOKEN.finditer(code):
        kind, text = match.lastgroup, match.group()
        if kind == "comment":
            continue
        starts = depth == 0 and (
            not out and pending is None or code.count("\n", end, match.start())
        )
        end = match.end()
        if pending is not None:
            # A docstring: a string alone on its line, first in the module or right after a
            # ``def`` / ``class`` header; statement text, not code.
            if not starts:
                out.append(pending[0])
            pending = None
        if starts:
            after_header = (not out and not previous) or (
                previous == ":" and header in ("def", "class", "async")
            )
            header = text
            if kind == "string" and after_header:
                pending = (text, previous)
                previous = text
                continue
        if kind == "op":
            depth += (text in _OPENING) - (text in _CLOSING)
            if depth < 0:
                depth = 0
        # An attribute (``x.startswith``) is the library's name, never a renamed variable.
        if kind == "name" and text in bound and previous != "." and not keyword.iskeyword(text):
            out.append("$")
        else:
            out.append(text)
        previous = text
    return out


def _generic_tokens(code: str) -> list[str]:
    # Comments of C-like languages and of Python 2 go; strings stay as they are.
    code = re.sub(r"//[^\n]*|/\*.*?\*/|#(?!include)[^\n]*", " ", code, flags=re.S)
    out = []
    for token in _GENERIC_TOKEN.findall(code):
        if (token[0].isalpha() or token[0] == "_") and token not in _GENERIC_KEYWORDS:
            token = "$"
        out.append(token)
    return out
