"""The judge (stage ``judge``; pure logic in ``engine/judge.py`` and ``engine/accept.py``): the
level gain is checked against the acceptance rule and its evidence, then lexical and model
near-duplicate and false-difficulty checks."""

from __future__ import annotations

from evolution.benchevolver.engine import accept, judge
from evolution.benchevolver.models import Candidate, CandidateStage, Decision, GlobalMemoryEntry
from evolution.llm import BudgetExhausted, LLMError, mark_unparsable

from .accept import decide_candidate
from .common import Action, Ctx, action_candidate, append_ledger, move_candidate
from .difficulty import panel_plan


def _family_used_elsewhere(ctx: Ctx, cand: Candidate) -> bool:
    return (
        GlobalMemoryEntry.objects.filter(campaign=ctx.campaign, family=cand.family, accepted=True)
        .exclude(candidate__lineage=ctx.lineage)
        .exists()
    )


def act_judge(ctx: Ctx, action: Action) -> None:
    cand = action_candidate(action)
    lineage = ctx.lineage
    reused = _family_used_elsewhere(ctx, cand)
    parent_level = lineage.parent_level or lineage.seed_level or 1
    seed_level = lineage.seed_level or 1
    outcome = accept.decide(
        level=cand.level,
        parent_level=parent_level,
        seed_level=seed_level,
        settings=ctx.settings,
        family_used_elsewhere=reused,
    )
    evidence = accept.level_evidence(
        passes=cand.passes or 0, attempts=cand.attempts or 0, settings=ctx.settings
    )
    if outcome.decision != Decision.ACCEPTED:
        why = outcome.reason + (f" ({evidence.describe()})" if evidence else "")
        decide_candidate(ctx, cand, Decision.NOT_HARDER, why)
        return
    needed = accept.required_level(
        parent_level=parent_level,
        seed_level=seed_level,
        settings=ctx.settings,
        family_used_elsewhere=reused,
    )
    plan = panel_plan(ctx, cand)
    per_model = max((k for _, k in plan), default=0)
    verdict = accept.evidence_verdict(
        evidence=evidence,
        needed=needed,
        attempts_per_model=per_model,
        panel_size=len(plan),
        settings=ctx.settings,
    )
    if evidence is not None:
        append_ledger(
            cand,
            {
                "step": "difficulty evidence",
                "evidence": evidence.describe(),
                "needed_level": needed,
                "outcome": verdict,
            },
        )
        cand.save(update_fields=["validation_ledger"])
    if verdict == "more":
        # The point estimate gains a level but the interval does not yet: ask the panel again
        # (K more per model, up to the level's attempt cap) rather than call a level on noise.
        gen = dict(cand.generators)
        gen["panel_extra"] = gen.get("panel_extra", 0) + ctx.settings.target_eval_k
        gen["panel_cap"] = accept.attempt_cap(
            needed=needed, panel_size=len(plan), settings=ctx.settings
        )
        move_candidate(cand, CandidateStage.VALIDATED, generators=gen)
        return
    if verdict == "insufficient":
        cap_name = (
            "max_panel_attempts"
            if ctx.settings.max_panel_attempts
            else f"level {needed}'s own attempt cap"
        )
        decide_candidate(
            ctx,
            cand,
            Decision.NOT_HARDER,
            f"level {cand.level} by point estimate, but {evidence.describe()}, below the level "
            f"{needed} needed, after {per_model} attempts per model ({cap_name})",
        )
        return
    earlier = {"seed": ctx.seed.statement}
    for other in (
        lineage.candidates.exclude(pk=cand.pk).exclude(statement="").only("round", "statement")
    ):
        earlier[f"round {other.round}"] = other.statement
    report: dict = {"acceptance": outcome.reason + (f"; {evidence.describe()}" if evidence else "")}
    if ctx.settings.judge_near_duplicate_check:
        dup = judge.near_duplicate(cand.statement, earlier, ctx.settings.near_duplicate_threshold)
        report["lexical"] = {
            "score": dup.score,
            "against": dup.against,
            "threshold": ctx.settings.near_duplicate_threshold,
        }
        if dup.duplicate:
            cand.judge_report = report
            cand.save(update_fields=["judge_report"])
            decide_candidate(
                ctx,
                cand,
                Decision.DUPLICATE,
                f"lexical near-duplicate of {dup.against} (similarity {dup.score})",
            )
            return
    messages, template = judge.judge_messages(
        statement=cand.statement,
        idea=cand.idea,
        lineage_statements=list(earlier.values()),
        parent_code=cand.parent.reference_solution if cand.parent_id else "",
        code=cand.code,
        parent_weakness=cand.parent_weakness,
        parent_outcome=(cand.generators or {}).get("parent_outcome", ""),
        panel_errors=judge.panel_error_text(cand.panel_results),
    )
    try:
        answer = ctx.chat("judge", messages, template, key=f"round={cand.round}", candidate=cand)
    except BudgetExhausted:
        raise
    except LLMError as exc:
        decide_candidate(ctx, cand, Decision.ERROR, f"judge call failed: {exc}")
        return
    verdict = judge.parse_judge(answer.content)
    if not verdict.parsed:
        mark_unparsable(answer.call_id, "judge answer " + "; ".join(verdict.reasons))
    report["model"] = {
        "artificial": verdict.artificial,
        "duplicate": verdict.duplicate,
        "lift": verdict.lift,
        "reasons": verdict.reasons,
        "parsed": verdict.parsed,
    }
    move_candidate(cand, CandidateStage.JUDGED, judge_report=report)
