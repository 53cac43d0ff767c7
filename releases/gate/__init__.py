"""The curation gate: declarative rules over plain facts, no database.

Defaults follow the LiveCodeBench-Plus selection (BenchEvolver, Section 4.2): an evolved
problem needs a mean review quality of at least 3 on 1-5, must not be judged invalid, and its
combined pass@1 over the evaluation panel must lie in [0.05, 0.75]; original seed problems
supplement the set when their pass@1 is at most 0.75. On top: a minimum number of reviews and
no near-duplicate of another item or of the seed set (the engine's lexical similarity).

Two difficulty figures can exist for a candidate: the selection-time pass@1 (the campaign
panel's measurement that accepted it) and an independent pass@1 (fresh samples of the release's
evaluation panel, ``releases.independent``). Selection keeps the candidates whose panel happened
to fail them, so the selection-time figure is biased low among the kept ones (the winner's
curse); the difficulty rules read the independent figure and, by default
(``require_independent``), fail a candidate without one. A curator may let them read the
selection-time figure only by turning that off and giving ``selection_time_reason``, which every
rule that reads it shows.

The contamination screen (``evolution.screening``, docs/screening.md) gives every evolved and
synthesized candidate its nearest public problems; ``max_public_similarity`` holds back one too
close to any public problem, ``max_similarity_before`` (with ``similarity_before_date``) one
too close to a public problem older than a day, and without either the report still names the
nearest public problem.

``GateRules.from_dict`` validates a rule set and names the bad key; ``evaluate`` returns, for
every candidate, each rule with passed/failed and why.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import date

from evolution.judging.duplicates import ShingleIndex
from evolution.screening import describe as screen_text


class RulesError(ValueError):
    """A rule set is malformed; ``field`` names the offending key."""

    def __init__(self, field_name: str, message: str):
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


@dataclass(frozen=True)
class GateRules:
    min_quality: float = 3.0
    # The paper's "quality and novelty" score; off unless a release asks for it.
    min_novelty: float | None = None
    reject_invalid: bool = True
    min_reviews: int = 1
    min_pass_at_1: float = 0.05
    max_pass_at_1: float = 0.75
    duplicate_threshold: float = 0.85
    include_originals: bool = True
    original_max_pass_at_1: float = 0.75
    originals_need_review: bool = False
    # Open-ended (scored) problems: the least spread of their sampled solutions' mean scores;
    # None keeps them without a spread requirement.
    min_score_spread: float | None = None
    # Hold back for the curator problems whose hardness is model-only (experts rate them easy,
    # the panel fails them: releases.calibration), the signature of artificial difficulty.
    exclude_model_only_hardness: bool = False
    # The difficulty rules need the independent pass@1 (an evaluation of the release
    # candidates by the release's evaluation panel): the selection-time figure is biased low
    # among the candidates selection kept (the winner's curse), so it is not what a release
    # publishes. A curator may let the rules read it where no independent figure exists, by
    # turning this off AND saying why (``selection_time_reason``, shown on every rule that
    # reads it).
    require_independent: bool = True
    selection_time_reason: str | None = None
    # The contamination screen (evolution.screening, docs/screening.md): an evolved or
    # synthesized problem is held back when its similarity to a public problem (the larger of
    # statement and code similarity) reaches this; None records the nearest public problem
    # without a maximum.
    max_public_similarity: float | None = None
    # A "newer than" claim, as LiveCodeBench makes with release dates: the same maximum against
    # the public problems dated before ``similarity_before_date`` (YYYY-MM-DD; undated ones
    # count as older). Both or neither.
    max_similarity_before: float | None = None
    similarity_before_date: str | None = None

    _OPTIONAL = (
        "min_novelty",
        "min_score_spread",
        "selection_time_reason",
        "max_public_similarity",
        "max_similarity_before",
        "similarity_before_date",
    )
    # The screen keeps every neighbour at similarity 0.2 or above (evolution.screening.services
    # KEEP_FLOOR): a maximum below it could not be checked.
    _RANGES = {
        "min_quality": (1.0, 5.0),
        "min_novelty": (1.0, 5.0),
        "min_reviews": (0, 20),
        "min_pass_at_1": (0.0, 1.0),
        "max_pass_at_1": (0.0, 1.0),
        "duplicate_threshold": (0.0, 1.0),
        "original_max_pass_at_1": (0.0, 1.0),
        "min_score_spread": (0.0, 1.0),
        "max_public_similarity": (0.2, 1.0),
        "max_similarity_before": (0.2, 1.0),
    }

    @classmethod
    def from_dict(cls, data: dict | None) -> GateRules:
        """Defaults overlaid with ``data``; RulesError on unknown keys, wrong types or ranges."""
        data = dict(data or {})
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise RulesError(unknown[0], f"unknown rule; known rules: {', '.join(known)}")
        values = {}
        for name, value in data.items():
            default = getattr(cls, name)
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise RulesError(name, f"must be true or false, got {value!r}")
            elif value is None:
                if name not in cls._OPTIONAL:
                    raise RulesError(name, "must not be empty")
            elif name == "similarity_before_date":
                value = _day(name, value)
            elif name == "selection_time_reason":
                if not isinstance(value, str):
                    raise RulesError(name, f"must be text, got {value!r}")
                value = value.strip() or None
                if value is not None and len(value) > 500:
                    raise RulesError(name, "must be at most 500 characters")
            elif isinstance(value, bool) or not isinstance(value, int | float):
                raise RulesError(name, f"must be a number, got {value!r}")
            elif name == "min_reviews" and value != int(value):
                raise RulesError(name, f"must be a whole number, got {value!r}")
            if value is not None and name in cls._RANGES and not isinstance(value, bool):
                low, high = cls._RANGES[name]
                if not low <= value <= high:
                    raise RulesError(name, f"must be between {low} and {high}, got {value}")
            values[name] = int(value) if name == "min_reviews" else value
        rules = cls(**values)
        if rules.selection_time_reason and rules.require_independent:
            raise RulesError(
                "selection_time_reason",
                "only with require_independent off: it says why the rules may read the "
                "selection-time pass@1",
            )
        if rules.min_pass_at_1 > rules.max_pass_at_1:
            raise RulesError("min_pass_at_1", "must not exceed max_pass_at_1")
        if (rules.max_similarity_before is None) != (rules.similarity_before_date is None):
            missing = (
                "similarity_before_date"
                if rules.similarity_before_date is None
                else "max_similarity_before"
            )
            raise RulesError(
                missing,
                "needed too: the maximum similarity to public problems dated before a day "
                "takes both the maximum and the day",
            )
        return rules

    def to_dict(self) -> dict:
        return asdict(self)


def _day(name: str, value) -> str:
    """A rule's date as YYYY-MM-DD, or RulesError naming the rule."""
    try:
        if isinstance(value, str) and len(value.strip()) == 10:
            return date.fromisoformat(value.strip()).isoformat()
    except ValueError:
        pass
    raise RulesError(name, f"must be a date YYYY-MM-DD, got {value!r}")


