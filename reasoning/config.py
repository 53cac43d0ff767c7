"""Settings of a reasoning campaign (design document 004), validated.

Every field is a campaign setting; its default is the document's where the document gives the
value, the project's own otherwise (``SETTING_SOURCES``). ``ReasoningSettings.from_dict``
rejects unknown keys and bad values with a ValidationError naming the key. The evolution
engine's ``EvolutionSettings`` is never used for this kind.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from evolution.algorithm_settings import PROJECT, AlgorithmSettings

# Section 10: the default reasoning types and what each one covers.
DEFAULT_REASONING_TYPES: tuple[tuple[str, str], ...] = (
    ("logical_deduction", "Formal logic, syllogisms, puzzles"),
    ("mathematical_reasoning", "Numerical problems, proofs"),
    ("commonsense_reasoning", "Everyday knowledge, intuition"),
    ("reading_comprehension", "Text analysis, inference"),
    ("abstraction_analogy", "Pattern recognition, metaphors"),
    ("scientific_reasoning", "Hypothesis, experimentation"),
    ("data_interpretation", "Charts, statistics, trends"),
    ("computer_programming", "Code analysis, algorithms"),
)

# Section 4.3: difficulty level -> descriptor put into the generation prompt.
DIFFICULTY_DESCRIPTORS = {
    1: "Very easy, suitable for beginners",
    2: "Very easy, suitable for beginners",
    3: "Easy to moderate",
    4: "Easy to moderate",
    5: "Moderate, requiring solid understanding",
    6: "Moderate, requiring solid understanding",
    7: "Challenging, requiring deep reasoning",
    8: "Challenging, requiring deep reasoning",
    9: "Very hard, expert-level complexity",
    10: "Very hard, expert-level complexity",
}
DIFFICULTY_CHARACTERISTICS = {
    1: "Basic recall, simple logic",
    3: "Multi-step but straightforward",
    5: "Requires domain knowledge",
    7: "Complex logic, edge cases",
    9: "Multi-domain synthesis, subtle constraints",
}
MIN_DIFFICULTY, MAX_DIFFICULTY = 1, 10
TYPE_NAME = re.compile(r"^[a-z][a-z0-9_]{1,59}$")
AGGREGATIONS = ("majority", "mean")


def difficulty_descriptor(level: int) -> str:
    return DIFFICULTY_DESCRIPTORS[level]


def difficulty_characteristics(level: int) -> str:
    return DIFFICULTY_CHARACTERISTICS[level - (1 - level % 2)]


def default_reasoning_types() -> list[dict]:
    return [{"name": n, "description": d} for n, d in DEFAULT_REASONING_TYPES]


SETTING_HELP = {
    "reasoning_types": "reasoning types ({name, description}), in round-robin order",
    "difficulty_start": "first difficulty of every run (1-10)",
    "difficulty_end": "last difficulty of every run (1-10)",
    "num_questions": "questions per type x difficulty cell",
    "runs": "runs this campaign adds to its series; the EMAs carry from run to run",
    "alpha": "EMA smoothing factor: EMA = alpha x score + (1 - alpha) x previous EMA",
    "generation_temperature": "generation model temperature",
    "generation_max_tokens": "generation model max tokens",
    "answering_temperature": "answering model temperature",
    "answering_max_tokens": "answering model max tokens",
    "evaluation_temperature": "judge temperature",
    "evaluation_max_tokens": "judge max tokens",
    "history_window": "last N questions of the type (other difficulties) shown to avoid repetition",
    "novelty_filter": "regenerate a question measured too similar to a prior one (not in the "
    "document, whose novelty is the prompt's alone; off: similarity is measured and shown only)",
    "similarity_threshold": "with novelty_filter on, a new question more similar than this to a "
    "prior one is regenerated",
    "max_regenerations": "regenerations per question (novelty or quality rejections)",
    "judge_aggregation": "ensemble rule over the judges: majority or mean",
    "quality_filter": "ask the quality model to validate each question before answering",
    "adaptive_difficulty": "skip a mastered level, stop a run after levels the model keeps failing",
    "adaptive_mastery": "difficulty EMA at or above which the next level is skipped",
    "adaptive_floor": "difficulty EMA at or below which a level counts as failed",
    "adaptive_patience": "consecutive failed levels that end a run early",
    "weak_area_focus": "give the lowest-EMA reasoning types extra questions per cell",
    "weak_area_types": "how many lowest-EMA types get extra questions",
    "weak_area_extra": "extra questions per cell for those types",
}


# Where each default comes from: the section of the design document (seed document 004) that
# gives the value, or PROJECT. Section 12 names the extensions (off: section 11's loop has none
# of them) but none of their parameters; the document gives no novelty filter (its novelty is the
# prompt's, §4.2), threshold, regeneration bound, ensemble rule or number of runs.
EXTENSION = "§12: an extension, not in §11's loop"
SETTING_SOURCES = {
    "reasoning_types": "§10",
    "difficulty_start": "§4.3, §7",
    "difficulty_end": "§4.3, §7",
    "num_questions": "§7",
    "runs": PROJECT,
    "alpha": "§4.1",
    "generation_temperature": "§5",
    "generation_max_tokens": "§5",
    "answering_temperature": "§5",
    "answering_max_tokens": "§5",
    "evaluation_temperature": "§5",
    "evaluation_max_tokens": "§5",
    "history_window": "§4.2",
    "novelty_filter": PROJECT,
    "similarity_threshold": PROJECT,
    "max_regenerations": PROJECT,
    "judge_aggregation": PROJECT,
    "quality_filter": EXTENSION,
    "adaptive_difficulty": EXTENSION,
    "adaptive_mastery": PROJECT,
    "adaptive_floor": PROJECT,
    "adaptive_patience": PROJECT,
    "weak_area_focus": EXTENSION,
    "weak_area_types": PROJECT,
    "weak_area_extra": PROJECT,
}


@dataclass(frozen=True)
class ReasoningSettings(AlgorithmSettings):
    LABEL = "reasoning"
    HELP = SETTING_HELP
    SOURCE_NAME = "design document"
    SOURCES = SETTING_SOURCES

    reasoning_types: list[dict] = field(default_factory=default_reasoning_types)
    difficulty_start: int = 1
    difficulty_end: int = 10
    num_questions: int = 1
    runs: int = 1
    alpha: float = 0.3
    # Section 5: the three roles' sampling settings.
    generation_temperature: float = 0.8
    generation_max_tokens: int = 500
    answering_temperature: float = 0.5
    answering_max_tokens: int = 700
    evaluation_temperature: float = 0.3
    evaluation_max_tokens: int = 250
    # Section 4.2 and the measured novelty check. The document enforces novelty in the prompt
    # only (§4.2) and scores every question its loop makes (§11): the measured filter, which
    # regenerates a draft and filters the cell at the bound, is off unless asked for.
    history_window: int = 10
    novelty_filter: bool = False
    similarity_threshold: float = 0.5
    max_regenerations: int = 3
    # Section 12 extensions.
    judge_aggregation: str = "majority"
    quality_filter: bool = False
    adaptive_difficulty: bool = False
    adaptive_mastery: float = 0.8
    adaptive_floor: float = 0.2
    adaptive_patience: int = 2
    weak_area_focus: bool = False
    weak_area_types: int = 2
    weak_area_extra: int = 1

    _BOUNDS = {
        "difficulty_start": (MIN_DIFFICULTY, MAX_DIFFICULTY),
        "difficulty_end": (MIN_DIFFICULTY, MAX_DIFFICULTY),
        "num_questions": (1, 50),
        "runs": (1, 1000),
        "alpha": (0.0, 1.0),
        "generation_temperature": (0.0, 2.0),
        "generation_max_tokens": (16, 32000),
        "answering_temperature": (0.0, 2.0),
        "answering_max_tokens": (16, 32000),
        "evaluation_temperature": (0.0, 2.0),
        "evaluation_max_tokens": (16, 32000),
        "history_window": (0, 200),
        "similarity_threshold": (0.0, 1.0),
        "max_regenerations": (0, 20),
        "adaptive_mastery": (0.0, 1.0),
        "adaptive_floor": (0.0, 1.0),
        "adaptive_patience": (1, 10),
        "weak_area_types": (1, 50),
        "weak_area_extra": (1, 20),
    }

    @classmethod
    def coerce(cls, name: str, raw, default):
        if name == "reasoning_types":
            return _coerce_types(raw)
        return super().coerce(name, raw, default)

    @classmethod
    def shown(cls, name: str, value):
        # The page lists the types by name; their descriptions are on the new-campaign form.
        if name == "reasoning_types":
            return ", ".join(t["name"] for t in value)
        return value

    def validate(self, errors: dict[str, list[str]]) -> None:
        if self.alpha == 0:
            errors.setdefault("alpha", []).append("alpha must be greater than 0")
        if self.difficulty_start > self.difficulty_end:
            errors.setdefault("difficulty_end", []).append(
                "difficulty_end must not be below difficulty_start"
            )
        if self.judge_aggregation not in AGGREGATIONS:
            errors.setdefault("judge_aggregation", []).append(
                f"judge_aggregation must be one of {', '.join(AGGREGATIONS)}"
            )
        if self.adaptive_floor >= self.adaptive_mastery:
            errors.setdefault("adaptive_floor", []).append(
                "adaptive_floor must be below adaptive_mastery"
            )
        seen: set[str] = set()
        if not self.reasoning_types:
            errors.setdefault("reasoning_types", []).append("name at least one reasoning type")
        for entry in self.reasoning_types:
            name = entry.get("name", "") if isinstance(entry, dict) else ""
            if not TYPE_NAME.match(name):
                errors.setdefault("reasoning_types", []).append(
                    f"type name {name!r} must be lower_snake_case (2-60 characters)"
                )
            elif name in seen:
                errors.setdefault("reasoning_types", []).append(f"type {name!r} appears twice")
            seen.add(name)
            if not str(entry.get("description", "") if isinstance(entry, dict) else "").strip():
                errors.setdefault("reasoning_types", []).append(
                    f"type {name!r} needs a description (it goes into the generation prompt)"
                )

    @property
    def type_names(self) -> list[str]:
        return [t["name"] for t in self.reasoning_types]

    def type_description(self, name: str) -> str:
        for entry in self.reasoning_types:
            if entry["name"] == name:
                return entry["description"]
        return ""

    @property
    def difficulties(self) -> list[int]:
        return list(range(self.difficulty_start, self.difficulty_end + 1))


def _coerce_types(raw) -> list[dict]:
    if not isinstance(raw, list):
        raise ValueError("reasoning_types must be a list of {name, description} objects")
    out = []
    for entry in raw:
        if isinstance(entry, str):
            # A bare default name takes the document's description.
            described = dict(DEFAULT_REASONING_TYPES).get(entry)
            if described is None:
                raise ValueError(f"custom type {entry!r} needs a description")
            entry = {"name": entry, "description": described}
        if not isinstance(entry, dict):
            raise ValueError("each reasoning type must be an object {name, description}")
        out.append(
            {
                "name": str(entry.get("name", "")).strip(),
                "description": str(entry.get("description", "")).strip(),
            }
        )
    return out


def settings_table(raw: dict) -> list[dict]:
    """Rows for the campaign page: name, value, default, changed, help."""
    return ReasoningSettings.table(raw)
