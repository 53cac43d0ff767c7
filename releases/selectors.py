"""Reads for releases. ``public_*`` selectors serve anonymous visitors: they return only
published releases and, for items, only public statements and public examples (never a
hidden test, never a reference solution, never an unpublished problem)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db.models import Count, OuterRef, Q, QuerySet

from evolution.models import TestCase
from evolution.rendering import examples_to_show, render_statement
from review.selectors import problems_under_blind_review

from . import blinding, difficulty
from .gate import GateRules, RulesError
from .leaderboard import board
from .models import (
    Benchmark,
    Erratum,
    LeaderboardRun,
    Release,
    ReleaseItem,
    ReleaseState,
)

# --- curator side ---------------------------------------------------------------------------


def benchmark_list() -> QuerySet[Benchmark]:
    return Benchmark.objects.annotate(n_releases=Count("releases")).order_by("name")


def release_list() -> QuerySet[Release]:
    return Release.objects.select_related("benchmark").order_by(
        "benchmark__name", "-major", "-minor", "-patch"
    )


def release_latest_gate_run(*, release: Release):
    return release.gate_runs.order_by("-created_at", "-id").first()


def release_runs(*, release: Release) -> QuerySet[LeaderboardRun]:
    return release.runs.select_related("endpoint").order_by("-created_at")


def _version_text(key: tuple[int, int, int]) -> str:
    return ".".join(str(n) for n in key)


def _taken_versions(benchmark_id: int) -> set[tuple[int, int, int]]:
    return set(
        Release.objects.filter(benchmark_id=benchmark_id).values_list("major", "minor", "patch")
    )


def next_free_version(*, benchmark: Benchmark) -> str:
    """The version a new draft of ``benchmark`` gets by default: 1.0.0 for the first, else
    the next minor version after the newest one (a new draft brings new content)."""
    taken = _taken_versions(benchmark.pk)
    if not taken:
        return "1.0.0"
    major, minor, _ = max(taken)
    return _version_text((major, minor + 1, 0))


def release_next_versions(*, release: Release) -> list[dict]:
    """The patch, minor and major versions after ``release``, each free or not; the first
    free one is the default of the *Start the next version* form."""
    major, minor, patch = release.version_key
    taken = _taken_versions(release.benchmark_id)
    options = [
        {"bump": "patch", "key": (major, minor, patch + 1)},
        {"bump": "minor", "key": (major, minor + 1, 0)},
        {"bump": "major", "key": (major + 1, 0, 0)},
    ]
    chosen = False
    for option in options:
        option["version"] = _version_text(option["key"])
        option["free"] = option["key"] not in taken
        option["default"] = option["free"] and not chosen
        chosen = chosen or option["default"]
    return options


def freeze_preview(*, release: Release, selection: list[dict]) -> dict:
    """What freezing the draft now would snapshot (for the confirmation the curator sees)."""
    chosen = [e for e in selection if e["included"]]
    latest = release_latest_gate_run(release=release)
    try:
        rules_changed = latest is not None and latest.rules != (
            GateRules.from_dict(release.gate_rules).to_dict()
        )
    except RulesError:
        rules_changed = True
    return {
        "problems": len(chosen),
        "evolved": sum(1 for e in chosen if e["origin"] == "evolved"),
        "original": sum(1 for e in chosen if e["origin"] == "original"),
        "tests": TestCase.objects.filter(problem_id__in=[e["problem_id"] for e in chosen]).count(),
        "questions": release.questions.count(),
        "rules_changed": rules_changed,
    }


# --- changelog and errata ------------------------------------------------------------------


@dataclass
class Changelog:
    previous: Release | None
    added: list[ReleaseItem] = field(default_factory=list)
    removed: list[ReleaseItem] = field(default_factory=list)
    changed: list[ReleaseItem] = field(default_factory=list)
    unchanged: int = 0
    fixed_errata: list[Erratum] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "previous": self.previous.version if self.previous else None,
            "added": [i.public_id for i in self.added],
            "removed": [i.public_id for i in self.removed],
            "changed": [i.public_id for i in self.changed],
            "unchanged": self.unchanged,
            "fixed_errata": [
                {"item": e.item_public_id, "kind": e.kind, "resolution": e.resolution}
                for e in self.fixed_errata
            ],
        }


def release_previous(*, release: Release) -> Release | None:
    """The version this one is compared with: its recorded predecessor, else the newest
    frozen or published version below it."""
    if release.previous_id:
        return release.previous
    older = [
        r
        for r in Release.objects.filter(benchmark_id=release.benchmark_id).exclude(
            state=ReleaseState.DRAFT
        )
        if r.version_key < release.version_key
    ]
    return max(older, key=lambda r: r.version_key, default=None)


def release_changelog(*, release: Release) -> Changelog:
    """Items added, removed and changed (different content hash) against the previous
    version, and the errata this version fixed."""
    previous = release_previous(release=release)
    log = Changelog(previous=previous)
    log.fixed_errata = list(release.fixed_errata.order_by("id"))
    # Questions (reasoning items) count like problems: same public-id and hash comparison.
    current = {i.public_id: i for i in release.items.order_by("position")}
    current |= {q.public_id: q for q in release.questions.order_by("position")}
    if previous is None:
        log.added = list(current.values())
        return log
    before = {i.public_id: i for i in previous.items.order_by("position")}
    before |= {q.public_id: q for q in previous.questions.order_by("position")}
    for pid, item in current.items():
        old = before.get(pid)
        if old is None:
            log.added.append(item)
        elif old.content_hash != item.content_hash:
            log.changed.append(item)
        else:
            log.unchanged += 1
    log.removed = [i for pid, i in before.items() if pid not in current]
    return log


def release_errata(*, release: Release) -> QuerySet[Erratum]:
    return release.errata.select_related("fixed_in").order_by("created_at", "id")


def release_counts(*, release: Release) -> dict:
    rows = release.items.values("origin").annotate(n=Count("id"))
    by_origin = {r["origin"]: r["n"] for r in rows}
    n_questions = release.questions.count()
    return {
        "items": release.item_count,
        # item_count covers both; a draft's count is 0 until it is frozen.
        "problems": max(0, release.item_count - n_questions) if release.item_count else 0,
        "questions": n_questions,
        "tests": release.test_count,
        "evolved": by_origin.get("evolved", 0),
        "original": by_origin.get("original", 0),
    }


def public_release_counts(*, release: Release, withhold_origin: bool) -> dict:
    """``release_counts`` as public pages show them: without the evolved / original split
    while a problem of the release is under blind review (``origin_withheld``)."""
    counts = release_counts(release=release)
    if withhold_origin:
        counts.update(evolved=None, original=None)
    counts["origin_withheld"] = withhold_origin
    return counts


# --- public side ----------------------------------------------------------------------------


def public_release_list() -> QuerySet[Release]:
    """Published releases with their origin counts and ``origin_withheld``: True while one
    of their problems is under blind review (the page then leaves the counts out)."""
    return (
        Release.objects.filter(state=ReleaseState.PUBLISHED)
        .select_related("benchmark")
        .annotate(
            n_evolved=Count("items", filter=Q(items__origin="evolved")),
            n_original=Count("items", filter=Q(items__origin="original")),
            origin_withheld=blinding.release_has_blind_problem_q(OuterRef("pk")),
        )
        .order_by("benchmark__name", "-major", "-minor", "-patch")
    )


def public_release_get(*, slug: str, version: str) -> Release:
    """A published release or Release.DoesNotExist (drafts and frozen ones look the same)."""
    parts = version.split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        raise Release.DoesNotExist
    major, minor, patch = (int(p) for p in parts)
    return Release.objects.select_related("benchmark").get(
        benchmark__slug=slug,
        major=major,
        minor=minor,
        patch=patch,
        state=ReleaseState.PUBLISHED,
    )


@dataclass(frozen=True)
class PublicExample:
    input: str
    output: str


@dataclass(frozen=True)
class PublicItem:
    public_id: str
    title: str
    origin: str
    difficulty: str
    tags: list
    statement: str
    statement_html: str
    harness: str
    entry_point: str
    starter_code: str
    time_limit_s: float | None
    memory_mb: int | None
    examples: list[PublicExample]  # the public examples the statement does not already show
    hidden_tests: int
    # True while reviewers rate this problem blind (releases.blinding): origin, tags,
    # difficulty and its basis, and the limits are then left out (None / empty). The review
    # page shows a group's problems with one set of limits and no origin; the real limits, a
    # dataset's label or a measurement would each tell the seed from its evolutions.
    withheld: bool = False
    # What the difficulty label rests on (a measurement or the dataset's label).
    difficulty_basis: str = ""


def _public_item(item: ReleaseItem, *, with_examples: bool, withheld: bool) -> PublicItem:
    record = item.record
    tests = list(item.tests.all()) if with_examples else []
    return PublicItem(
        public_id=item.public_id,
        title=item.title,
        origin="" if withheld else item.origin,
        difficulty="" if withheld else item.difficulty,
        tags=[] if withheld else list(item.tags or []),
        withheld=withheld,
        difficulty_basis=""
        if withheld
        else difficulty.describe((item.provenance or {}).get("difficulty")),
        statement=record.get("statement", ""),
        statement_html=render_statement(record.get("statement", ""), title=item.title)
        if with_examples
        else "",
        harness=record.get("harness", ""),
        entry_point=record.get("entry_point", ""),
        starter_code=record.get("starter_code", ""),
        time_limit_s=None if withheld else float(record.get("time_limit_s", 0)),
        memory_mb=None if withheld else int(record.get("memory_mb", 0)),
        examples=examples_to_show(
            record.get("statement", ""),
            [
                PublicExample(input=t.input, output=t.output)
                for t in tests
                if not t.hidden and t.tier == "public"
            ],
        ),
        hidden_tests=sum(1 for t in tests if t.hidden),
    )


@dataclass(frozen=True)
class PublicQuestion:
    """A reasoning question as the public sees it: never its reference answer (the hidden
    test of a reasoning release) nor its provenance."""

    public_id: str
    reasoning_type: str
    difficulty: int | None
    question: str
    # True while reviewers rate this question blind: its type and difficulty are left out.
    withheld: bool = False


def public_release_questions(*, release: Release, blind=frozenset()) -> list[PublicQuestion]:
    """``blind``: public ids under blind review (``blinding.Blind``, or a set of them)."""
    if release.state != ReleaseState.PUBLISHED:
        return []
    return [
        PublicQuestion(
            public_id=q.public_id,
            reasoning_type="" if q.public_id in blind else q.reasoning_type,
            difficulty=None if q.public_id in blind else q.difficulty,
            question=q.question,
            withheld=q.public_id in blind,
        )
        for q in release.questions.order_by("position").only(
            "public_id", "reasoning_type", "difficulty", "question"
        )
    ]


def public_release_items(*, release: Release) -> list[PublicItem]:
    if release.state != ReleaseState.PUBLISHED:
        return []
    items = release.items.order_by("position")
    blind = problems_under_blind_review()
    return [_public_item(i, with_examples=False, withheld=i.problem_id in blind) for i in items]


def public_release_item(*, release: Release, public_id: str) -> PublicItem:
    if release.state != ReleaseState.PUBLISHED:
        raise ReleaseItem.DoesNotExist
    item = release.items.prefetch_related("tests").get(public_id=public_id)
    blind = item.problem_id in problems_under_blind_review()
    return _public_item(item, with_examples=True, withheld=blind)


def public_leaderboard(*, release: Release, sort: str = "pass1", descending: bool = True):
    """Completed runs on a published release as rows for the leaderboard table (every
    problem, every model; ``board.build`` applies the public page's controls)."""
    return board.build(release=release, sort=sort, descending=descending).rows


def published_items_for_problems(problem_ids) -> list[dict]:
    """The items of published releases that show these problems (review's curator warning)."""
    items = (
        ReleaseItem.objects.filter(
            problem_id__in=problem_ids, release__state=ReleaseState.PUBLISHED
        )
        .select_related("release__benchmark")
        .order_by("public_id")
    )
    return [
        {
            "public_id": i.public_id,
            "title": i.title,
            "benchmark": i.release.benchmark.name,
            "slug": i.release.benchmark.slug,
            "version": i.release.version,
        }
        for i in items
    ]
