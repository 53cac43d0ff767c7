"""Prompt templates of the FrontierSmith roles (files under frontiersmith/prompts/, front
matter with a version stored with every call)."""

from __future__ import annotations

from pathlib import Path

from evolution.llm.prompts import PromptTemplate, prompt_load

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"


def load(name: str) -> PromptTemplate:
    return prompt_load(PROMPT_DIR, name, prefix="frontiersmith/")
