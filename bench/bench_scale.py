"""BenchForge at LiveCodeBench's scale (issue #36), on SIMULATED data shaped like LiveCodeBench v6.

Two sizes, so the table shows how each figure grows: 100 problems x 20 models and 1,000
problems x 50 models, 10 samples per problem and model (``--quick``: the small size only).
Every size runs in a throwaway database (created and dropped here) on the configured
PostgreSQL, through the real code paths:

- **import**: the problems are written as a LiveCodeBench ``CodeGenerationProblem`` JSONL (its
  private tests packed as base64(zlib(pickle(json))), as LiveCodeBench ships them) and read by
  ``evolution.importers.import_seeds(source="lcb")``, which also indexes them for the
  contamination screen;
- a campaign whose seed set is the imported set (one lineage per seed with a simulated panel
  calibration, so every problem supplements the release as an original), the **curation gate**
  over its candidates (``releases.services.gate_run_create``), **freeze** and publish;
- M simulated models, each a run of the release scored as the scoring service scores one
  (claimed, samples written in ``public_record.writing()``, ``leaderboard.run_summary``,
  ``record_completion``); the first run's **summary** is timed;
- the public **release, problem and leaderboard pages** through Django's test client (cold:
  every cache cleared before the request; warm: the page cache filled), the leaderboard also
  with a date window (the median problem date: half the problems in view) and with that window
  and a one-model filter;
- a **review round** over every problem (``review.services.round_create`` with the groups
  ``review.selectors.coding_group_plan`` plans, two of four reviewers per group);
- the **database size** per problem and per sample (``pg_total_relation_size``);
- the **judge**: ``JUDGED`` simulated submissions really judged in the sandbox by a run of the
  release executed as the scoring service executes one (``leaderboard.run_execute``), and as
  many doing no work (the overhead per submission); the rate extrapolated to 500,000 samples;
- the **heatmap JSON** of a finished campaign of ``HEATMAP_SEEDS_PER_PROBLEM`` seeds per problem
  x ``HEATMAP_ROUNDS`` rounds (10,000 seeds at 1,000 problems), first page and every row.

Simulated data (nothing here is LiveCodeBench's own): statements of 60-160 words with Input /
Output / Constraints / Sample sections (``bench_screening``'s generator), one public test and
10-30 private tests per problem. A private test's input is ``_TEST_MEDIAN`` bytes at the median,
log-normal (sigma ``_TEST_SIGMA``) and capped at ``_TEST_CAP``; one problem in ten also has a
large test of 0.5-2 MB, as LiveCodeBench's largest private tests (inputs of 2 x 10^5 numbers)
run to megabytes. Difficulties easy / medium / hard in equal shares, contest dates uniform over
2023-05-01 .. 2025-04-30 (LiveCodeBench v6's window). A model's chance on a problem comes from
its simulated skill and the problem's difficulty; each sample is AC or WA with that chance.

Timings are medians of ``REPEATS`` where a measure is cheap and repeatable (pages, the gate,
a summary, a round); one-off writes (import, freeze) are timed once.
"""

from __future__ import annotations

import base64
import json
import math
import pickle
import random
import statistics
import time
import zlib
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import date, timedelta

from bench.support import throwaway_database

NAME = "LiveCodeBench scale, SIMULATED data (bench_scale)"
SIZES = ((100, 20), (1000, 50))
QUICK_SIZES = ((100, 20),)
SAMPLES = 10
REPEATS = 3
# Repeat a measure for its median only while one run of it stays under this many seconds.
REPEAT_UNDER_S = 20.0

_TEST_MEDIAN = 1_500
_TEST_SIGMA = 1.6
_TEST_CAP = 256 * 1024
_LARGE_SHARE = 0.1
_LARGE_RANGE = (512 * 1024, 2 * 1024 * 1024)
_FIRST_DAY = date(2023, 5, 1)
_LAST_DAY = date(2025, 4, 30)
_DIFFICULTIES = ("easy", "medium", "hard")
_RULES = {
    "require_independent": False,
    "selection_time_reason": "simulated scale data: no independent evaluation is run",
}

