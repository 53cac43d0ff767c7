"""The one prompt loader: every method keeps its templates as files under ``<method>/prompts/``
with a small front matter (version, role); the version is stored with every model call."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    version: str
    role: str
    body: str

    def render(self, **values) -> str:
        # string.Template ($name) so braces in code and JSON need no escaping; a missing
        # value is a programming error and raises KeyError.
        return Template(self.body).substitute(**values)

    def messages(self, **values) -> list[dict]:
        return [{"role": "user", "content": self.render(**values)}]


@cache
def prompt_load(directory: Path, name: str, *, prefix: str = "") -> PromptTemplate:
    """``<directory>/<name>.md`` as a template named ``<prefix><name>``. ValueError when the
    front matter has no version (a call could not say which prompt it used)."""
    text = (directory / f"{name}.md").read_text(encoding="utf-8")
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
        name=f"{prefix}{name}",
        version=meta["version"],
        role=meta.get("role", name),
        body=body.strip() + "\n",
    )
