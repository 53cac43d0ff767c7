"""Prompt templates of the FrontierSmith roles (files under frontiersmith/prompts/, front
matter with a version stored with every call)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from evolution.pipeline.prompts import PromptTemplate

PROMPT_DIR = Path(__file__).resolve().parent.parent / "prompts"


@cache
def load(name: str) -> PromptTemplate:
    text = (PROMPT_DIR / f"{name}.md").read_text(encoding="utf-8")
    meta: dict[str, str] = {}
    body = text
    if text.startswith("---\n"):
        header, _, body = text[4:].partition("\n---\n")
        for line in header.splitlines():
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip()
    if "version" not in meta:
        raise ValueError(f"prompt {name} has no version in its front matter")
    return PromptTemplate(
        name=f"frontiersmith/{name}",
        version=meta["version"],
        role=meta.get("role", name),
        body=body.strip() + "\n",
    )
