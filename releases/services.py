"""Writes for benchmarks, releases, the gate, curation, errata and leaderboard runs.

Release life: ``release_create`` (draft) -> ``gate_run_create`` (report) ->
``curation_decide`` (optional, justified) -> ``release_freeze`` (snapshot, hash, immutable)
-> ``release_publish`` (public). A defect found later: ``erratum_create`` on the frozen
release, fix the problem, ``release_next`` (a patch draft that starts from the previous
items), gate, freeze: the erratum is recorded as fixed in that version.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify

from evolution.measurement import selectors as measurement_selectors
from evolution.models import Campaign, Problem, ProblemSet
from evolution.screening import services as screening
from evolution.selectors import campaign_problems, campaign_seeds
from evolution.sources import PanelFacts, ProblemSource, source_for_model
from evolution.streams.kinds import problem_panel_facts

from . import content, difficulty, independent, living, public_record
from .gate import CandidateFacts, GateRules, RulesError, evaluate
from .models import (
    Benchmark,
    CurationDecision,
    Erratum,
    ErratumKind,
    GateRun,
    Origin,
    Release,
    ReleaseItem,
    ReleaseQuestion,
    ReleaseState,
    ReleaseTest,
)
from .reviews import problem_reviews

VERSION = re.compile(r"^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$")
# Rows per insert when a release is frozen (its items, their tests).
FREEZE_BATCH = 200


def parse_version(text: str) -> tuple[int, int, int]:
    match = VERSION.match((text or "").strip())
    if not match:
        raise ValidationError(f"Version must look like 1.0.0 (major.minor.patch), got {text!r}.")
    return tuple(int(g) for g in match.groups())  # type: ignore[return-value]


def _validated_rules(data: dict | None) -> dict:
    try:
        return GateRules.from_dict(data).to_dict()
    except RulesError as exc:
        raise ValidationError({"rules": str(exc)})


def _require_draft(release: Release) -> None:
    if release.state != ReleaseState.DRAFT:
        raise ValidationError(f"v{release.version} is {release.state}; only a draft can change.")


# --- benchmarks and drafts -------------------------------------------------------------------


def benchmark_create(
    *,
    name: str,
    slug: str = "",
    description: str = "",
    license: str = "cc-by-4.0",
    default_rules: dict | None = None,
) -> Benchmark:
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A benchmark needs a name."})
    slug = slugify(slug or name)
    if not slug:
        raise ValidationError({"slug": "The name gives no usable URL slug; give one."})
    if Benchmark.objects.filter(Q(name=name) | Q(slug=slug)).exists():
        raise ValidationError({"name": f"A benchmark named {name!r} or slug {slug!r} exists."})
    return Benchmark.objects.create(
        name=name,
        slug=slug,
        description=description,
        license=license.strip() or "cc-by-4.0",
        default_rules=_validated_rules(default_rules),
    )


@transaction.atomic
def release_create(
    *,
    benchmark: Benchmark,
    version: str = "1.0.0",
    campaigns=(),
    problem_sets=(),
    notes: str = "",
    rules: dict | None = None,
    previous: Release | None = None,
    created_by=None,
) -> Release:
    """A new draft. Its gate candidates are the accepted problems and seeds of ``campaigns``,
    the problems of ``problem_sets`` and, for a follow-up version, ``previous``'s items."""
    major, minor, patch = parse_version(version)
    if Release.objects.filter(benchmark=benchmark, major=major, minor=minor, patch=patch).exists():
        raise ValidationError({"version": f"{benchmark.name} already has v{version}."})
    newest = (
        Release.objects.filter(benchmark=benchmark)
        .exclude(state=ReleaseState.DRAFT)
        .order_by("-major", "-minor", "-patch")
        .first()
    )
    if newest is not None and (major, minor, patch) <= newest.version_key:
        raise ValidationError(
            {"version": f"v{version} must be newer than the frozen v{newest.version}."}
        )
    merged_rules = {**(benchmark.default_rules or {}), **(rules or {})}
    release = Release.objects.create(
        benchmark=benchmark,
        major=major,
        minor=minor,
        patch=patch,
        notes=notes,
        gate_rules=_validated_rules(merged_rules),
        previous=previous,
        created_by=created_by,
    )
    release.campaigns.set(campaigns)
    release.problem_sets.set(problem_sets)
    return release


