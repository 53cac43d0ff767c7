"""What every BenchEvolver stage shares: the action, the step's context (campaign, lineage,
settings, model calls), the queues, and small helpers over a candidate's rows."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.utils import timezone

from evolution import sandbox
from evolution.benchevolver.engine import prompts
from evolution.benchevolver.engine.config import EvolutionSettings
from evolution.llm import CallContext, LLMClient, fanout, sampling
from evolution.llm.errors import LLMTransportError
from evolution.models import Campaign, Candidate, Lineage, ModelEndpoint, Problem
from evolution.sandbox import contracts
from evolution.streams.errors import endpoint_unavailable

log = logging.getLogger(__name__)

DEFAULT = "default"
SANDBOX = "sandbox"
ANY = "any"
# Verdict of a panel attempt whose model call failed for transport or provider reasons: it is
# retried, and never counted in a pass rate (an outage is not difficulty).
INFRA_ERROR = "IE"

# Roles whose model is the campaign's evolver unless role_endpoints names another endpoint.
EVOLVER_ROLES = (
    "mutator",
    "writer",
    "test_generator",
    "brute_force",
    "oracle",
    "repair",
    "faithfulness",
    "judge",
)


@dataclass(frozen=True)
class Action:
    name: str
    queue: str
    candidate_id: int | None = None


def limits_for(
    settings: EvolutionSettings, *, time_s: float | None = None, memory_mb: int | None = None
):
    return sandbox.Limits(
        time_s=time_s or settings.execution_timeout,
        memory_mb=memory_mb or settings.memory_mb,
        max_output_bytes=settings.max_output_bytes,
    )


@dataclass
class Ctx:
    campaign: Campaign
    lineage: Lineage
    settings: EvolutionSettings

    def __post_init__(self):
        # One campaign, two columns of Table 5: function-level lineages run with SciCode's.
        self.settings = self.settings.for_harness(self.lineage.seed.harness)

    @property
    def seed(self) -> Problem:
        return self.lineage.seed

    def seed_key(self) -> str:
        return self.seed.origin_id or self.seed.public_id

    def endpoint_for(self, role: str) -> ModelEndpoint:
        override = (self.campaign.role_endpoints or {}).get(role)
        if override:
            return ModelEndpoint.objects.get(pk=override)
        return self.campaign.evolver

    def chat(
        self,
        role: str,
        messages: list[dict],
        template,
        *,
        key: str,
        candidate: Candidate | None = None,
        endpoint: ModelEndpoint | None = None,
        temperature: float | None = None,
    ):
        endpoint = endpoint or self.endpoint_for(role)
        client = LLMClient(
            sampling.endpoint_for_campaign(
                endpoint,
                temperature=self.settings.temperature,
                timeout=self.settings.timeout,
            ),
            CallContext(
                campaign_id=self.campaign.pk,
                lineage_id=self.lineage.pk,
                candidate_id=candidate.pk if candidate else None,
            ),
        )
        try:
            return client.chat_template(
                messages,
                template,
                role=role,
                replay_key=f"seed={self.seed_key()};{key};role={role}",
                temperature=temperature,
            )
        except LLMTransportError as exc:
            # Panel and faithfulness solvers keep their own infrastructure-error records; any
            # other role's outage pauses the campaign through the runner, never the lineage.
            down = role not in ("solver", "faithfulness") and endpoint_unavailable(
                exc, role=role, endpoint=endpoint.name
            )
            if down:
                raise down from exc
            raise

    def limits(self, time_s: float | None = None):
        return limits_for(self.settings, time_s=time_s)


def open_candidate(lineage: Lineage) -> Candidate | None:
    return lineage.candidates.filter(decision="").order_by("-round").first()


def fanout_threads() -> int:
    """Threads one step may use for model calls (the platform's fan-out setting)."""
    return fanout.fanout_threads()


def _parallel(jobs: list[Callable[[], None]], width: int) -> None:
    """Run model calls side by side (``evolution.llm.fanout``: each thread uses its own DB
    connection, closed after; in input order inside a transaction)."""
    fanout.parallel(jobs, width)


def _candidate_tests(cand: Candidate, *, hidden_only: bool = False) -> list[dict]:
    return [t for t in cand.tests if t.get("hidden") or not hidden_only]


def _ledger(cand: Candidate, entry: dict) -> None:
    entry = {"at": timezone.now().isoformat(timespec="seconds"), **entry}
    cand.validation_ledger = [*cand.validation_ledger, entry]


def _candidate_or_none(action: Action) -> Candidate:
    return Candidate.objects.select_related("parent").get(pk=action.candidate_id)


def _contract(cand: Candidate) -> dict:
    return (cand.generators or {}).get("contract") or {"kind": "exact"}


def _comparison(cand: Candidate) -> dict:
    """The judge's comparison for the candidate's declared output contract."""
    return contracts.comparison_for(_contract(cand))


def _candidate_starter(ctx: Ctx, cand: Candidate) -> str:
    """Call-based seeds that ship starter code (LeetCode-style) keep the convention in their
    evolved tasks: ``class Solution`` with the evolved reference's method signature."""
    if cand.harness == "stdio" or not ctx.seed.starter_code.strip():
        return ""
    return prompts.starter_from_solution(cand.code, cand.entry_point)
