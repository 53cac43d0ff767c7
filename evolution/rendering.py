"""Statement Markdown -> safe HTML for reviewers and every page that shows a statement.

Raw HTML in a statement is never passed through (markdown-it ``html=False`` escapes it), code
is escaped inside ``<pre><code>``, and ``$...$`` / ``$$...$$`` math is kept verbatim as text
(no CDN, no KaTeX) but protected from Markdown so ``a_i * b_i`` is not turned into emphasis.
"""

from __future__ import annotations

import html
import re
import secrets

from markdown_it import MarkdownIt

_MD = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable(
    "table"
)
# $$...$$ first so a display block is not read as two inline spans.
_MATH = re.compile(r"\$\$(.+?)\$\$|(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$", re.DOTALL)
_FENCE = re.compile(r"(^|\n)(```|~~~).*?(\n\2[^\n]*|$)", re.DOTALL)


def _strip_title_heading(text: str, title: str) -> str:
    # Statements written by the engine may open with the problem's title as a heading; the
    # title is provenance for reviewers, so a leading heading equal to it is dropped.
    if not title:
        return text
    lines = text.lstrip("\n").split("\n", 1)
    first = lines[0].strip().lstrip("#").strip()
    if lines[0].lstrip().startswith("#") and first.casefold() == title.strip().casefold():
        return lines[1] if len(lines) > 1 else ""
    return text


def render_statement(text: str, *, title: str = "") -> str:
    """Return safe HTML for a statement. ``title`` (if given) is removed from a leading heading."""
    text = _strip_title_heading(text or "", title)
    token = "MATH" + secrets.token_hex(6)
    spans: list[str] = []

    def protect_math(segment: str) -> str:
        def keep(match: re.Match) -> str:
            spans.append(match.group(0))
            return f"{token}x{len(spans) - 1}x"

        return _MATH.sub(keep, segment)

    # Math inside fenced code stays code: only text between fences is protected.
    out, last = [], 0
    for fence in _FENCE.finditer(text):
        out.append(protect_math(text[last : fence.start()]))
        out.append(fence.group(0))
        last = fence.end()
    out.append(protect_math(text[last:]))
    rendered = _MD.render("".join(out))

    def restore(match: re.Match) -> str:
        original = spans[int(match.group(1))]
        css = "math display" if original.startswith("$$") else "math"
        return f'<span class="{css}">{html.escape(original)}</span>'

    return re.sub(rf"{token}x(\d+)x", restore, rendered)


_SPACE = re.compile(r"\s+")
# What may stand between an example's input and its output when a statement already shows it:
# whitespace, code fences, and an "Output" / "Sample Output 1:" / "Example output" heading.
_BETWEEN = re.compile(
    r"^[\s`#*>:|-]*(?:(?:sample|example)?\s*output(?:\s*\d+)?\s*:?)?[\s`#*>:|-]*$",
    re.IGNORECASE,
)


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text or "").strip()


def shown_in_statement(statement: str, example_input: str, example_output: str) -> bool:
    """True when the statement already shows this example: its input, then (with nothing
    but an "Output" heading, fences or blank space between) its output, whitespace aside."""
    text, given, expected = _squash(statement), _squash(example_input), _squash(example_output)
    if not given or not expected:
        return False
    start = text.find(given)
    while start != -1:
        after = start + len(given)
        at = text.find(expected, after)
        if at != -1 and _BETWEEN.match(text[after:at]):
            return True
        start = text.find(given, start + 1)
    return False


def examples_to_show(statement: str, examples: list) -> list:
    """The examples a page lists under the statement: those it does not already show.
    Each example has ``input`` and ``output`` attributes or keys."""

    def field(example, name):
        return example[name] if isinstance(example, dict) else getattr(example, name)

    return [
        e
        for e in examples
        if not shown_in_statement(statement, field(e, "input"), field(e, "output"))
    ]