def release_next(*, release: Release, bump: str = "patch", created_by=None) -> Release:
    """The next version's draft after a frozen ``release``: same sources and rules, and the
    previous items as candidates (fixed problems are re-snapshotted at freeze)."""
    if release.state == ReleaseState.DRAFT:
        raise ValidationError("Freeze this release before starting the next version.")
    major, minor, patch = release.version_key
    if bump == "patch":
        version = f"{major}.{minor}.{patch + 1}"
    elif bump == "minor":
        version = f"{major}.{minor + 1}.0"
    elif bump == "major":
        version = f"{major + 1}.0.0"
    else:
        raise ValidationError(f"bump must be patch, minor or major, got {bump!r}.")
    draft = release_create(
        benchmark=release.benchmark,
        version=version,
        campaigns=list(release.campaigns.all()),
        problem_sets=list(release.problem_sets.all()),
        notes=release.notes,
        rules=release.gate_rules,
        previous=release,
        created_by=created_by,
    )
    # The previous questions carry over while their answers still count as correct; the
    # others show up in the changelog as removed.
    carried = [
        q.reasoning_item
        for q in release.questions.select_related("reasoning_item").order_by("position")
        if question_unfit(q.reasoning_item) is None
    ]
    if carried:
        release_questions_add(release=draft, items=carried)
    living.carry_reevolutions(draft=draft)
    independent.carry_panel(draft=draft)
    return draft


def release_update(*, release: Release, rules: dict | None = None, notes: str | None = None):
    """Edit a draft's rules (validated, complete) and card notes."""
    _require_draft(release)
    if rules is not None:
        release.gate_rules = _validated_rules(rules)
    if notes is not None:
        release.notes = notes
    release.save()
    return release


# --- the gate -------------------------------------------------------------------------------


def _candidate_pool(
    release: Release,
) -> tuple[list[Problem], dict[int, PanelFacts], dict[str, tuple[int, str]]]:
    """(problems in gate order, panel facts per problem id, seed statements by label).

    Each kind of the release's campaigns answers which problems its campaigns made and which
    seeds they measured (``Kind.accepted_problems``, ``Kind.seed_problems``) and what its own
    panel measured of them (``Kind.panel_facts``); a problem no kind measured takes the latest
    completed shared panel measurement (``evolution.measurement``)."""
    campaigns = list(release.campaigns.all())
    ids = set(campaign_problems(campaigns).values_list("id", flat=True))
    ids |= set(campaign_seeds(campaigns).values_list("id", flat=True))
    ids |= set(
        Problem.objects.filter(problem_sets__in=release.problem_sets.all()).values_list(
            "id", flat=True
        )
    )
    if release.previous_id:
        ids |= set(
            ReleaseItem.objects.filter(release=release.previous_id).values_list(
                "problem_id", flat=True
            )
        )
    problems = list(Problem.objects.filter(id__in=ids).select_related("lineage_root"))
    problems.sort(key=lambda p: (p.kind == "seed", p.id))

    panel: dict[int, PanelFacts] = problem_panel_facts(list(ids), campaigns)
    # Problems no campaign measured itself (X-Coder, EvoSyn, sets measured from their page):
    # the latest completed shared panel measurement (evolution.measurement).
    unmeasured = [pid for pid in ids if not (pid in panel and panel[pid].attempts)]
    for pid, m in measurement_selectors.latest_completed(unmeasured).items():
        panel[pid] = PanelFacts(
            passes=m.passes,
            attempts=m.attempts,
            provenance={
                "measurement": {
                    "id": m.pk,
                    "panel": m.panel.name,
                    "level": m.level,
                    "measured_at": m.measured_at.isoformat() if m.measured_at else None,
                },
                "validation_ledger": [],
                "panel_results": m.per_model,
            },
            level=m.level,
            measured_at=m.measured_at,
            source="measurement",
        )

    seed_statements: dict[str, tuple[int, str]] = {}
    seed_sets = [c.seed_set_id for c in campaigns if c.seed_set_id]
    for p in Problem.objects.filter(
        Q(problem_sets__in=seed_sets) | Q(id__in=[p.id for p in problems if p.kind == "seed"])
    ).distinct():
        seed_statements[p.origin_id or p.public_id] = (p.id, p.statement)
    return problems, panel, seed_statements


@transaction.atomic
def gate_run_create(*, release: Release, by=None) -> GateRun:
    """Evaluate the draft's rules over its candidates and store the full report."""
    _require_draft(release)
    rules = GateRules.from_dict(release.gate_rules)
    problems, panel, seed_statements = _candidate_pool(release)
    living.remeasured_panel(release=release, problems=problems, panel=panel)
    fresh = independent.gate_figures(release=release, problems=problems)
    reviews = problem_reviews(problem_ids=[p.id for p in problems])
    # The contamination screen of every evolved or synthesized candidate against the index as
    # it is now: stored at acceptance or measurement, screened here if missing or stale.
    screens = screening.screens_for([p for p in problems if p.kind != "seed"], context="gate")
    facts = []
    for p in problems:
        measured = panel.get(p.id)
        passes, attempts = (measured.passes, measured.attempts) if measured else (None, None)
        figure = fresh.get(p.id, {})
        agg = reviews[p.id]
        facts.append(
            CandidateFacts(
                problem_id=p.id,
                public_id=p.public_id,
                title=p.title,
                origin=Origin.ORIGINAL if p.kind == "seed" else Origin.EVOLVED,
                statement=p.statement,
                n_reviews=agg.n_reviews,
                mean_quality=agg.final.get("quality"),
                mean_novelty=agg.final.get("novelty"),
                invalid=agg.invalid,
                pass_at_1=(passes / attempts) if attempts else None,
                panel_passes=passes,
                panel_attempts=attempts,
                panel_remeasured_at=measured.remeasured_at if measured else "",
                open_ended=(p.comparison or {}).get("mode") == "score",
                score_spread=((p.metadata or {}).get("frontiersmith") or {}).get("score_spread"),
                mean_difficulty=agg.final.get("difficulty"),
                independent_passes=figure.get("passes"),
                independent_attempts=figure.get("attempts"),
                independent_source=figure.get("source", ""),
                independent_note=figure.get("note", ""),
                screen=screens.get(p.id),
            )
        )
    reports = evaluate(facts, rules, seed_statements=seed_statements)
    return GateRun.objects.create(
        release=release,
        rules=rules.to_dict(),
        report=[r.to_dict() for r in reports],
        provenance={str(pid): measured.provenance for pid, measured in panel.items()},
        candidates=len(reports),
        passed=sum(r.passed for r in reports),
        created_by=by,
    )


def gate_evaluation_start(*, release: Release, by=None):
    """Queue an independent evaluation of the draft's candidates by its evaluation panel
    (``releases.independent``); the worker runs it when the transaction commits."""
    independent.require_draft(release)
    problems, panel, _ = _candidate_pool(release)
    living.remeasured_panel(release=release, problems=problems, panel=panel)
    evaluation = independent.evaluation_create(
        release=release, problems=problems, panel=panel, by=by
    )
    independent.enqueue(evaluation)
    return evaluation


def curation_decide(
    *, release: Release, problem: Problem, include: bool, justification: str, by=None
) -> CurationDecision:
    """Include or exclude a candidate against the gate; the justification is required."""
    _require_draft(release)
    if not justification.strip():
        raise ValidationError({"justification": "Say why you go against the gate."})
    return CurationDecision.objects.create(
        release=release,
        problem=problem,
        include=include,
        justification=justification.strip(),
        created_by=by,
    )


def _latest_decisions(release: Release) -> dict[int, CurationDecision]:
    latest: dict[int, CurationDecision] = {}
    for d in release.decisions.order_by("-created_at", "-id"):
        latest.setdefault(d.problem_id, d)
    return latest


def release_selection(*, release: Release) -> list[dict]:
    """The latest gate report's entries, each with ``included`` and the curator's decision
    (None when the gate's verdict stands). Empty when the gate never ran."""
    run = release.gate_runs.order_by("-created_at", "-id").first()
    if run is None:
        return []
    decisions = _latest_decisions(release)
    out = []
    for entry in run.report:
        decision = decisions.get(entry["problem_id"])
        included = decision.include if decision else entry["passed"]
        out.append({**entry, "included": included, "decision": decision})
    return out


# --- freezing ---------------------------------------------------------------------------------


def _lineage_chain(problem: Problem) -> list[str]:
    chain, node, guard = [], problem, 0
    while node is not None and guard < 100:
        chain.append(node.public_id)
        node = node.parent
        guard += 1
    return list(reversed(chain))


def _gate_panel(entry: dict) -> dict:
    facts = entry.get("facts") or {}
    panel = {"passes": facts.get("panel_passes"), "attempts": facts.get("panel_attempts")}
    if facts.get("panel_remeasured_at"):
        panel["remeasured_at"] = facts["panel_remeasured_at"]
    return panel


def _gate_sources(run: GateRun) -> dict[int, dict]:
    """{problem id: where its panel figure came from} as ``run`` read it. A run from before
    runs kept it: the kinds and the shared panel measurement are asked again, as freeze did
    then."""
    if run.provenance is None:
        _, panel, _ = _candidate_pool(run.release)
        return {pid: measured.provenance for pid, measured in panel.items()}
    return {int(pid): source for pid, source in run.provenance.items()}


def _provenance(problem: Problem, entry: dict, source: dict | None, review: dict) -> dict:
    prov = {
        "lineage": {
            "root": problem.lineage_root.public_id if problem.lineage_root_id else None,
            "parent": problem.parent.public_id if problem.parent_id else None,
            "depth": problem.lineage_depth,
            "chain": _lineage_chain(problem),
        },
        "review": review,
        "gate": {"passed": entry["passed"], "rules": entry["rules"]},
        # The figure the gate read, as its run stored it (a living re-measurement's, dated,
        # where one replaced the campaign's), so the item's label and its panel agree.
        "panel": _gate_panel(entry),
        # The contamination screen the gate read (evolution.screening; None for originals).
        "screen": (entry.get("facts") or {}).get("screen"),
    }
    # Where the figure came from, as the kind that measured it said when the gate ran (the
    # campaign and candidate, the seed calibration or the shared panel measurement).
    if source is not None:
        prov.update(source)
    prov.setdefault("validation_ledger", [])
    prov.setdefault("panel_results", {})
    return prov


def _difficulty(problem: Problem, entry: dict) -> tuple[str, dict]:
    """The item's label: an evolved problem's from the panel measurement the gate used, never
    its seed's (``releases.difficulty``)."""
    facts = entry.get("facts") or {}
    return difficulty.item_difficulty(
        origin=entry["origin"],
        dataset_label=problem.origin_difficulty,
        dataset=problem.origin_dataset,
        passes=facts.get("panel_passes"),
        attempts=facts.get("panel_attempts"),
        open_ended=bool(facts.get("open_ended")),
    )


# --- reasoning questions ----------------------------------------------------------------------

# A question's reference answer is the answer its campaign scored; it must count as correct:
# the judges' score (mean over the ensemble) or a human override at least this high.
REFERENCE_MIN_SCORE = 0.5


def question_source() -> ProblemSource:
    """The problem source of the items ``ReleaseQuestion.reasoning_item`` points to (releases
    never name that kind)."""
    return source_for_model(ReleaseQuestion._meta.get_field("reasoning_item").related_model)


def question_unfit(item) -> str | None:
    """Why ``item`` cannot be a release question (None when it can)."""
    facts = question_source().facts(item)
    if not facts.status_ok:
        return f"{facts.kind} item {item.pk} is {facts.status}, not judged"
    if not facts.statement.strip() or not facts.reference_answer.strip():
        return f"{facts.kind} item {item.pk} has no question or no answer"
    score = facts.score
    if score is None or score < REFERENCE_MIN_SCORE:
        return (
            f"the answer of {facts.kind} item {item.pk} is not judged correct (score {score}); "
            "settle it in a review round first"
        )
    return None


def _question_snapshot(item) -> dict:
    """The question's columns as a release holds them, with hash and provenance."""
    facts = question_source().facts(item)
    public_id = content.question_public_id(item.pk)
    record = content.question_content_record(
        public_id=public_id,
        reasoning_type=facts.item_type,
        difficulty=facts.difficulty,
        question=facts.statement,
        reference_answer=facts.reference_answer,
    )
    return {
        "public_id": public_id,
        "reasoning_type": facts.item_type,
        "difficulty": facts.difficulty,
        "question": facts.statement,
        "reference_answer": facts.reference_answer,
        "record": record,
        "content_hash": content.question_hash(record),
        "provenance": facts.provenance,
    }


def question_candidates(*, release: Release, reasoning=None, reasoning_type: str = "") -> list:
    """Reviewable items whose answer counts as correct and that the draft does not hold yet
    (``reasoning``: one campaign of the question source; ``reasoning_type``: one type)."""
    qs = question_source().release_candidates(campaign=reasoning, item_type=reasoning_type)
    held = release.questions.values_list("reasoning_item_id", flat=True)
    return [i for i in qs.exclude(pk__in=held) if question_unfit(i) is None]


@transaction.atomic
def release_questions_add(*, release: Release, items, note: str = "") -> int:
    """Add reasoning items to a draft as questions (a snapshot now, refreshed at freeze).

    Items the draft already holds are skipped. ValidationError, and nothing added, when the
    release is not a draft or any item is not judged with an answer counted correct.
    Returns the number of questions added."""
    release = Release.objects.select_for_update().get(pk=release.pk)
    _require_draft(release)
    items = list(items)
    problems = [reason for reason in map(question_unfit, items) if reason]
    if problems:
        raise ValidationError(problems)
    held = set(release.questions.values_list("reasoning_item_id", flat=True))
    position = release.questions.count()
    added = 0
    for item in items:
        if item.pk in held:
            continue
        held.add(item.pk)
        ReleaseQuestion.objects.create(
            release=release,
            reasoning_item=item,
            position=position,
            curator_note=note.strip(),
            **_question_snapshot(item),
        )
        position += 1
        added += 1
    return added


def release_question_remove(*, release: Release, public_id: str) -> None:
    _require_draft(release)
    deleted, _ = release.questions.filter(public_id=public_id).delete()
    if not deleted:
        raise ValidationError(f"The draft has no question {public_id}.")


@transaction.atomic
def release_freeze(*, release: Release, by=None) -> Release:
    """Snapshot the selected problems and their tests, and the draft's reasoning questions,
    hash them, and make the release immutable. A release of questions only needs no gate
    run. Errata of earlier versions whose item changed or left are marked fixed here."""
    release = Release.objects.select_for_update().get(pk=release.pk)
    _require_draft(release)
    selection = release_selection(release=release)
    questions = list(
        release.questions.select_related(
            *(f"reasoning_item__{path}" for path in question_source().item_related)
        )
    )
    if not selection and not questions:
        raise ValidationError("Run the gate before freezing.")
    chosen = [e for e in selection if e["included"]]
    if not chosen and not questions:
        raise ValidationError("Nothing passed the gate or was included: an empty release.")
    # Sources may have changed since the gate ran: the report must cover today's rules.
    latest_run = release.gate_runs.order_by("-created_at", "-id").first()
    if (
        latest_run is not None
        and latest_run.rules != GateRules.from_dict(release.gate_rules).to_dict()
    ):
        raise ValidationError("The rules changed since the gate ran; run the gate again.")

    problems = {
        p.id: p
        for p in Problem.objects.filter(id__in=[e["problem_id"] for e in chosen])
        .select_related("parent", "lineage_root")
        .prefetch_related("tests")
    }
    sources = _gate_sources(latest_run) if latest_run is not None else {}
    reviews = problem_reviews(problem_ids=list(problems))
    release.items.all().delete()  # a draft may hold a stale snapshot from an aborted freeze
    hashes = []
    items: list[ReleaseItem] = []
    item_tests: list[list[dict]] = []
    ordered = sorted(chosen, key=lambda e: (e["origin"] != Origin.EVOLVED, e["public_id"]))
    for position, entry in enumerate(ordered):
        problem = problems[entry["problem_id"]]
        record = content.problem_content_record(problem)
        tests = [
            {
                "tier": t.tier,
                "ordinal": t.ordinal,
                "hidden": t.hidden,
                "input": t.input,
                "output": t.output,
                "provenance": t.provenance,
            }
            for t in problem.tests.all()
        ]
        digest = content.item_hash(record, tests)
        hashes.append((problem.public_id, digest))
        agg = reviews[problem.id]
        decision = entry["decision"]
        label, basis = _difficulty(problem, entry)
        provenance = _provenance(problem, entry, sources.get(problem.id), agg.to_dict())
        provenance["difficulty"] = basis
        items.append(
            ReleaseItem(
                release=release,
                problem=problem,
                position=position,
                public_id=problem.public_id,
                title=problem.title,
                origin=entry["origin"],
                difficulty=label,
                tags=agg.tags,
                record=record,
                provenance=provenance,
                created_on=problem.contest_date if problem.kind == "seed" else problem.created_at,
                content_hash=digest,
                gate_passed=entry["passed"],
                curator_note=decision.justification if decision else "",
            )
        )
        item_tests.append(tests)
    # The items, then their tests, in bulk: a release of LiveCodeBench's size has a thousand
    # items. bulk_create skips save(); the database triggers still guard these rows.
    ReleaseItem.objects.bulk_create(items, batch_size=FREEZE_BATCH)
    rows = []
    for item, tests in zip(items, item_tests, strict=True):
        for t in tests:
            row = ReleaseTest(
                item=item,
                tier=t["tier"],
                ordinal=t["ordinal"],
                hidden=t["hidden"],
                provenance=t["provenance"],
            )
            row.input, row.output = t["input"], t["output"]
            rows.append(row)
    ReleaseTest.objects.bulk_create(rows, batch_size=FREEZE_BATCH)
    test_total = len(rows)

    # Questions: re-snapshot from the living items (an override since selection counts),
    # in a stable order, and refuse any whose answer no longer counts as correct.
    unfit = [reason for q in questions if (reason := question_unfit(q.reasoning_item))]
    if unfit:
        raise ValidationError(unfit)
    facts = {q.pk: question_source().facts(q.reasoning_item) for q in questions}
    questions.sort(key=lambda q: (facts[q.pk].item_type, facts[q.pk].difficulty, q.public_id))
    for position, question in enumerate(questions):
        for name, value in _question_snapshot(question.reasoning_item).items():
            setattr(question, name, value)
        question.position = position
        question.save()
        hashes.append((question.public_id, question.content_hash))

    if release.previous_id is None:
        release.previous = _previous_frozen(release)
    # Hash format 2: the items and everything the card and the exports show (content.py).
    release.hash_format = content.FORMAT
    release.content_hash = content.compute_release_hash(release)
    release.item_count = len(hashes)
    release.test_count = test_total
    release.state = ReleaseState.FROZEN
    release.frozen_at = timezone.now()
    release.save()
    _mark_fixed_errata(release, dict(hashes))
    return release


def _previous_frozen(release: Release) -> Release | None:
    older = [
        r
        for r in Release.objects.filter(benchmark=release.benchmark).exclude(
            state=ReleaseState.DRAFT
        )
        if r.version_key < release.version_key and r.pk != release.pk
    ]
    return max(older, key=lambda r: r.version_key, default=None)


def _mark_fixed_errata(release: Release, hashes: dict[str, str]) -> None:
    open_errata = Erratum.objects.filter(
        release__benchmark=release.benchmark, fixed_in__isnull=True
    ).exclude(release=release)
    for erratum in open_errata.select_related("release"):
        if erratum.release.version_key >= release.version_key:
            continue
        old = ReleaseItem.objects.filter(
            release=erratum.release, public_id=erratum.item_public_id
        ).first()
        new_hash = hashes.get(erratum.item_public_id)
        if new_hash is None:
            erratum.resolution = "removed"
        elif old is not None and old.content_hash != new_hash:
            erratum.resolution = "changed"
        else:
            continue  # still the same content: the defect is not fixed yet
        erratum.fixed_in = release
        # The one change an erratum ever takes, made by freezing the fix (migration 0013).
        with public_record.writing():
            erratum.save(update_fields=["fixed_in", "resolution"])


def release_publish(*, release: Release) -> Release:
    """Make a frozen release public (its card, items' public statements and leaderboard)."""
    release = Release.objects.get(pk=release.pk)
    if release.state == ReleaseState.PUBLISHED:
        return release
    if release.state != ReleaseState.FROZEN:
        raise ValidationError("Freeze the release before publishing it.")
    release.state = ReleaseState.PUBLISHED
    release.published_at = timezone.now()
    release.save()
    return release


def release_delete_draft(*, release: Release) -> None:
    _require_draft(release)
    release.delete()


# --- errata -------------------------------------------------------------------------------------


def erratum_create(
    *, release: Release, item_public_id: str, kind: str, description: str, by=None
) -> Erratum:
    """Record a defect in an item of a frozen or published release, signed by ``by`` (the
    curator; the database refuses an unsigned erratum). Errata are append-only: a correction
    of an earlier erratum is a new one."""
    if by is None or not getattr(by, "is_authenticated", False):
        raise ValidationError("An erratum is signed: say which curator records it.")
    if release.state == ReleaseState.DRAFT:
        raise ValidationError("A draft has no errata: fix the problem before freezing.")
    if (
        not release.items.filter(public_id=item_public_id).exists()
        and not release.questions.filter(public_id=item_public_id).exists()
    ):
        raise ValidationError(
            {"item_public_id": f"v{release.version} has no item {item_public_id}."}
        )
    if kind not in ErratumKind.values:
        raise ValidationError({"kind": f"Kind must be one of {', '.join(ErratumKind.values)}."})
    if not description.strip():
        raise ValidationError({"description": "Describe what is wrong."})
    return Erratum.objects.create(
        release=release,
        item_public_id=item_public_id,
        kind=kind,
        description=description.strip(),
        created_by=by,
        signed_by=by.get_username()[:150],
    )


def release_sources(*, release: Release, campaigns=None, problem_sets=None) -> Release:
    """Replace a draft's candidate sources."""
    _require_draft(release)
    if campaigns is not None:
        release.campaigns.set(Campaign.objects.filter(pk__in=[c.pk for c in campaigns]))
    if problem_sets is not None:
        release.problem_sets.set(ProblemSet.objects.filter(pk__in=[s.pk for s in problem_sets]))
    return release
