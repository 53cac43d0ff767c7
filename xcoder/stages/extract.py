"""Stage ``extract``: the features of one seed's reference solution (pure logic in
``engine/features.py``)."""

from __future__ import annotations

from django.db import transaction

from evolution.llm import mark_unparsable
from evolution.llm.parsing import ParseError
from evolution.models import Problem

from ..engine import features as feat
from ..engine import prompts
from ..models import ExtractionStatus, FeatureExtraction
from .common import Action, Ctx, _seed_key


def act_extract(ctx: Ctx, action: Action) -> None:
    problem = Problem.objects.get(pk=action.problem_id)
    messages, template = prompts.extraction_messages(
        statement=problem.statement, code=problem.reference_solution
    )
    result = ctx.chat(
        ctx.xc.generator_endpoint,
        messages,
        role="xcoder_extract",
        template=template,
        key=f"extract;seed={_seed_key(problem)}",
    )
    try:
        data = feat.parse_extraction(result.content)
        row = {"status": ExtractionStatus.OK, "features": data}
    except ParseError as exc:
        mark_unparsable(result.call_id, str(exc))
        row = {"status": ExtractionStatus.FAILED, "reason": f"unparsable: {exc}"[:500]}
    with transaction.atomic():
        FeatureExtraction.objects.get_or_create(xcoder=ctx.xc, problem=problem, defaults=row)
