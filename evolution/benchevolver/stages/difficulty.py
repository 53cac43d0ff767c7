"""What the difficulty stages share (``measure_solve``, ``measure_judge``, each in its own
module, and the seed's calibration; pure logic in ``engine/difficulty.py``): every panel model answers K times, each answer stored as it arrives,
then the attempts are judged on the hidden tests and the candidate's level is set."""

from __future__ import annotations

import contextlib

from evolution.benchevolver.models import Candidate, SolverAttempt
from evolution.judging import attempts, difficulty
from evolution.judging.attempts import AttemptRows
from evolution.models import ModelEndpoint
from evolution.services import campaigns as campaign_services

from .common import (
    Ctx,
)


def planned_attempts(ctx: Ctx, candidate: Candidate | None = None) -> int:
    """How many panel attempts a measurement needs: K per member (plus a candidate's extra
    attempts when its level gain needed more evidence)."""
    return sum(k for _, k in panel_plan(ctx, candidate))


def panel_plan(ctx: Ctx, candidate: Candidate | None = None) -> list[tuple[ModelEndpoint, int]]:
    """(endpoint, K) per panel member: the member's own ``attempts``, else ``target_eval_k``,
    plus the candidate's ``panel_extra`` attempts, never past the attempt cap the judge set with
    them (``panel_cap``: the level's own, or ``max_panel_attempts``)."""
    k = ctx.settings.target_eval_k
    gen = (candidate.generators or {}) if candidate else {}
    extra = gen.get("panel_extra", 0)
    cap = gen.get("panel_cap") or ctx.settings.max_panel_attempts
    plan = []
    for m in ctx.campaign.panel.members.select_related("endpoint"):
        own = m.k(k)
        plan.append((m.endpoint, max(own, min(own + extra, cap) if cap else own + extra)))
    return plan


def _attempt_rows(ctx: Ctx, candidate: Candidate | None) -> AttemptRows:
    """The panel attempts of the lineage's seed (calibration) or of one candidate."""
    return AttemptRows(
        rows=SolverAttempt.objects.filter(lineage=ctx.lineage, candidate=candidate),
        create={"lineage": ctx.lineage, "candidate": candidate},
    )


def solve_attempts(
    ctx: Ctx,
    *,
    candidate: Candidate | None,
    statement: str,
    harness: str,
    entry_point: str,
    starter_code: str = "",
):
    """Ask every panel model K times through the platform's attempt loop
    (``evolution.judging.attempts``); each answer is stored as soon as it arrives.

    A call that fails for transport or provider reasons (HTTP 400/401/5xx, time-out after the
    client's retries, a missing key) is stored as an infrastructure error (verdict IE, with the
    status and message) and asked again on the next step; it never counts in a pass rate. When
    one attempt has failed so ``infra_retry_limit`` times, the campaign pauses naming the
    endpoint."""
    messages, template = difficulty.solver_messages(
        statement=statement, harness=harness, entry_point=entry_point, starter_code=starter_code
    )
    round_key = f"round={candidate.round}" if candidate else "round=0"
    store = _attempt_rows(ctx, candidate)

    def chat(endpoint, index):
        return ctx.chat(
            "solver",
            messages,
            template,
            key=f"{round_key};model={endpoint.model};attempt={index}",
            candidate=candidate,
            endpoint=endpoint,
        )

    attempts.ask_panel(store, panel_plan(ctx, candidate), chat)
    _pause_if_endpoint_keeps_failing(ctx, store)


def _pause_if_endpoint_keeps_failing(ctx: Ctx, store: AttemptRows) -> None:
    """An endpoint whose call for one attempt failed ``infra_retry_limit`` times in a row is
    down or misconfigured: pause the campaign with a reason naming it (measuring on would
    only burn budget). Resuming retries those attempts afresh."""
    names, detail = attempts.failing_endpoints(store, ctx.settings.infra_retry_limit)
    if not names:
        return
    reason = f"panel endpoint {', '.join(repr(n) for n in names)} keeps failing ({detail})"
    with contextlib.suppress(campaign_services.TransitionError):
        campaign_services.campaign_pause(campaign_id=ctx.campaign.pk, reason=reason[:300])
