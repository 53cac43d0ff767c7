"""What every BenchEvolver stage shares: the action, the step's context (campaign, lineage,
settings, model calls), the queues, and small helpers over a candidate's rows."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.utils import timezone

from evolution import sandbox
from evolution.benchevolver.engine import prompts
from evolution.benchevolver.engine.config import LIVECODEBENCH, EvolutionSettings, column_for
from evolution.benchevolver.engine.types import StageError
from evolution.benchevolver.models import Candidate, Lineage
from evolution.llm import CallContext, mark_unparsable, sampling
from evolution.models import Campaign, ModelEndpoint, Problem
from evolution.sandbox import contracts
from evolution.streams.context import StepContext
from evolution.streams.errors import endpoint_unavailable
from evolution.streams.kinds import unit_transition

log = logging.getLogger(__name__)

KIND_NAME = "benchevolver"
DEFAULT = "default"
SANDBOX = "sandbox"
ANY = "any"

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
class Ctx(StepContext):
    campaign: Campaign
    lineage: Lineage
    settings: EvolutionSettings
    # The lineage's column of Table 5: its seed's benchmark's (``config.column_for``).
    column: str = ""

    def __post_init__(self):
        # One campaign, two columns of Table 5: each lineage runs with its benchmark's.
        seed = self.lineage.seed
        self.column = column_for(seed.origin_dataset, seed.harness)
        self.settings = self.settings.for_column(self.column)

    @property
    def triangulates(self) -> bool:
        """Whether candidates are validated by brute-force triangulation (the LiveCodeBench
        column), else by statement faithfulness (the SciCode column)."""
        return self.column == LIVECODEBENCH

    def tier_counts(self) -> dict[str, int]:
        return self.settings.tier_counts(self.column)

    @property
    def seed(self) -> Problem:
        return self.lineage.seed

    def seed_key(self) -> str:
        return self.seed.origin_id or self.seed.public_id

    def replay_scope(self) -> str:
        return f"seed={self.seed_key()}"

    def chat_endpoint(self, endpoint: ModelEndpoint) -> ModelEndpoint:
        return sampling.endpoint_for_campaign(
            endpoint, temperature=self.settings.temperature, timeout=self.settings.timeout
        )

    def call_context(self, candidate: Candidate | None = None) -> CallContext:
        return CallContext(
            campaign_id=self.campaign.pk,
            lineage_id=self.lineage.pk,
            candidate_id=candidate.pk if candidate else None,
        )

    def pause_for(self, exc, *, role: str, endpoint: ModelEndpoint):
        # Panel and faithfulness solvers keep their own infrastructure-error records; any
        # other role's outage, or a refusal of its endpoint's configuration (401, 403, 404,
        # a 400 on a parameter), pauses the campaign through the runner, never the lineage.
        if role in ("solver", "faithfulness"):
            return None
        return endpoint_unavailable(exc, role=role, endpoint=endpoint.name)

    def limits(self, time_s: float | None = None):
        return limits_for(self.settings, time_s=time_s)


def parse_answer(answer, parse, *args):
    """``parse(answer.content, *args)`` for a model answer ``ctx.chat`` returned. An answer the
    parser cannot read (it raises StageError) is ledgered ``unparsable`` with the reason, not
    left ``ok``, before the error goes on to the stage."""
    try:
        return parse(answer.content, *args)
    except StageError as exc:
        mark_unparsable(answer.call_id, exc.reason)
        raise


def move_candidate(cand: Candidate, target: str, *changed: str, **fields) -> bool:
    """Store the fields of ``cand`` the step changed (``changed`` names those it set itself;
    ``fields`` are set here) and move it from the stage it was loaded in to ``target`` along
    the kind's declared edges, in one conditional UPDATE (``unit_transition``: an undeclared
    move raises before anything is written). False when the candidate had left that stage
    meanwhile (a concurrent worker moved or decided it): nothing is written then."""
    for key, value in fields.items():
        setattr(cand, key, value)
    names = {*changed, *fields}
    stored = [f for f in Candidate._meta.concrete_fields if f.name in names]
    unknown = (names - {f.name for f in stored}) | (names & {"id", "stage"})
    if unknown:
        raise ValueError(f"move_candidate cannot store {sorted(unknown)}")
    values = {f.attname: f.pre_save(cand, add=False) for f in stored}
    moved = unit_transition(
        KIND_NAME, Candidate.objects.filter(pk=cand.pk), source=cand.stage, target=target, **values
    )
    if moved:
        cand.stage = target
    return bool(moved)


def open_candidate(lineage: Lineage) -> Candidate | None:
    return lineage.candidates.filter(decision="").order_by("-round").first()


def _candidate_tests(cand: Candidate, *, hidden_only: bool = False) -> list[dict]:
    return [t for t in cand.tests if t.get("hidden") or not hidden_only]


def append_ledger(cand: Candidate, entry: dict) -> None:
    entry = {"at": timezone.now().isoformat(timespec="seconds"), **entry}
    cand.validation_ledger = [*cand.validation_ledger, entry]


def action_candidate(action: Action) -> Candidate:
    return Candidate.objects.select_related("parent").get(pk=action.candidate_id)


def candidate_contract(cand: Candidate) -> dict:
    return (cand.generators or {}).get("contract") or {"kind": "exact"}


def candidate_comparison(cand: Candidate) -> dict:
    """The judge's comparison for the candidate's declared output contract."""
    return contracts.comparison_for(candidate_contract(cand))


def candidate_starter(ctx: Ctx, cand: Candidate) -> str:
    """A candidate whose parent ships starter code gets one in the same convention, from the
    evolved reference's signature: ``class Solution`` and the method (LiveCodeBench's
    call-based tasks), or the module-level function (HumanEval, SciCode)."""
    parent = cand.parent or ctx.seed
    return prompts.starter_from_solution(
        cand.code, cand.entry_point, cand.harness, parent.starter_code
    )
