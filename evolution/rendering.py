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
