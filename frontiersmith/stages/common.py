"""What every FrontierSmith stage shares: the action, the step's context (campaign, settings, model
calls), the next proposal of a round, deciding a candidate, replay keys and a round's candidates."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from evolution import sandbox
from evolution.llm import fanout, mark_unparsable
from evolution.models import Campaign, ModelEndpoint
from evolution.streams.context import StepContext
from evolution.streams.kinds import unit_transition

from ..config import FrontierSettings
from ..engine import formulation, prompts
from ..models import CandidateStage, FilterProbe, FrontierCampaign, FrontierCandidate

log = logging.getLogger(__name__)
METHOD = KIND_NAME = "frontiersmith"
# The stages a candidate may be decided from: every one but DONE.
UNDECIDED = tuple(s for s in CandidateStage.values if s != CandidateStage.DONE)
# The roles (prompt templates' ``role``) each of the campaign's two endpoints plays.
MUTATOR_ROLES = ("extract", "filter", "mutate", "pair_judge")
SOLVER_ROLES = ("solve", "test_agent", "test_review", "verifier_agent", "verifier_review")


@dataclass(frozen=True)
class Action:
    name: str
    candidate_id: int | None = None
    problem_id: int | None = None
    label: str = ""
    index: int | None = None


@dataclass
class Ctx(StepContext):
    fc: FrontierCampaign
    settings: FrontierSettings

    @property
    def campaign(self) -> Campaign:
        return self.fc.campaign

    def replay_scope(self) -> str:
        return "frontier"

    def endpoint_for(self, role: str) -> ModelEndpoint:
        if role in MUTATOR_ROLES:
            return self.fc.mutator_endpoint
        if role in SOLVER_ROLES:
            return self.fc.solver_endpoint
        raise LookupError(f"a FrontierSmith campaign has no role {role!r}")

    def mutator_width(self) -> int:
        """Parallel calls to the mutator endpoint (fan-out setting and its limit): how many
        items one step of a mutator stage (calibrate, extract, mutate, filter, pair) takes."""
        return fanout.width_for(self.fc.mutator_endpoint)

    def solver_width(self) -> int:
        """Parallel calls to the solver endpoint: the sampled solutions one step asks for."""
        return fanout.width_for(self.fc.solver_endpoint)

    @property
    def limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.execution_timeout, memory_mb=self.settings.memory_mb
        )


def probes_wanted(fc: FrontierCampaign) -> list[tuple[str, int]]:
    """The calibration probes: every problem of the labelled closed and open sets."""
    wanted = []
    for label, problem_set in (
        (FilterProbe.Label.CLOSED, fc.calibration_closed),
        (FilterProbe.Label.OPEN, fc.calibration_open),
    ):
        if problem_set is not None:
            wanted += [
                (label, pid)
                for pid in problem_set.problems.order_by("id").values_list("id", flat=True)
            ]
    return wanted


def probes_waiting(fc: FrontierCampaign) -> list[tuple[str, int]]:
    """The probes the filter has not been asked about yet, in order."""
    done = set(fc.probes.values_list("label", "problem_id"))
    return [probe for probe in probes_wanted(fc) if probe not in done]


def proposals_waiting(ctx: Ctx, rnd) -> list[int]:
    """The indices of the round's proposals not made into candidates yet, in order."""
    made = set(
        FrontierCandidate.objects.filter(frontier=ctx.fc, round=rnd.number).values_list(
            "index", flat=True
        )
    )
    return [i for i in range(ctx.settings.budget_candidates) if i not in made]


def fan_out_calls(jobs, width: int) -> list:
    """The calls of ``jobs`` side by side (``evolution.llm.fanout``), results in input order; a
    failed call takes its job's place as the exception."""
    return fanout.fan_out(jobs, width, return_exceptions=True)


raise_first = fanout.raise_first


def load_context(campaign_id: int) -> Ctx:
    fc = FrontierCampaign.objects.select_related("campaign").get(pk=campaign_id)
    return Ctx(fc=fc, settings=FrontierSettings.from_dict(fc.campaign.settings))


def proposal_of(pool: list[int], index: int) -> tuple[int, str]:
    """Candidate ``index`` of a round mutates pool problem (index // 3) with the operator
    index % 3: every seed gets each operator before the next seed is used again."""
    ops = formulation.OPERATOR_ORDER
    return pool[(index // len(ops)) % len(pool)], ops[index % len(ops)]


def decide_candidate(candidate_id: int, decision: str, reason: str) -> None:
    """Decide an undecided candidate (once: a decided one keeps its decision)."""
    unit_transition(
        KIND_NAME,
        FrontierCandidate.objects.filter(pk=candidate_id, decision=""),
        source=UNDECIDED,
        target=CandidateStage.DONE,
        decision=decision,
        decision_reason=reason[:4000],
    )


def coarse_filter_verdict(ctx: Ctx, statement: str, key: str) -> tuple[bool | None, dict]:
    """The coarse filter: accepted only when all three criteria hold. None: unusable answer."""
    template = prompts.load("filter")
    answer = ctx.chat(
        template.role,
        template.messages(statement=statement),
        template,
        key=key,
        temperature=ctx.settings.judge_temperature,
    )
    content, call_id = answer.content, answer.call_id
    try:
        data = formulation._json(content)
    except formulation.ParseProblem as exc:
        mark_unparsable(call_id, str(exc))
        return None, {"error": str(exc)}
    criteria = {k: data.get(k) for k in ("objective", "strategies", "scoring")}
    if not all(isinstance(v, bool) for v in criteria.values()):
        reason = "the filter's answer lacks a boolean objective / strategies / scoring"
        mark_unparsable(call_id, reason)
        return None, {"error": reason}
    verdict = {**criteria, "reason": str(data.get("reason", ""))[:1000]}
    return all(criteria.values()), verdict


def stable_id(problem) -> str:
    """Replay keys name an imported problem by its origin id (the same in every database, so
    a demo cassette replays), any other by its public id."""
    return problem.origin_id or problem.public_id


def candidate_key(c: FrontierCandidate) -> str:
    return f"round={c.round};c={c.index}"


def round_candidates(ctx: Ctx):
    return FrontierCandidate.objects.filter(frontier=ctx.fc, round=ctx.fc.current_round)
