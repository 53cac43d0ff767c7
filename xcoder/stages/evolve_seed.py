"""Stage ``evolve_seed`` (``evolution_scope`` "seed", the default): evolve-then-merge (B.1,
"extracts and evolves ... features ... and merges them into tree structures"; "after
evolution, we merge features that share common traits into a larger tree").

Each seed's extracted features are evolved on their own, one call per seed and round, and the
merge stage puts the evolved trees together afterwards. A call's prompt holds one seed's tree
(a few dozen features at most), however large the merged tree grows: the number of calls grows
with the seeds, the size of each call does not (Table 8's 84k extracted features could not be
sent as one category tree).
"""

from __future__ import annotations

from django.db import transaction

from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError
from evolution.models import Problem

from ..engine import features as feat
from ..engine import prompts
from ..models import EvolutionStep, ExtractionStatus, FeatureExtraction, XcoderCampaign
from .common import Action, Ctx, _seed_key


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


def act_evolve_seed(ctx: Ctx, action: Action) -> None:
    xc = ctx.xc
    problem = Problem.objects.get(pk=action.problem_id)
    before = seed_tree(xc, problem.pk, action.round)
    messages, template = prompts.seed_evolution_messages(tree=before)
    result = ctx.chat(
        xc.generator_endpoint,
        messages,
        role="xcoder_evolve",
        template=template,
        key=f"evolve;round={action.round};seed={_seed_key(problem)}",
    )
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
            xcoder=xc, round=action.round, problem=problem, defaults={"category": "", **row}
        )
