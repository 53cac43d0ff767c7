"""Supervised fine-tuning pairs: the solver prompt and the reference solution, with the golden
candidate's chain of thought where its method kept it."""

from __future__ import annotations

from collections.abc import Iterator

from evolution.judging.difficulty import solver_messages

from ..models import Release, ReleaseItem
from .rows import dump_line, release_items

SFT_FORMAT = "benchforge-sft/1"


def sft_response(reasoning: str, code: str) -> str:
    """The assistant turn of an SFT pair [q, A_golden]: the reasoning in a think block, then
    the final code in one fenced block (X-Coder's C.1 format, the one its solvers answer in);
    the code alone when no reasoning was kept."""
    fenced = "```python\n" + code.rstrip("\n") + "\n```"
    if not reasoning:
        return fenced
    return f"<think>\n{reasoning.strip()}\n</think>\n\n{fenced}"


def sft_record(item: ReleaseItem) -> dict | None:
    """One SFT pair: the solver prompt and the reference solution as the answer, with the
    golden candidate's chain of thought for items whose method kept it (X-Coder:
    ``metadata.golden_reasoning``, the think block of the golden candidate's real answer).
    None for an item without a reference solution."""
    record = item.record
    code = record.get("reference_solution") or ""
    if not code.strip():
        return None
    messages, template = solver_messages(
        statement=record["statement"], harness=record["harness"], entry_point=record["entry_point"]
    )
    reasoning = (record.get("metadata") or {}).get("golden_reasoning") or ""
    return {
        "format": SFT_FORMAT,
        "id": item.public_id,
        "messages": [*messages, {"role": "assistant", "content": sft_response(reasoning, code)}],
        "prompt_template": f"{template.name}@{template.version}",
        "reasoning": reasoning or None,
        "reasoning_source": "golden candidate's <think> block" if reasoning else None,
        "origin": item.origin,
        "item_hash": item.content_hash,
    }


def export_sft(release: Release) -> Iterator[str]:
    for item in release_items(release):
        line = sft_record(item)
        if line is not None:
            yield dump_line(line)