@dataclass(frozen=True)
class CandidateFacts:
    """What the gate knows about one candidate problem."""

    problem_id: int
    public_id: str
    title: str
    origin: str  # "evolved" | "original"
    statement: str
    n_reviews: int = 0
    mean_quality: float | None = None
    mean_novelty: float | None = None
    invalid: bool = False
    pass_at_1: float | None = None
    panel_passes: int | None = None
    panel_attempts: int | None = None
    # When the selection-time figure is the benchmark's living panel's re-measurement (an
    # earlier version's item): when it was taken, ISO 8601; "" for a campaign's own figure.
    panel_remeasured_at: str = ""
    # Open-ended problems are scored, not passed: no pass@1 window, a score-spread rule.
    open_ended: bool = False
    score_spread: float | None = None
    mean_difficulty: float | None = None  # the experts' difficulty rating, 1-5
    # The independent figure: passes / attempts of fresh samples by the evaluation panel
    # (infrastructure errors excluded), ``independent_source`` naming the evaluation;
    # ``independent_note`` says why a candidate has none (not evaluated, changed since).
    independent_passes: int | None = None
    independent_attempts: int | None = None
    independent_source: str = ""
    independent_note: str = ""
    # The contamination screen's record (evolution.screening.services.screen_record) of an
    # evolved or synthesized problem; None for originals and unscreened problems.
    screen: dict | None = None

    @property
    def has_independent(self) -> bool:
        return bool(self.independent_attempts)

    @property
    def independent_pass_at_1(self) -> float | None:
        if not self.independent_attempts:
            return None
        return (self.independent_passes or 0) / self.independent_attempts

    @property
    def difficulty_source(self) -> str:
        """Which pass@1 the difficulty rules read: "independent" or "selection"."""
        return "independent" if self.has_independent else "selection"

    @property
    def gate_pass_at_1(self) -> float | None:
        """The pass@1 the difficulty rules read."""
        return self.independent_pass_at_1 if self.has_independent else self.pass_at_1


