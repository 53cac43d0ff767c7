"""Scoring answer models on released questions: the reasoning kind's answering prompt, its
judges' prompt and verdict parsing, and the ensemble's aggregation (``engine.judging``).

A released question whose answer a curator confirmed (a human override counting it correct)
is graded against that reference answer; the others by the judges alone, as the campaign
graded its own answers. Releases reach these through the problem source
(``ReasoningSource.answer_question`` / ``score_answer``), never by importing this kind.
"""

from __future__ import annotations

from evolution.llm import CallContext, LLMClient, mark_unparsable

from .config import ReasoningSettings
from .engine import judging, prompts

MODE_JUDGE = "judge"
MODE_REFERENCE = "reference"


def answer_question(*, question: str, endpoint, replay_key: str) -> str:
    """The answer model's answer (LLMError when the call fails after the client's retries)."""
    s = ReasoningSettings()
    template = prompts.load("answering")
    result = LLMClient(endpoint, CallContext()).chat(
        prompts.answering_messages(question=question),
        role="answering",
        template=template.name,
        template_version=template.version,
        replay_key=f"{replay_key};role=answering",
        temperature=s.answering_temperature,
        max_tokens=s.answering_max_tokens,
    )
    return result.content


def score_answer(
    *,
    question: str,
    item_type: str,
    difficulty: int,
    answer: str,
    judges: list,
    reference_answer: str | None,
    replay_key: str,
    rule: str | None = None,
) -> dict:
    """Every judge grades ``answer``; the ensemble's score by ``rule``. A judge whose answer
    cannot be parsed scores 0.0 and is recorded as a parse failure (the document's rule); a
    judge whose call fails raises LLMError (an outage is not a wrong answer)."""
    s = ReasoningSettings()
    if reference_answer:
        mode = MODE_REFERENCE
        template = prompts.load("evaluation_reference")
        messages = prompts.reference_evaluation_messages(
            reasoning_type=item_type,
            difficulty=difficulty,
            question=question,
            answer=answer,
            reference=reference_answer,
        )
    else:
        mode = MODE_JUDGE
        template = prompts.load("evaluation")
        messages = prompts.evaluation_messages(
            reasoning_type=item_type, difficulty=difficulty, question=question, answer=answer
        )
    verdicts = []
    for position, judge in enumerate(judges):
        result = LLMClient(judge, CallContext()).chat(
            messages,
            role="evaluation",
            template=template.name,
            template_version=template.version,
            replay_key=f"{replay_key};judge={position};role=evaluation",
            temperature=s.evaluation_temperature,
            max_tokens=s.evaluation_max_tokens,
        )
        verdict = judging.parse_verdict(result.content, judge=judge.name)
        if verdict.parse_failure:
            mark_unparsable(result.call_id, verdict.reason)
        verdicts.append(verdict)
    agg = judging.aggregate(verdicts, rule or s.judge_aggregation)
    return {
        "score": agg.score,
        "mode": mode,
        "verdicts": [v.to_dict() for v in verdicts],
        "parse_failures": agg.parse_failures,
        "disagreement": agg.disagreement,
    }