# The judge rows: this many simulated submissions really judged in the sandbox, a run of the
# release executed as the scoring service executes one (``leaderboard.run_execute``), and as
# many that do no work (the overhead per submission); the rate is extrapolated to a full
# leaderboard run of LiveCodeBench's size.
JUDGED = 40
FULL_RUN_SAMPLES = 500_000
# The heatmap rows: a finished BenchEvolver campaign of this many seeds per problem of the size
# (10,000 seeds at 1,000 problems) x HEATMAP_ROUNDS rounds, its heatmap JSON read by a curator.
HEATMAP_SEEDS_PER_PROBLEM = 10
HEATMAP_ROUNDS = 10

# Targets (issue #36): seconds, or "queries" (the query count must not grow with the data).
PAGE_TARGET_S = 1.0
GATE_TARGET_S = 5.0
QUERIES = "queries"
# Written in bulk, not one row at a time: fewer queries than problems.
BULK = "bulk"


@dataclass
class Measure:
    seconds: float
    queries: int | None = None
    note: str = ""


@dataclass
class SizeResult:
    problems: int
    models: int
    samples: int = SAMPLES
    measures: dict[str, Measure] = field(default_factory=dict)
    facts: dict[str, str] = field(default_factory=dict)


# --- simulated data ------------------------------------------------------------------------------