@dataclass
class RuleResult:
    rule: str
    passed: bool
    detail: str


@dataclass
class CandidateReport:
    facts: CandidateFacts
    rules: list[RuleResult] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(r.passed for r in self.rules)

    def failures(self) -> list[RuleResult]:
        return [r for r in self.rules if not r.passed]

    def to_dict(self) -> dict:
        return {
            "problem_id": self.facts.problem_id,
            "public_id": self.facts.public_id,
            "title": self.facts.title,
            "origin": self.facts.origin,
            "passed": self.passed,
            "facts": {
                **{k: v for k, v in asdict(self.facts).items() if k not in ("statement", "screen")},
                "independent_pass_at_1": self.facts.independent_pass_at_1,
                "difficulty_source": self.facts.difficulty_source,
                "screen": screen_summary(self.facts.screen),
            },
            "rules": [asdict(r) for r in self.rules],
        }


def _fmt(value: float | None) -> str:
    return "none" if value is None else f"{value:.3g}"


def _review_rules(facts: CandidateFacts, rules: GateRules) -> list[RuleResult]:
    out = [
        RuleResult(
            "reviews",
            facts.n_reviews >= rules.min_reviews,
            f"{facts.n_reviews} submitted review(s); at least {rules.min_reviews} required",
        ),
        RuleResult(
            "quality",
            facts.mean_quality is not None and facts.mean_quality >= rules.min_quality,
            f"mean quality {_fmt(facts.mean_quality)}; at least {rules.min_quality} required",
        ),
    ]
    if rules.min_novelty is not None:
        out.append(
            RuleResult(
                "novelty",
                facts.mean_novelty is not None and facts.mean_novelty >= rules.min_novelty,
                f"mean novelty {_fmt(facts.mean_novelty)}; at least {rules.min_novelty} required",
            )
        )
    return out


def _validity_rule(facts: CandidateFacts, rules: GateRules) -> RuleResult:
    if not rules.reject_invalid:
        return RuleResult("validity", True, "validity not checked by this release")
    return RuleResult(
        "validity",
        not facts.invalid,
        "judged invalid by review" if facts.invalid else "not judged invalid",
    )


def _panel(facts: CandidateFacts) -> str:
    """Both figures, the one the rule reads first, each named (the selection-time one is
    biased low by selection: never shown as a plain pass@1)."""
    if facts.panel_attempts:
        selection = (
            f"pass@1 {facts.pass_at_1:.3f} ({facts.panel_passes}/{facts.panel_attempts}), "
            "biased low by selection"
        )
    else:
        selection = "no panel measurement"
    if facts.has_independent:
        return (
            f"independent pass@1 {facts.independent_pass_at_1:.3f} "
            f"({facts.independent_passes}/{facts.independent_attempts} fresh samples, "
            f"{facts.independent_source}); selection-time {selection}"
        )
    if facts.independent_note:
        return f"selection-time {selection} ({facts.independent_note})"
    return f"selection-time {selection}" if facts.panel_attempts else selection


