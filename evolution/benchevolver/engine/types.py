"""Plain data passed between the engine's stages (no database objects)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Mutation:
    idea: str
    parent_weakness: str
    family: str
    code: str


@dataclass
class Written:
    title: str
    statement: str
    examples: list[str]
    # How answers are checked (evolution/sandbox/contracts.py); exact when the writer gives none.
    contract: dict = field(default_factory=lambda: {"kind": "exact"})


@dataclass
class GeneratedTest:
    tier: str
    input: str
    output: str = ""
    hidden: bool = True
    provenance: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "tier": self.tier,
            "input": self.input,
            "output": self.output,
            "hidden": self.hidden,
            "provenance": self.provenance,
        }

    @classmethod
    def from_dict(cls, data: dict) -> GeneratedTest:
        return cls(
            tier=data["tier"],
            input=data["input"],
            output=data.get("output", ""),
            hidden=data.get("hidden", True),
            provenance=data.get("provenance", {}),
        )


class StageError(Exception):
    """A stage could not produce its output; ``reason`` is recorded as the rejection reason."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason
