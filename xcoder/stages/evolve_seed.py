"""Stage ``evolve_seed`` (``evolution_scope`` "seed", the default): evolve-then-merge (B.1,
"extracts and evolves ... features ... and merges them into tree structures"; "after
evolution, we merge features that share common traits into a larger tree").

Each seed's extracted features are evolved on their own, one call per seed and round (a
round's calls side by side, one step), and the merge stage puts the evolved trees together
afterwards. A call's prompt holds one seed's tree
(a few dozen features at most), however large the merged tree grows: the number of calls grows
with the seeds, the size of each call does not (Table 8's 84k extracted features could not be
sent as one category tree).
"""

from __future__ import annotations

from django.db import transaction

from evolution.llm import fanout, mark_unparsable
from evolution.llm.parsing import ParseError
from evolution.models import Problem

from ..engine import features as feat
from ..engine import prompts
from ..models import EvolutionStep, ExtractionStatus, FeatureExtraction, XcoderCampaign
from .common import Action, Ctx, fan_out_calls, raise_first, seed_key


def seed_tree(xc: XcoderCampaign, problem_id: int, before_round: int) -> dict[str, dict]:
    """The seed's tree entering round ``before_round``: its extracted categories, grown by each
    earlier round that succeeded."""
    extraction = FeatureExtraction.objects.get(xcoder=xc, problem_id=problem_id)
    tree = feat.extraction_categories(extraction.features)
    for step in EvolutionStep.objects.filter(
        xcoder=xc, problem_id=problem_id, round__lt=before_round, status=ExtractionStatus.OK
    ).order_by("round"):
        tree = step.evolved["tree"]
    return tree


def _batch(ctx: Ctx, action: Action) -> list[Problem]:
    """The action's seed, then the round's other seeds not evolved yet (in seed order): a
    seed's call reads only its own tree, so the round's calls are independent."""
    xc = ctx.xc
    done = set(
        EvolutionStep.objects.filter(
            xcoder=xc, round=action.round, problem__isnull=False
        ).values_list("problem_id", flat=True)
    )
    waiting = (
        FeatureExtraction.objects.filter(xcoder=xc, status=ExtractionStatus.OK)
        .exclude(problem_id__in=done | {action.problem_id})
        .order_by("problem_id")
        .values_list("problem_id", flat=True)
    )
    ids = [action.problem_id, *waiting][: fanout.step_calls(ctx.generator_width())]
    problems = Problem.objects.in_bulk(ids)
    return [problems[i] for i in ids]


def act_evolve_seed(ctx: Ctx, action: Action) -> None:
    """The round's seeds' calls side by side (bounded by the fan-out setting and the generator
    endpoint's limit); each answer is stored on its own seed, in seed order."""
    seeds = _batch(ctx, action)
    befores = [seed_tree(ctx.xc, problem.pk, action.round) for problem in seeds]
    outcomes = fan_out_calls(
        [
            lambda p=p, b=b: _ask(ctx, p, b, action.round)
            for p, b in zip(seeds, befores, strict=True)
        ],
        ctx.generator_width(),
    )
    for problem, before, result in zip(seeds, befores, outcomes, strict=True):
        if not isinstance(result, BaseException):
            _store(ctx, problem, action.round, before, result)
    raise_first(outcomes)


def _ask(ctx: Ctx, problem: Problem, before: dict, round_no: int):
    messages, template = prompts.seed_evolution_messages(tree=before)
    return ctx.chat(
        "xcoder_evolve",
        messages,
        template,
        key=f"evolve;round={round_no};seed={seed_key(problem)}",
    )


def _store(ctx: Ctx, problem: Problem, round_no: int, before: dict, result) -> None:
    row = {"status": ExtractionStatus.OK}
    try:
        after = feat.union(before, feat.parse_evolved_tree(result.content))
        diff = feat.seed_evolution_diff(before, after)
        row.update(
            added_breadth=len(diff.breadth),
            added_depth=len(diff.depth),
            evolved={
                "tree": after,
                "depth": [s.path for s in diff.depth],
                "breadth": [s.path for s in diff.breadth],
            },
        )
    except ParseError as exc:
        mark_unparsable(result.call_id, str(exc))
        row = {"status": ExtractionStatus.FAILED, "reason": f"unparsable: {exc}"[:500]}
    with transaction.atomic():
        EvolutionStep.objects.get_or_create(
            xcoder=ctx.xc, round=round_no, problem=problem, defaults={"category": "", **row}
        )