def _score_spread_rule(facts: CandidateFacts, rules: GateRules) -> RuleResult:
    spread = f"score spread {_fmt(facts.score_spread)} across the sampled solutions"
    if rules.min_score_spread is None:
        return RuleResult("score_spread", True, f"{spread}; no minimum set")
    return RuleResult(
        "score_spread",
        facts.score_spread is not None and facts.score_spread >= rules.min_score_spread,
        f"{spread}; at least {rules.min_score_spread} required",
    )


def _difficulty_rule(facts: CandidateFacts, rules: GateRules) -> RuleResult:
    if facts.open_ended:
        return _score_spread_rule(facts, rules)
    if not facts.has_independent and facts.pass_at_1 is not None:
        if rules.require_independent:
            return RuleResult(
                "difficulty",
                False,
                f"{_panel(facts)}; this release requires the independent pass@1 (run the "
                "independent evaluation, or turn require_independent off with a "
                "selection_time_reason)",
            )
        if not rules.selection_time_reason:
            return RuleResult(
                "difficulty",
                False,
                f"{_panel(facts)}; reading the selection-time figure needs the curator's "
                "reason (selection_time_reason)",
            )
    value = facts.gate_pass_at_1
    if value is None:
        return RuleResult("difficulty", False, "no panel measurement")
    chosen = (
        f"; selection-time figure read by the curator's choice: {rules.selection_time_reason}"
        if not facts.has_independent
        else ""
    )
    if facts.origin == "original":
        ceiling = rules.original_max_pass_at_1
        return RuleResult(
            "difficulty",
            value <= ceiling,
            f"{_panel(facts)}; originals need at most {ceiling}{chosen}",
        )
    low, high = rules.min_pass_at_1, rules.max_pass_at_1
    return RuleResult(
        "difficulty",
        low <= value <= high,
        f"{_panel(facts)}; must lie within [{low}, {high}]{chosen}",
    )


def _model_only_rule(facts: CandidateFacts) -> RuleResult:
    from ..calibration import EASY, FAILING

    value = facts.gate_pass_at_1
    model_only = (
        facts.mean_difficulty is not None
        and value is not None
        and facts.mean_difficulty <= EASY
        and value <= FAILING
    )
    return RuleResult(
        "model_only_hardness",
        not model_only,
        f"experts rate difficulty {facts.mean_difficulty:.1f}/5 but pass@1 is {value:.2f}"
        f"{' (independent)' if facts.has_independent else ''}: hardness may be artificial, for curator review"
        if model_only
        else "experts and panel do not point at artificial difficulty",
    )


def screen_summary(record: dict | None) -> dict | None:
    """What a report (and a release's provenance) keeps of a screen: the index it was screened
    against, the nearest public problems, the highest similarity, the lineage set apart."""
    if record is None:
        return None
    return {
        "screened_at": record.get("screened_at"),
        "index": record.get("index"),
        "max_similarity": record.get("max_similarity"),
        "nearest": (record.get("neighbours") or [])[:5],
        "lineage": record.get("lineage") or [],
    }


