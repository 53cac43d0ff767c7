"""Prompt templates for the three roles and the quality filter (files under reasoning/prompts/,
front matter with a version stored with every call), and the novelty focus of section 4.2."""

from __future__ import annotations

from pathlib import Path

from evolution.llm.prompts import PromptTemplate, prompt_load

from ..config import difficulty_characteristics, difficulty_descriptor

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"
MAX_QUOTED_CHARS = 600  # per prior question: long passages are cut to keep the prompt bounded


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name, prefix="reasoning/")


def _quote(questions: list[str]) -> str:
    lines = []
    for q in questions:
        q = " ".join(q.split())
        if len(q) > MAX_QUOTED_CHARS:
            q = q[:MAX_QUOTED_CHARS] + " [...]"
        lines.append(f"- {q}")
    return "\n".join(lines)


def select_focus(
    *,
    reasoning_type: str,
    difficulty: int,
    prior_questions_for_type: list[tuple[int, str]],
    prior_questions_in_cell: list[str],
    history_window: int,
    rejected: list[dict] | None = None,
) -> str:
    """The novelty part of the generation prompt (section 4.2).

    1. Cell level (same type and difficulty): the new question MUST be ENTIRELY NOVEL.
    2. Historical (the type's questions at other difficulties): avoid repeating their themes;
       only the last ``history_window`` are shown, for context length.
    3. Progression: it should be MORE DIFFICULT than the earlier, lower-difficulty questions.
    ``prior_questions_for_type`` are (difficulty, question) pairs, oldest first. ``rejected``
    are this question's earlier drafts with the reason each was rejected.
    """
    parts = []
    if prior_questions_in_cell:
        parts.append(
            f"These {reasoning_type} questions already exist at difficulty {difficulty}. Your "
            "question MUST be ENTIRELY NOVEL compared with them: different scenario, topic, "
            "entities and problem structure.\n" + _quote(prior_questions_in_cell)
        )
    history = [(d, q) for d, q in prior_questions_for_type if d != difficulty]
    history = history[-history_window:] if history_window else []
    if history:
        parts.append(
            f"Earlier {reasoning_type} questions from other difficulty levels. Avoid repetition "
            "of their themes:\n" + _quote([q for _, q in history])
        )
    if any(d < difficulty for d, _ in history):
        parts.append(
            "Your question should be MORE DIFFICULT than the previous, lower-difficulty "
            "questions above."
        )
    for draft in rejected or []:
        parts.append(
            f"A previous draft was rejected ({draft['reason']}); do not resubmit it or anything "
            f"close to it:\n{_quote([draft['question']])}"
        )
    if not parts:
        parts.append(f"This is the first {reasoning_type} question; no earlier questions exist.")
    return "\n\n".join(parts)


def generation_messages(*, reasoning_type: str, type_description: str, difficulty: int, focus: str):
    return load("generation").messages(
        reasoning_type=reasoning_type,
        type_description=type_description,
        difficulty=difficulty,
        descriptor=difficulty_descriptor(difficulty),
        characteristics=difficulty_characteristics(difficulty),
        focus=focus,
    )


def answering_messages(*, question: str):
    return load("answering").messages(question=question)


def evaluation_messages(*, reasoning_type: str, difficulty: int, question: str, answer: str):
    return load("evaluation").messages(
        reasoning_type=reasoning_type, difficulty=difficulty, question=question, answer=answer
    )


def reference_evaluation_messages(
    *, reasoning_type: str, difficulty: int, question: str, answer: str, reference: str
):
    """The judge's prompt when a curator confirmed the reference answer: grade against it."""
    return load("evaluation_reference").messages(
        reasoning_type=reasoning_type,
        difficulty=difficulty,
        question=question,
        answer=answer,
        reference=reference,
    )


def quality_messages(*, reasoning_type: str, type_description: str, difficulty: int, question: str):
    return load("quality").messages(
        reasoning_type=reasoning_type,
        type_description=type_description,
        difficulty=difficulty,
        descriptor=difficulty_descriptor(difficulty),
        question=question,
    )


def clean_question(content: str) -> str:
    """The question text of a generation answer: fences and a leading "Question:" removed."""
    text = (content or "").strip()
    if text.startswith("```") and text.endswith("```"):
        text = text.strip("`").split("\n", 1)[-1].strip()
    for prefix in ("question:", "**question:**", "q:"):
        if text.lower().startswith(prefix):
            text = text[len(prefix) :].strip()
            break
    return text
