"""Problem sources: what review and releases may ask a campaign kind about its items.

Review rounds, the curation gate, releases and the leaderboard sit above the campaign kinds
and never import one by name. A kind whose items people review or publish registers a
``ProblemSource`` in its ``<app>/sources.py``; ``autodiscover`` (called from
``evolution.apps``) imports every installed app's ``sources`` module, the way Django finds
``admin`` modules. Review and releases then ask the registry: ``source_get(kind)`` by kind
name, or ``source_for_model(model)`` for the item table a foreign key of theirs points to.

Items stay the kind's own model instances (review's ``GroupItem`` and releases'
``ReleaseQuestion`` keep a foreign key to them); everything review and releases need to know
*about* an item goes through the source: which items are reviewable, how they are grouped,
what a blinded reviewer sees, what a release snapshots (``ItemFacts``) and how a curator's
verdict on an answer flows back into the campaign.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import Model, QuerySet
from django.utils.module_loading import autodiscover_modules


@dataclass(frozen=True)
class Presentation:
    """An item as a blinded reviewer sees it: the statement to rate and the answer to judge.
    Nothing else: no campaign, run, model, score, difficulty or type."""

    statement: str
    answer: str


@dataclass(frozen=True)
class ItemFacts:
    """What a release snapshots of an item and what the gate reads: its statement and
    reference answer (the hidden test), its type and measured difficulty, its settled score
    and whether it can be published at all (``status_ok``), with where it came from."""

    pk: int
    kind: str
    item_type: str
    difficulty: int
    statement: str
    reference_answer: str
    score: float | None
    status: str
    status_ok: bool
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class PanelFacts:
    """What a panel measured of one coding problem, as the gate reads it and a release keeps
    it: the pooled ``passes`` of ``attempts``; ``endpoints``, the ids of the models whose
    answers made the figure (an independent evaluation may leave them out); ``provenance``,
    what a release snapshots of the measurement (the campaign, the candidate or the seed
    calibration, the validation ledger, per-model ``panel_results``); the difficulty ``level``
    the measurement gave and when it was taken (``measured_at``, None when not recorded);
    ``remeasured_at`` when the benchmark's living panel re-measured it since; ``source``, which
    measurement gave the figure, as pages name it ("candidate": an accepted candidate's panel,
    "calibration": a seed's calibration, "measurement": the shared panel measurement)."""

    passes: int | None
    attempts: int | None
    endpoints: frozenset[int] = frozenset()
    provenance: dict[str, Any] = field(default_factory=dict)
    level: int | None = None
    measured_at: datetime | None = None
    remeasured_at: str = ""
    source: str = ""


class ProblemSource:
    """The interface a kind implements for its reviewable items (subclass and register).

    Every method takes or returns the kind's item instances; review and releases treat them
    as opaque and only ever hand them back to the same source."""

    #: the kind's name, e.g. the ``Campaign.kind`` value ("reasoning")
    kind: str = ""
    #: what a person calls the items ("reasoning questions")
    label: str = ""
    #: ``app_label.ModelName`` of the item table other apps' foreign keys point to
    item_model_label: str = ""
    #: ``select_related`` paths ``facts`` reads, so callers can fetch them with the item
    item_related: tuple[str, ...] = ()

    @property
    def item_model(self) -> type[Model]:
        from django.apps import apps

        return apps.get_model(self.item_model_label)

    # --- choosing items ---------------------------------------------------------------------

    def campaigns(self) -> QuerySet:
        """Every campaign row of the kind, newest first."""
        raise NotImplementedError

    def reviewable_campaigns(self) -> QuerySet:
        """Campaign rows with at least one reviewable item, newest first."""
        raise NotImplementedError

    def campaign_label(self, campaign) -> str:
        raise NotImplementedError

    def items_by_id(self, ids: Iterable[int]) -> dict[int, Any]:
        return self.item_model.objects.in_bulk(list(ids))

    def review_groups(
        self, *, campaign=None, item_ids=None, group_size: int, max_groups: int | None = None
    ) -> list[list]:
        """Reviewable items cut into review groups of ``group_size`` (or one fewer)."""
        raise NotImplementedError

    def review_refusal(self, item) -> str | None:
        """Why ``item`` cannot be reviewed; None when it can."""
        raise NotImplementedError

    def group_type(self, items: list) -> str:
        """The type a group's items share ("" when they mix types)."""
        return ""

    def group_order(self, item) -> tuple:
        """Sort key of an item inside its group (curators see this order)."""
        return (item.pk,)

    def creator_ids(self, *, item_ids: Iterable[int]) -> set[int]:
        """Users who launched the campaigns behind these items (never their reviewers)."""
        raise NotImplementedError

    # --- what people see --------------------------------------------------------------------

    def present(self, item) -> Presentation:
        raise NotImplementedError

    def subject_label(self, item) -> str:
        """What a curator calls the item."""
        return f"{self.kind} item {item.pk}"

    def export_columns(self, item) -> dict[str, Any]:
        """The kind's columns of a review export row; every key with None when ``item`` is
        None (a row about something else), so CSV keeps one header."""
        return {}

    # --- what people decide -----------------------------------------------------------------

    def answer_override(self, *, item_id: int, score: float | None, reason: str, user) -> None:
        """A curator settled whether the item's answer is correct (1.0 / 0.0; None clears):
        the kind replaces its own score with it."""
        raise NotImplementedError

    # --- releases ---------------------------------------------------------------------------

    def facts(self, item) -> ItemFacts:
        raise NotImplementedError

    def release_candidates(self, *, campaign=None, item_type: str = "") -> QuerySet:
        """Items that may become release questions, in release order (filtered further by
        the release's own rules on ``facts``)."""
        raise NotImplementedError

    # --- scoring answer models on released items ---------------------------------------------

    def answer_question(self, *, question: str, endpoint, replay_key: str) -> str:
        """An answer model's answer to a released item (LLMError when the call fails)."""
        raise NotImplementedError

    def score_answer(
        self,
        *,
        question: str,
        item_type: str,
        difficulty: int,
        answer: str,
        judges: list,
        reference_answer: str | None,
        replay_key: str,
    ) -> dict:
        """The kind's judges grade ``answer``, against ``reference_answer`` when a curator
        confirmed one: ``{"score": 0..1, "mode": "judge" | "reference", "verdicts": [...]}``
        (LLMError when a judge's call fails)."""
        raise NotImplementedError


_SOURCES: dict[str, ProblemSource] = {}


def source_register(source: ProblemSource) -> ProblemSource:
    """Register a kind's source; a second source for the same kind is refused."""
    if not source.kind or not source.item_model_label:
        raise ValueError(f"{type(source).__name__} must set kind and item_model_label")
    existing = _SOURCES.get(source.kind)
    if existing is not None and type(existing) is not type(source):
        raise ValueError(
            f"a problem source for kind {source.kind!r} is already registered "
            f"({type(existing).__name__})"
        )
    _SOURCES[source.kind] = source
    return source


def source_get(kind: str) -> ProblemSource:
    try:
        return _SOURCES[kind]
    except KeyError:
        known = ", ".join(sorted(_SOURCES)) or "none"
        raise LookupError(f"no problem source for kind {kind!r} (registered: {known})") from None


def source_for_model(model: type[Model]) -> ProblemSource:
    """The source whose items live in ``model`` (e.g. the target of a foreign key)."""
    label = model._meta.label
    for source in _SOURCES.values():
        if source.item_model_label == label:
            return source
    raise LookupError(f"no problem source serves {label}")


def source_list() -> list[ProblemSource]:
    return [_SOURCES[k] for k in sorted(_SOURCES)]


def autodiscover() -> None:
    """Import ``<app>.sources`` of every installed app (each registers its source)."""
    autodiscover_modules("sources")