def _screen_rules(facts: CandidateFacts, rules: GateRules) -> list[RuleResult]:
    """The contamination screen's rules: evolved and synthesized problems only (an original is a
    public problem itself). Without a maximum the rule records the nearest public problem."""
    if facts.origin == "original":
        return [
            RuleResult(
                "public_similarity",
                True,
                "an original: a public problem itself (the screen applies to evolved and "
                "synthesized problems)",
            )
        ]
    record = facts.screen
    nearest = screen_text.nearest_text(record)
    checked = rules.max_public_similarity is not None or rules.max_similarity_before is not None
    if not checked:
        return [RuleResult("public_similarity", True, f"{nearest}; no maximum set")]
    if not record or not (record.get("index") or {}).get("problems"):
        return [
            RuleResult(
                "public_similarity",
                False,
                "not screened: no public corpus is indexed (import one, or run "
                "manage.py screening_index --rebuild)",
            )
        ]
    out = []
    if rules.max_public_similarity is not None:
        value = record.get("max_similarity") or 0.0
        out.append(
            RuleResult(
                "public_similarity",
                value < rules.max_public_similarity,
                f"{nearest}; must stay below {rules.max_public_similarity}",
            )
        )
    if rules.max_similarity_before is not None:
        day = rules.similarity_before_date
        older = screen_text.before(record, day)
        detail = (
            f"closest public problem dated before {day} (or undated): "
            + screen_text.neighbour_text(older)
            if older
            else f"no public problem dated before {day} (or undated) at similarity 0.2 or above"
        )
        out.append(
            RuleResult(
                "public_similarity_before",
                older is None or older["similarity"] < rules.max_similarity_before,
                f"{detail}; must stay below {rules.max_similarity_before}",
            )
        )
    return out


def evaluate(
    candidates: list[CandidateFacts],
    rules: GateRules,
    *,
    seed_statements: dict[str, tuple[int, str]] | None = None,
) -> list[CandidateReport]:
    """Apply ``rules`` to every candidate, in order (evolved ones first is the caller's job).

    Near-duplicates: an evolved candidate is compared with the seed set
    (``seed_statements``: label -> (problem id, statement), its own seed included: a reskin of
    its seed is a duplicate too; the candidate itself, when it is also a seed, is not); every candidate with the earlier candidates that passed all their
    other rules, so of two near-identical problems the first is kept and the second is
    reported as its duplicate. Each statement is tokenised once (``ShingleIndex``), not once per
    pair: the comparisons grow with the square of the candidates, the tokenising does not.
    """
    seed_statements = seed_statements or {}
    texts = ShingleIndex(
        [f.statement for f in candidates] + [text for _, text in seed_statements.values()]
    )
    kept: dict[str, str] = {}
    reports = []
    for facts in candidates:
        report = CandidateReport(facts=facts)
        if facts.origin == "original":
            report.rules.append(
                RuleResult(
                    "supplement",
                    rules.include_originals,
                    "original seeds supplement the release"
                    if rules.include_originals
                    else "this release takes no original seeds",
                )
            )
            if rules.originals_need_review:
                report.rules.extend(_review_rules(facts, rules))
        else:
            report.rules.extend(_review_rules(facts, rules))
        report.rules.append(_validity_rule(facts, rules))
        report.rules.append(_difficulty_rule(facts, rules))
        if rules.exclude_model_only_hardness:
            report.rules.append(_model_only_rule(facts))
        report.rules.extend(_screen_rules(facts, rules))

        against = dict(kept)
        if facts.origin == "evolved":
            # A problem is no duplicate of itself: a saturated problem re-evolved is both a seed
            # of the new campaign and a candidate carried from the previous version.
            against.update(
                {
                    f"seed {label}": text
                    for label, (problem_id, text) in seed_statements.items()
                    if problem_id != facts.problem_id
                }
            )
        dup = texts.near_duplicate(facts.statement, against, rules.duplicate_threshold)
        report.rules.append(
            RuleResult(
                "duplicate",
                not dup.duplicate,
                f"near-duplicate of {dup.against} (similarity {dup.score:.2f} >= "
                f"{rules.duplicate_threshold})"
                if dup.duplicate
                else f"closest: {dup.against or 'nothing'} (similarity {dup.score:.2f})",
            )
        )
        if report.passed:
            kept[facts.public_id] = facts.statement
        reports.append(report)
    return reports
