"""Structured output from model answers: JSON objects and fenced code blocks.

Parsing a model's *content* is the caller's job; these helpers make a failure a ParseError
with a reason the caller records (``mark_unparsable``) as a rejection, never a crash.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .errors import ParseError
from .services import llm_call_mark_unparsable

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_ALIASES = {
    "python": {"python", "py", "python3", "py3"},
    "json": {"json", "jsonc"},
    "cpp": {"cpp", "c++", "cc", "cxx"},
    "javascript": {"javascript", "js"},
}


@dataclass(frozen=True)
class Block:
    language: str  # lower-cased info-string word, "" when untagged
    text: str


def fenced_blocks(text: str) -> list[Block]:
    """Closed fenced code blocks in order; ParseError if a fence is left open (cut-off answer)."""
    blocks: list[Block] = []
    fence: str | None = None
    language = ""
    body: list[str] = []
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence, language, body = match.group(1), match.group(2).lower(), []
            continue
        stripped = line.strip()
        if stripped and set(stripped) == {fence[0]} and len(stripped) >= len(fence):
            blocks.append(Block(language=language, text="\n".join(body)))
            fence = None
        else:
            body.append(line)
    if fence is not None:
        raise ParseError(f"a ```{language} code block is never closed (the answer looks cut off)")
    return blocks


def _matches(block_language: str, language: str) -> bool:
    wanted = _ALIASES.get(language.lower(), {language.lower()})
    return block_language in wanted


def extract_code(text: str, language: str = "python") -> str:
    """The code of the answer: the last block tagged ``language``, else the only untagged one.

    Blocks tagged with another language (sample output, shell commands) are ignored. Raises
    ParseError when there is no candidate block, or several untagged ones and none tagged.
    """
    blocks = fenced_blocks(text or "")
    tagged = [b for b in blocks if _matches(b.language, language)]
    if tagged:
        # Models that revise their answer put the final version last.
        return tagged[-1].text.strip("\n") + "\n"
    untagged = [b for b in blocks if not b.language]
    if len(untagged) == 1:
        return untagged[0].text.strip("\n") + "\n"
    if len(untagged) > 1:
        raise ParseError(
            f"{len(untagged)} untagged code blocks and none marked {language}: "
            "cannot tell which one is the answer"
        )
    if blocks:
        others = ", ".join(sorted({b.language for b in blocks}))
        raise ParseError(f"no {language} code block in the answer (only: {others})")
    raise ParseError(f"no fenced {language} code block in the answer")


def _first_object(text: str) -> dict | None:
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def extract_json(text: str) -> dict:
    """The JSON object in the answer: from a fenced block (json-tagged first), else bare.

    Raises ParseError when no JSON object can be decoded.
    """
    text = text or ""
    try:
        blocks = fenced_blocks(text)
    except ParseError:
        blocks = []  # an open fence may still hold a complete object; the bare scan finds it
    ordered = [b for b in blocks if _matches(b.language, "json")] + [
        b for b in blocks if not _matches(b.language, "json")
    ]
    for block in ordered:
        try:
            value = json.loads(block.text)
        except ValueError:
            value = _first_object(block.text)
        if isinstance(value, dict):
            return value
    try:
        value = json.loads(text.strip())
    except ValueError:
        value = _first_object(text)
    if isinstance(value, dict):
        return value
    if value is not None:
        raise ParseError(f"expected a JSON object, the answer holds a {type(value).__name__}")
    raise ParseError("no JSON object found in the answer")


def mark_unparsable(call_id: int, reason: str) -> None:
    """Mark LLMCall ``call_id`` as answered-but-unparsable, with ``reason`` as its error."""
    llm_call_mark_unparsable(call_id=call_id, reason=reason)