def _digits(rng: random.Random, size: int) -> str:
    """About ``size`` bytes of whitespace-separated integers, as a stdin test reads."""
    count = max(1, size // 7)
    numbers = " ".join(str(rng.randint(0, 999_999)) for _ in range(count))
    return f"{count}\n{numbers}\n"


def private_test_sizes(rng: random.Random) -> list[int]:
    """The simulated private tests' input sizes of one problem, in bytes."""
    sizes = [
        min(_TEST_CAP, int(rng.lognormvariate(math.log(_TEST_MEDIAN), _TEST_SIGMA)))
        for _ in range(rng.randint(10, 30))
    ]
    if rng.random() < _LARGE_SHARE:
        sizes.append(rng.randint(*_LARGE_RANGE))
    return sizes


def _packed(tests: list[dict]) -> str:
    """LiveCodeBench's packed private tests: base64(zlib(pickle(json string)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()


def lcb_jsonl(problems: int, *, seed: int = 36) -> tuple[str, int]:
    """A simulated LiveCodeBench v6 JSONL of ``problems`` lines and its private tests' bytes."""
    from bench.bench_screening import statement_text, vocabulary

    rng = random.Random(seed)
    words = vocabulary(rng)
    span = (_LAST_DAY - _FIRST_DAY).days
    lines, test_bytes = [], 0
    for i in range(problems):
        private = []
        for size in private_test_sizes(rng):
            text = _digits(rng, size)
            private.append(
                {"input": text, "output": f"{rng.randint(0, 10**9)}\n", "testtype": "stdin"}
            )
            test_bytes += len(text)
        day = _FIRST_DAY + timedelta(days=rng.randint(0, span))
        lines.append(
            json.dumps(
                {
                    "question_id": f"sim{i:05d}",
                    "question_title": f"Simulated problem {i}",
                    "question_content": statement_text(rng, words),
                    "platform": "simulated",
                    "contest_id": f"simulated-{i // 4}",
                    "contest_date": f"{day.isoformat()}T00:00:00",
                    "difficulty": _DIFFICULTIES[i % 3],
                    "starter_code": "",
                    "public_test_cases": json.dumps(
                        [{"input": "3\n1 2 3\n", "output": "6\n", "testtype": "stdin"}]
                    ),
                    "private_test_cases": _packed(private),
                    "metadata": "{}",
                }
            )
        )
    return "\n".join(lines) + "\n", test_bytes


def _campaign(problem_set, problems: list) -> object:
    """A campaign over the imported set: one lineage per seed, calibrated by a simulated panel
    (2-7 of 10 passes), so each seed supplements the release as an original."""
    from evolution.benchevolver.models import Lineage
    from tests.factories import CampaignFactory

    campaign = CampaignFactory(name="simulated scale campaign", seed_set=problem_set)
    rng = random.Random(7)
    Lineage.objects.bulk_create(
        [
            Lineage(
                campaign=campaign,
                seed=p,
                parent=p,
                position=i,
                seed_passes=rng.randint(2, 7),
                seed_attempts=10,
                seed_level=3,
            )
            for i, p in enumerate(problems)
        ],
        batch_size=500,
    )
    return campaign


def _score_runs(release, models: int, samples: int) -> Measure:
    """``models`` simulated models' runs of the release, each scored as the scoring service
    scores one; returns the first run's summary time (``leaderboard.run_summary``)."""

    from evolution import jobs
    from releases import leaderboard, public_record
    from releases.models import LeaderboardRun, LeaderboardSample, RunSource

    rng = random.Random(11)
    items = list(release.items.values_list("id", "difficulty"))
    hardness = {"easy": 0.8, "medium": 0.5, "hard": 0.2}
    summary_time = None
    for m in range(models):
        skill = rng.uniform(-0.3, 0.3)
        released = _FIRST_DAY + timedelta(days=rng.randint(-120, (_LAST_DAY - _FIRST_DAY).days))
        run = LeaderboardRun.objects.create(
            release=release,
            source=RunSource.UPLOAD,
            label=f"simulated-model-{m:02d}",
            model_release_date=released,
            samples_per_problem=samples,
            bootstrap_seed=0,
        )
        token = jobs.claim(LeaderboardRun, run.pk)
        rows = []
        for item_id, difficulty in items:
            chance = min(0.98, max(0.02, hardness.get(difficulty, 0.5) + skill))
            for index in range(samples):
                ok = rng.random() < chance
                rows.append(
                    LeaderboardSample(
                        run=run,
                        item_id=item_id,
                        sample_index=index,
                        code=f"# simulated sample {m}/{item_id}/{index}\nprint({index})\n",
                        verdict="AC" if ok else "WA",
                        passed_tests=20 if ok else rng.randint(0, 19),
                        total_tests=20,
                    )
                )
        with public_record.writing():
            LeaderboardSample.objects.bulk_create(rows, batch_size=2000)
        if summary_time is None:
            timings = []
            with counting_queries() as queries:
                for _ in range(REPEATS):
                    started = time.perf_counter()
                    summary = leaderboard.run_summary(run=run)
                    timings.append(time.perf_counter() - started)
                    if timings[0] > REPEAT_UNDER_S:
                        break
            summary_time = Measure(statistics.median(timings), queries[0] // len(timings))
        else:
            summary = leaderboard.run_summary(run=run)
        with public_record.writing():
            leaderboard.record_completion(LeaderboardRun, run.pk, token, summary=summary)
    return summary_time


def _answering(tests: list) -> str:
    """A simulated accepted submission: it answers each of the item's tests by the digest of
    its input (the simulated outputs are random numbers no program derives), after reading the
    whole input as a real solution does."""
    import hashlib

    answers = {hashlib.sha1(t.input.encode()).hexdigest(): t.output for t in tests}
    return (
        "import hashlib, sys\n"
        f"ANSWERS = {answers!r}\n"
        "data = sys.stdin.read()\n"
        "sys.stdout.write(ANSWERS.get(hashlib.sha1(data.encode()).hexdigest(), ''))\n"
    )


_WRONG = "import sys\nsys.stdin.read()\nprint(-1)\n"
_IDLE = "print(-1)\n"


def _judged_run(release, label: str, codes: list[tuple[int, str]]) -> tuple[float, object]:
    """Seconds to execute a run of ``codes`` ((item id, code) pairs, each one sample) through
    ``leaderboard.run_execute``: claim, judge every sample on all its item's tests in the
    sandbox (stopping at the first failure), summarise, complete."""
    from releases import leaderboard, public_record
    from releases.models import LeaderboardRun, LeaderboardSample, RunSource

    run = LeaderboardRun.objects.create(
        release=release, source=RunSource.UPLOAD, label=label, samples_per_problem=1
    )
    with public_record.writing():
        LeaderboardSample.objects.bulk_create(
            [
                LeaderboardSample(run=run, item_id=item_id, sample_index=0, code=code)
                for item_id, code in codes
            ]
        )
    started = time.perf_counter()
    run = leaderboard.run_execute(run_id=run.pk)
    return time.perf_counter() - started, run


def judge_throughput(release, result: SizeResult, *, judged: int = JUDGED) -> None:
    """The judge rows: ``judged`` simulated submissions on distinct items drawn at random, accepted
    with the chance of a middling model (easy 0.8, medium 0.5, hard 0.2: an accepted one runs
    every test, a wrong one stops at its first), really judged through the leaderboard's path;
    then as many submissions that do no work, for the overhead per submission."""
    from collections import defaultdict

    from django.conf import settings

    from releases.models import ReleaseTest, RunState

    rng = random.Random(5)
    items = list(release.items.values_list("id", "difficulty"))
    chosen = rng.sample(items, min(judged, len(items)))  # one sample per item, as a run has
    judged = len(chosen)
    tests = defaultdict(list)
    for t in ReleaseTest.objects.filter(item_id__in={i for i, _ in chosen}).order_by(
        "item_id", "tier", "ordinal"
    ):
        tests[t.item_id].append(t)
    chance = {"easy": 0.8, "medium": 0.5, "hard": 0.2}
    accepted = [rng.random() < chance.get(d, 0.5) for _, d in chosen]
    codes = [
        (item_id, _answering(tests[item_id]) if ok else _WRONG)
        for (item_id, _), ok in zip(chosen, accepted, strict=True)
    ]
    seconds, run = _judged_run(release, "judge throughput (simulated answers)", codes)
    if run.state != RunState.COMPLETED:
        raise RuntimeError(f"the judged run ended {run.state}: {run.state_reason}")
    verdicts = list(run.samples.values_list("verdict", "total_tests"))
    if sum(1 for v, _ in verdicts if v == "AC") != sum(accepted):
        raise RuntimeError(f"the simulated accepted answers were not all accepted: {verdicts}")
    idle_seconds, _ = _judged_run(
        release, "judge overhead (submissions doing no work)", [(i, _IDLE) for i, _ in chosen]
    )
    rate = judged / seconds
    width = int(getattr(settings, "SANDBOX_MAX_PARALLEL", 2))
    result.measures["judge throughput"] = Measure(rate)
    result.measures["judge overhead"] = Measure(idle_seconds / judged)
    result.measures["judge full run"] = Measure(FULL_RUN_SAMPLES / rate / 3600)
    tests_run = sum(n for v, n in verdicts if v == "AC") + sum(1 for v, _ in verdicts if v != "AC")
    result.facts["judge sample"] = (
        f"{judged} simulated submissions judged in {seconds:.1f} s ({sum(accepted)} accepted, "
        f"run on all their tests; the rest stop at their first: {tests_run} test runs), "
        f"{width} sandboxes in parallel (SANDBOX_MAX_PARALLEL), "
        f"{settings.SANDBOX_BACKEND} backend; {FULL_RUN_SAMPLES:,} samples / {rate:.2f} "
        f"samples/s = {FULL_RUN_SAMPLES / rate / 3600:.1f} h, extrapolated linearly: the same "
        "mix of verdicts and test sizes, one machine"
    )


def heatmap_rows(result: SizeResult, *, seeds: int) -> None:
    """The heatmap rows: a finished campaign of ``seeds`` seeds x ``HEATMAP_ROUNDS`` rounds
    (factory data, ``tests.evolution.benchevolver.analytics.data.build_campaign``; no panel attempts, which
    the heatmap does not read), its heatmap JSON read as a curator: the first page (200 seeds)
    and every row (``limit=0``), cold (the chart cache cleared) and warm."""
    from django.db import connection
    from django.test import Client
    from django.urls import reverse

    from accounts.services import user_create
    from tests.evolution.benchevolver.analytics.data import build_campaign

    started = time.perf_counter()
    built = build_campaign(
        seeds=seeds,
        rounds=HEATMAP_ROUNDS,
        rng_seed=42,
        full_rounds=True,
        calls_per_candidate=0,
        tag=f"scale{seeds}",
    )
    result.facts["heatmap campaign"] = (
        f"{seeds:,} seeds x {HEATMAP_ROUNDS} rounds ({len(built.candidates):,} candidates, "
        f"factory data) built in {time.perf_counter() - started:.0f} s"
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    user = user_create(username="scale-heatmap-curator", password="scale-pw-1", role="curator")
    client = Client()
    client.force_login(user)
    client.get("/")  # the session's first load is not part of any measured request
    url = reverse("evolution:campaign_heatmap_json", args=[built.campaign.pk])
    for key, path in (("heatmap first page", url), ("heatmap all rows", url + "?limit=0")):
        size = []

        def get(path=path, size=size):
            response = client.get(path)
            if response.status_code != 200:
                raise RuntimeError(f"{path} answered {response.status_code}")
            size[:] = [len(response.content)]

        result.measures[f"{key} cold"] = _timed(get, cold=True)
        get()
        result.measures[f"{key} warm"] = _timed(get, cold=False)
        result.measures[f"{key} bytes"] = Measure(size[0] / 1024 / 1024)


# --- measuring -----------------------------------------------------------------------------------


def _forget() -> None:
    """Every cache a cold request must not find: the page and board caches, and the kept
    bootstrap draws of this process."""
    from django.core.cache import cache

    from releases.leaderboard import stats

    cache.clear()
    stats.forget_kept()


@contextmanager
def counting_queries():
    """Counts the queries run inside the block (``counter[0]``): Django's own query log keeps
    only the last 9,000, fewer than an import or a freeze of 1,000 problems runs."""
    from django.db import connection

    counter = [0]

    def count(execute, sql, params, many, context):
        counter[0] += 1
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        yield counter


def _timed(fn, *, cold: bool, repeats: int = REPEATS) -> Measure:
    """Median seconds of ``fn`` (cold: caches cleared before each call) and its queries."""
    timings, counts = [], []
    for _ in range(repeats):
        if cold:
            _forget()
        with counting_queries() as queries:
            started = time.perf_counter()
            fn()
            timings.append(time.perf_counter() - started)
        counts.append(queries[0])
        if timings[0] > REPEAT_UNDER_S:
            break
    return Measure(statistics.median(timings), max(counts))


def _page(client, path: str, *, cold: bool) -> Measure:
    def get():
        response = client.get(path)
        if response.status_code != 200:
            raise RuntimeError(f"{path} answered {response.status_code}")

    if not cold:
        get()  # fills the page cache
    return _timed(get, cold=cold)


def _database_bytes() -> dict[str, int]:
    from django.db import connection

    from evolution.models import Problem, TestCase
    from releases.models import LeaderboardSample, ReleaseItem, ReleaseTest

    tables = {
        "problems": Problem,
        "tests": TestCase,
        "release items": ReleaseItem,
        "release tests": ReleaseTest,
        "samples": LeaderboardSample,
    }
    out = {}
    with connection.cursor() as cursor:
        for label, model in tables.items():
            cursor.execute("SELECT pg_total_relation_size(%s)", [model._meta.db_table])
            out[label] = cursor.fetchone()[0]
    return out


def measure(
    problems: int,
    models: int,
    samples: int = SAMPLES,
    *,
    throwaway: bool = True,
    judged: int = JUDGED,
    heatmap_seeds: int | None = None,
) -> SizeResult:
    """Build one size's world in a throwaway database (``throwaway=False``: in the current
    one, as a test's) and measure it. ``judged``: submissions really judged for the judge rows;
    ``heatmap_seeds``: the heatmap campaign's seeds (default ``HEATMAP_SEEDS_PER_PROBLEM`` per
    problem)."""
    result = SizeResult(problems=problems, models=models, samples=samples)
    database = throwaway_database(f"scale{problems}") if throwaway else nullcontext()
    with database:
        from django.contrib.auth import get_user_model
        from django.test import Client

        from evolution.importers import import_seeds
        from evolution.models import Problem
        from releases import services
        from review import selectors as review_selectors
        from review import services as review_services

        content, test_bytes = lcb_jsonl(problems)
        result.facts["private test bytes per problem (simulated)"] = (
            f"{test_bytes / problems / 1024:.0f} KB mean"
        )
        with counting_queries() as queries:
            started = time.perf_counter()
            report = import_seeds(source="lcb", content=content, set_name="simulated LCB v6")
            result.measures["import"] = Measure(time.perf_counter() - started, queries[0])
        seeds = list(Problem.objects.filter(problem_sets=report.problem_set).order_by("id"))
        campaign = _campaign(report.problem_set, seeds)

        bench = services.benchmark_create(
            name="Simulated LiveCodeBench v6", description="simulated", default_rules=_RULES
        )
        release = services.release_create(benchmark=bench, campaigns=[campaign])
        result.measures["gate"] = _timed(
            lambda: services.gate_run_create(release=release), cold=False
        )
        gate = release.gate_runs.order_by("-id").first()
        result.facts["gate"] = f"{gate.passed} of {gate.candidates} candidates passed"
        with counting_queries() as queries:
            started = time.perf_counter()
            release = services.release_freeze(release=release)
            result.measures["freeze"] = Measure(time.perf_counter() - started, queries[0])
        release = services.release_publish(release=release)
        result.measures["summary"] = _score_runs(release, models, samples)

        sizes = _database_bytes()
        result.facts["database bytes"] = json.dumps(sizes)
        per_problem = sum(v for k, v in sizes.items() if k != "samples") / problems
        result.measures["db per problem"] = Measure(per_problem / 1024)
        result.measures["db per sample"] = Measure(sizes["samples"] / (problems * models * samples))

        base = f"/releases/{bench.slug}/v{release.version}/"
        item = release.items.order_by("position").first()
        days = sorted(d for d in release.items.values_list("created_on", flat=True) if d)
        after = days[len(days) // 2].date().isoformat()
        label = release.runs.order_by("label").values_list("label", flat=True)[models // 2]
        client = Client()
        board = base + "leaderboard/"
        window = f"{board}?after={after}"
        result.measures["leaderboard cold"] = _page(client, board, cold=True)
        result.measures["leaderboard warm"] = _page(client, board, cold=False)
        result.measures["leaderboard window cold"] = _page(client, window, cold=True)
        result.measures["leaderboard window warm"] = _page(client, window, cold=False)
        result.measures["leaderboard window model cold"] = _page(
            client, f"{window}&model={label}", cold=True
        )
        result.measures["release page cold"] = _page(client, base, cold=True)
        result.measures["problem page cold"] = _page(
            client, f"{base}items/{item.public_id}/", cold=True
        )

        users = get_user_model()
        creator = users.objects.create(username="scale-curator")
        reviewers = [users.objects.create(username=f"scale-reviewer-{i}") for i in range(4)]
        groups, _ = review_selectors.coding_group_plan(problems=seeds)
        counter = iter(range(REPEATS))
        result.measures["review round"] = _timed(
            lambda: review_services.round_create(
                name=f"scale round {next(counter)}",
                created_by=creator,
                reviewers=reviewers,
                problem_groups=groups,
                rng=random.Random(3),
            ),
            cold=False,
        )
        result.facts["review groups"] = str(len(groups))
        judge_throughput(release, result, judged=judged)
        heatmap_rows(result, seeds=heatmap_seeds or HEATMAP_SEEDS_PER_PROBLEM * problems)
        _forget()
    return result


# --- the table -----------------------------------------------------------------------------------

# (key, label, unit, target): the target in seconds, QUERIES (constant in the data size), BULK
# (fewer queries than problems at the largest size), or None.
ROWS = (
    ("import", "import (LCB JSONL, import_seeds + screening index)", "s", BULK),
    ("db per problem", "database per problem (problem, tests, release copy)", "KB", None),
    ("db per sample", "database per judged sample", "B", None),
    ("gate", "curation gate over every candidate", "s", GATE_TARGET_S),
    ("freeze", "freeze the release", "s", BULK),
    ("summary", "one run's summary (run_summary)", "s", None),
    ("leaderboard cold", "leaderboard, cold", "s", PAGE_TARGET_S),
    ("leaderboard warm", "leaderboard, warm", "s", PAGE_TARGET_S),
    ("leaderboard window cold", "leaderboard with a date window, cold", "s", PAGE_TARGET_S),
    ("leaderboard window warm", "leaderboard with a date window, warm", "s", PAGE_TARGET_S),
    (
        "leaderboard window model cold",
        "date window and a one-model filter, cold",
        "s",
        PAGE_TARGET_S,
    ),
    ("release page cold", "release page, cold", "s", PAGE_TARGET_S),
    ("problem page cold", "problem page, cold", "s", PAGE_TARGET_S),
    ("review round", "review round over every problem", "s", QUERIES),
    (
        "judge throughput",
        "judge throughput, submissions really judged through run_execute",
        "samples/s",
        None,
    ),
    ("judge overhead", "judge overhead per submission (a program doing no work)", "s", None),
    ("judge full run", "a full leaderboard run of 500,000 samples at that rate", "h", None),
    ("heatmap first page cold", "heatmap JSON, first page (200 seeds), cold", "s", PAGE_TARGET_S),
    ("heatmap first page warm", "heatmap JSON, first page, warm", "s", PAGE_TARGET_S),
    ("heatmap first page bytes", "heatmap JSON, first page, size", "MB", None),
    ("heatmap all rows cold", "heatmap JSON, every seed (limit=0), cold", "s", QUERIES),
    ("heatmap all rows warm", "heatmap JSON, every seed, warm", "s", None),
    ("heatmap all rows bytes", "heatmap JSON, every seed, size", "MB", None),
)


def _cell(measure: Measure | None, unit: str) -> str:
    if measure is None:
        return ""
    if unit == "s":
        value = (
            f"{measure.seconds * 1000:.0f} ms"
            if measure.seconds < 1
            else f"{measure.seconds:.2f} s"
        )
    else:
        value = f"{measure.seconds:,.1f} {unit}"
    if measure.queries is not None:
        value += f", {measure.queries:,} queries"
    return value


def _verdict(target, results: list[SizeResult], key: str) -> tuple[str, str]:
    measures = [r.measures.get(key) for r in results]
    if target is None or any(m is None for m in measures):
        return "(reported)", ""
    if target == BULK:
        largest = results[-1]
        queries = measures[-1].queries
        return "fewer queries than problems (bulk writes)", (
            "yes" if queries < largest.problems else "NO"
        )
    if target == QUERIES:
        counts = [m.queries for m in measures]
        if len(counts) < 2:
            return "queries constant in the data size", "needs two sizes"
        return "queries constant in the data size", "yes" if counts[-1] <= counts[0] else "NO"
    largest = measures[-1]
    return f"< {target:g} s at {results[-1].problems:,} problems", (
        "yes" if largest.seconds < target else "NO"
    )


def _size(result: SizeResult) -> str:
    return f"{result.problems:,} x {result.models} x {result.samples}"


def table(results: list[SizeResult]) -> list[dict]:
    rows = []
    for key, label, unit, target in ROWS:
        row = {"measure (SIMULATED data)": label}
        for r in results:
            row[_size(r)] = _cell(r.measures.get(key), unit)
        row["target"], row["met"] = _verdict(target, results, key)
        rows.append(row)
    for r in results:
        for name, value in r.facts.items():
            if name != "database bytes":
                rows.append(
                    {
                        "measure (SIMULATED data)": f"{name} ({r.problems:,} problems)",
                        _size(r): value,
                    }
                )
    return rows


def run(args) -> list[dict]:
    sizes = QUICK_SIZES if getattr(args, "quick", False) else SIZES
    return table([measure(problems, models) for problems, models in sizes])
