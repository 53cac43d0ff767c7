"""A published release some of whose problems reviewers are rating blind, a crawl of every
public page (and public API answer) reachable from the release list, and a detector of the
facts that would tell a reviewer which problem of a group is the seed.

The facts of a problem under blind review: its origin, its difficulty label and what the
label rests on, its real time and memory limits (the review page shows the group's most
generous ones), its reviewer tags and its measured pass@1 over the living panel. Facts of the
release while any of its problems is under review: the counts that split it by origin
("2 evolved, 1 original", from which a withheld origin follows by subtraction) and the
leaderboard's pass@1 by origin and by difficulty.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from html import unescape
from urllib.parse import unquote, urlsplit

from django.utils import timezone

from evolution.models import Problem
from releases import services as release_services
from releases.difficulty import describe
from releases.models import DifficultyPoint, ReleaseItem, Remeasurement, SaturationFlag
from review import services as review_services
from review.models import Assignment, Review, Tag
from tests.support.gate_rules import SELECTION_TIME_OK
from tests.support.scoring import completed_run

from .builders import crafted_world

OFF_LIMITS = "off limits while you rate problems blind"
COUNTS_WITHHELD = "origin counts withheld during blind review"
# Limits no other number on the pages is likely to equal: seed, its evolution, the other one.
LIMITS = {"S2": (2.5, 320), "E-OVERRIDE": (1.75, 384), "E-OK": (3.25, 448)}
PASS_AT_1 = {"S2": 0.1875, "E-OVERRIDE": 0.8125, "E-OK": 0.4375}
TAG = "sweep-line-SECRET"
SEED_CONTEST = datetime(2023, 7, 8, tzinfo=UTC)
# The leaderboard's model: released after the seed's contest, before the evolutions.
MODEL_RELEASED = date(2024, 5, 13)
LINK = re.compile(r'(?:href|hx-get|action)="(/[^"]*)"')
QUERY_LINK = re.compile(r'href="(\?[^"]*)"')


@dataclass
class Facts:
    """What the public pages know about one released problem."""

    key: str
    public_id: str
    title: str
    origin: str
    difficulty: str
    basis: str
    time_limit_s: float
    memory_mb: int
    tags: list[str]
    pass_at_1: float

    def patterns(self) -> dict[str, re.Pattern]:
        """Each fact as a pattern over the text of a page (or a part of one) about it."""
        t = self.time_limit_s
        limits = {f"{t} s", f"{t:g} s", f"{t}s", f"{t:g}s", f'"time_limit_s": {t}'}
        out = {
            f"origin {self.origin!r}": re.compile(rf"\b{self.origin}\b", re.I),
            "a difficulty label": re.compile(r"\b(easy|medium|hard)\b", re.I),
            "the difficulty basis": re.compile(
                r"measured:|panel attempts|label of |not measured", re.I
            ),
            f"time limit {t} s": re.compile("|".join(re.escape(x) for x in limits)),
            f"memory {self.memory_mb} MB": re.compile(rf"\b{self.memory_mb}\s*MB\b"),
            f"measured pass@1 {self.pass_at_1:.2f}": re.compile(re.escape(f"{self.pass_at_1:.2f}")),
        }
        for tag in self.tags:
            out[f"tag {tag!r}"] = re.compile(re.escape(tag), re.I)
        return out


@dataclass
class BlindWorld:
    release: object
    review_round: object
    under_review: list[Facts]
    visible: list[Facts]
    urls: list[str] = field(default_factory=list)  # every public page of the release

    def close_round(self) -> None:
        """Every reviewer has submitted: nothing is under blind review any more."""
        Assignment.objects.filter(group__round=self.review_round).update(
            submitted_at=timezone.now(), certified_no_ai=True
        )


def blind_world(personas) -> BlindWorld:
    """The crafted world (items S2, E-OK, E-OVERRIDE; S2 an original labelled "hard" by its
    dataset, the others evolved and measured), with a reviewer tag, distinct limits per
    problem, one completed re-measurement (E-OVERRIDE saturated), published; then an open round
    over S2, E-OVERRIDE and E-UNSOLVED (S2 and E-OVERRIDE of the release under blind
    review, E-OK not) that reviewers A and B
    have not submitted."""
    world = crafted_world()
    tag = Tag.objects.create(name=TAG, status="approved")
    for review in Review.objects.all():
        review.tags.add(tag)
    for index, (key, (seconds, mb)) in enumerate(LIMITS.items()):
        # Neutral titles: the fixture's "Seed S2" / "Evolved E-OK" would name the origin.
        Problem.objects.filter(pk=world.problem(key).pk).update(
            time_limit_s=seconds, memory_mb=mb, title=f"Problem {'ABC'[index]}lpha"
        )
    # The seed's contest was long before its evolutions were made (its problem date).
    Problem.objects.filter(pk=world.problem("S2").pk).update(contest_date=SEED_CONTEST)
    bench = release_services.benchmark_create(
        default_rules=SELECTION_TIME_OK, name="Blind Bench", description="Harder problems."
    )
    release = release_services.release_create(benchmark=bench, campaigns=[world.campaign])
    release_services.gate_run_create(release=release)
    release = release_services.release_freeze(release=release)
    release = release_services.release_publish(release=release)
    _remeasured(release, world)
    _evaluated(release)

    review_round = review_services.round_create(
        name="blind round over published problems",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        problem_groups=[[world.problem(k) for k in ("S2", "E-OVERRIDE", "E-UNSOLVED")]],
    )
    in_round = set(review_round.groups.values_list("items__problem_id", flat=True))
    under, visible = [], []
    for item in ReleaseItem.objects.filter(release=release).order_by("position"):
        key = next(k for k in LIMITS if world.problem(k).pk == item.problem_id)
        facts = Facts(
            key=key,
            public_id=item.public_id,
            title=item.title,
            origin=item.origin,
            difficulty=item.difficulty,
            basis=describe((item.provenance or {}).get("difficulty")),
            time_limit_s=float(item.record["time_limit_s"]),
            memory_mb=int(item.record["memory_mb"]),
            tags=list(item.tags or []),
            pass_at_1=PASS_AT_1[key],
        )
        (under if item.problem_id in in_round else visible).append(facts)
    base = f"/releases/{bench.slug}/v{release.version}/"
    urls = [
        "/releases/",
        base,
        base + "card.md",
        base + "leaderboard/",
        base + "questions/leaderboard/",
        *(base + f"items/{f.public_id}/" for f in under + visible),
        f"/benchmarks/{bench.slug}/living/",
    ]
    return BlindWorld(
        release=release,
        review_round=review_round,
        under_review=under,
        visible=visible,
        urls=urls,
    )


def _remeasured(release, world) -> None:
    """A completed re-measurement: a dated pass@1 per problem, E-OVERRIDE flagged saturated."""
    at = timezone.now() - timedelta(hours=1)
    remeasurement = Remeasurement.objects.create(
        benchmark=release.benchmark,
        release=release,
        trigger="manual",
        state="completed",
        finished_at=at,
        summary={"saturated": 1, "problems": 3},
    )
    for item in release.items.all():
        key = next(k for k in LIMITS if world.problem(k).pk == item.problem_id)
        p = PASS_AT_1[key]
        DifficultyPoint.objects.create(
            remeasurement=remeasurement,
            release=release,
            public_id=item.public_id,
            measured_at=at,
            pass_at_1=p,
            low=max(0.0, p - 0.1),
            high=min(1.0, p + 0.1),
            samples=16,
            passes=round(p * 16),
        )
        if key == "E-OVERRIDE":
            SaturationFlag.objects.create(
                release=release,
                public_id=item.public_id,
                flagged_at=at,
                pass_at_1=p,
                bound=0.8,
                saturating_models=["panel-model-one"],
                remeasurement=remeasurement,
            )


def _evaluated(release) -> None:
    """A completed leaderboard run, so the leaderboard has a row and its breakdowns."""

    def estimate(value: float, n: int) -> dict:
        return {"value": value, "low": max(0.0, value - 0.2), "high": min(1.0, value + 0.2), "n": n}

    completed_run(
        release=release,
        source="upload",
        label="blind-bench-model",
        model_release_date=MODEL_RELEASED,
        summary={
            "k": [1],
            "pass": {"1": estimate(0.5, 3)},
            "breakdown": {
                "difficulty": {"hard": estimate(0.25, 1), "medium": estimate(0.625, 2)},
                "origin": {"evolved": estimate(0.625, 2), "original": estimate(0.25, 1)},
            },
            # One problem (the seed) is older than the model: flagged, left out of "clean".
            "contamination": {"clean_pass1": estimate(0.625, 2), "flagged": 1},
        },
    )


# --- the crawl ----------------------------------------------------------------------------------


@dataclass
class Page:
    url: str
    status: int
    content_type: str
    body: str
    headers: dict

    @property
    def is_html(self) -> bool:
        return "text/html" in self.content_type

    @property
    def is_json(self) -> bool:
        return "json" in self.content_type


def _public(url: str) -> bool:
    path = urlsplit(url).path
    return path.startswith(("/releases/", "/benchmarks/"))


def crawl_public(client, world: BlindWorld) -> list[Page]:
    """Every public page reachable from the release list by links (any query string: the
    leaderboard's sort links included), then the release's pages by address (a reviewer
    can type them) and the public API answers about the release."""
    pages: list[Page] = []
    seen: set[str] = set()
    todo = ["/releases/"]
    while todo:
        url = unescape(todo.pop(0))
        if url in seen or not _public(url):
            continue
        seen.add(url)
        page = _get(client, url)
        pages.append(page)
        if page.status == 200 and page.is_html:
            path = urlsplit(url).path
            todo.extend(LINK.findall(page.body))
            todo.extend(path + q for q in QUERY_LINK.findall(page.body))
    for url in [
        *world.urls,
        "/api/releases",
        f"/api/releases/{world.release.pk}/leaderboard",
        f"/api/benchmarks/{world.release.benchmark.slug}/living",
    ]:
        if url not in seen:
            seen.add(url)
            pages.append(_get(client, url))
    return pages


def _get(client, url: str) -> Page:
    response = client.get(url)
    return Page(
        url=url,
        status=response.status_code,
        content_type=response.get("Content-Type", ""),
        body=response.content.decode("utf-8", "replace"),
        headers=dict(response.items()),
    )


def visible_text(html: str) -> str:
    """What a person reads (``<title>`` of an SVG mark included), tags turned to spaces."""
    text = re.sub(
        r"<script\b(?![^>]*application/json).*?</script>|<style\b.*?</style>", " ", html, flags=re.S
    )
    return unescape(re.sub(r"<[^>]+>", " ", text))


def _scopes(page: Page, facts: Facts) -> list[str]:
    """The parts of ``page`` about the problem ``facts``: all of its own page; elsewhere each
    table row, list entry, Markdown line or JSON object that names it."""
    if urlsplit(page.url).path.endswith(f"/items/{facts.public_id}/"):
        return [visible_text(page.body)]
    if page.is_json:
        found = []

        def walk(value):
            if isinstance(value, dict):
                if facts.public_id in json.dumps(value) and not any(
                    isinstance(v, (dict, list)) and facts.public_id in json.dumps(v)
                    for v in value.values()
                ):
                    found.append(json.dumps(value))
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)

        try:
            walk(json.loads(page.body))
        except ValueError:
            return [page.body] if facts.public_id in page.body else []
        return found
    if page.is_html:
        parts = re.findall(r"<tr\b.*?</tr>|<li\b.*?</li>|<p\b.*?</p>", page.body, flags=re.S)
        return [visible_text(p) for p in parts if facts.public_id in p]
    return [line for line in page.body.splitlines() if facts.public_id in line]


# The release-level facts, on any page of a release with a problem under blind review.
ORIGIN_COUNT = re.compile(r"\b\d+\s*(evolved|original)\b", re.I)
BREAKDOWN = re.compile(r"\bby (origin|difficulty)\b|[?&]sort=(o|d)(%3A|:)", re.I)
# The seed's problem date is its contest's, an evolution's the day it was made: the date
# window (its dates, a count in view per date) and the count of problems older than a model
# ("flagged", and the pass@1 over the others) split the release by origin.
DATE_WINDOW = re.compile(r'data-dates="|name="after"|"dates":|released on or after', re.I)
FLAGGED = re.compile(r'\b\d+ flagged\b|"flagged":\s*\d|"clean":\s*\{', re.I)


def leaks(pages: list[Page], under_review: list[Facts]) -> list[str]:
    """Human-readable reports of withheld facts found; empty when none shows."""
    out = []
    for page in pages:
        if page.status >= 400 and OFF_LIMITS not in page.body:
            continue  # a 404 page shows nothing; the off-limits page is checked like any
        text = visible_text(page.body) if page.is_html else page.body
        if m := ORIGIN_COUNT.search(text):
            out.append(f"{page.url}: origin count {m.group(0)!r}")
        if page.is_json:
            for key in ('"n_evolved"', '"n_original"', '"evolved":', '"original":'):
                if key in page.body:
                    out.append(f"{page.url}: origin count key {key}")
        if m := BREAKDOWN.search(page.body):
            out.append(f"{page.url}: leaderboard breakdown {m.group(0)!r}")
        if m := DATE_WINDOW.search(page.body):
            out.append(f"{page.url}: leaderboard date window {m.group(0)!r}")
        if m := FLAGGED.search(text):
            out.append(f"{page.url}: contamination count {m.group(0)!r}")
        for facts in under_review:
            for scope in _scopes(page, facts):
                for name, pattern in facts.patterns().items():
                    if m := pattern.search(scope):
                        out.append(
                            f"{page.url}: {facts.public_id} ({facts.key}) shows {name}: "
                            f"{m.group(0)!r}"
                        )
    return out


def path_of(url: str) -> str:
    return unquote(urlsplit(url).path)
