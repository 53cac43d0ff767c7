"""The shared runner's pieces that the contract suite does not exercise per kind: the declared
tables refuse inconsistent declarations and undeclared moves, failures are classified once,
the older task names still run steps, and `run_campaign <id> --inline` reports a Campaign for
every kind."""

from __future__ import annotations

import dataclasses
import importlib
from io import StringIO
from pathlib import Path

import pytest
from celery import current_app
from django.core.management import call_command
from django.db import IntegrityError, OperationalError

from evolution.llm.errors import BudgetExhausted, LLMTransportError, ParseError
from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from evolution.sandbox.types import SandboxUnavailable
from evolution.streams import errors, lifecycle, runner, tasks
from evolution.streams.kinds import (
    NEW,
    KindError,
    UndeclaredTransition,
    kind_for,
    register,
    registered,
    unit_created,
    unit_transition,
)
from reasoning.models import ItemStatus, ReasoningItem
from tests.support.fake_openai import FakeOpenAI

from .worlds import WORLDS


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


# --------------------------------------------------------------------------- declared tables


def test_every_campaign_kind_is_discovered_from_its_kind_module():
    from django.apps import apps

    from evolution.models.campaigns import CampaignKind

    assert {k.name for k in registered()} == set(CampaignKind.values)
    # Nothing is registered by hand in an AppConfig.ready(): the kind modules are discovered.
    for app in ("reasoning", "xcoder", "evosyn", "frontiersmith"):
        assert "ready" not in type(apps.get_app_config(app)).__dict__


def test_a_kind_with_an_edge_to_an_undeclared_state_is_refused_at_registration():
    kind = kind_for("reasoning")
    broken = dataclasses.replace(kind, name="broken", edges=(*kind.edges, ("judged", "archived")))
    with pytest.raises(KindError, match="'archived' is not a declared state"):
        register(broken)
    with pytest.raises(LookupError):
        kind_for("broken")


def test_a_kind_whose_stage_names_a_queue_that_does_not_exist_is_refused():
    kind = kind_for("xcoder")
    stages = (dataclasses.replace(kind.stages[0], queue="gpu"), *kind.stages[1:])
    with pytest.raises(KindError, match="names queue 'gpu'"):
        register(dataclasses.replace(kind, name="broken", stages=stages))


# Each kind's method package: kind.py, stages/<stage>.py, engine/, prompts/.
METHOD_PACKAGES = {
    "benchevolver": "evolution.benchevolver",
    "evosyn": "evosyn",
    "frontiersmith": "frontiersmith",
    "reasoning": "reasoning",
    "xcoder": "xcoder",
}


def test_every_kind_has_the_method_layout():
    assert set(METHOD_PACKAGES) == {k.name for k in registered()}


@pytest.mark.parametrize("name", sorted(METHOD_PACKAGES))
def test_each_stage_of_a_kind_lives_in_its_methods_stages_package(name):
    # Stage S of method M is found from folder names alone: M/stages/<module>.py, next to the
    # M/kind.py that declares it and the M/engine/ it drives.
    method = METHOD_PACKAGES[name]
    kind = kind_for(name)
    assert kind.next_action.__module__ == f"{method}.kind"
    root = Path(importlib.import_module(method).__file__).parent
    for sub in ("stages", "engine", "prompts"):
        assert (root / sub).is_dir(), (name, sub)
    own = [s for s in kind.stages if s.run.__module__.startswith(f"{method}.")]
    assert own, name
    for stage in own:
        module = stage.run.__module__
        assert module.startswith(f"{method}.stages."), (stage.name, module)
        path = root / "stages" / (module.rpartition(".")[2] + ".py")
        assert path.is_file(), (stage.name, path)
    # A stage the platform shares between kinds lives outside every method's package.
    for stage in kind.stages:
        owners = [m for m in METHOD_PACKAGES.values() if stage.run.__module__.startswith(m + ".")]
        assert owners in ([], [method]), (stage.name, stage.run.__module__)


@pytest.mark.django_db
def test_an_undeclared_lineage_move_is_refused_and_writes_nothing(fake_server):
    # BenchEvolver's lineages are its streams and have states of their own: their moves are
    # declared like a unit's, and a finished lineage cannot start evolving again.
    from evolution.benchevolver.kind import fail_lineage
    from evolution.benchevolver.models import Lineage, LineageState

    campaign = WORLDS["benchevolver"](fake_server)
    lineage = Lineage.objects.get(campaign=campaign)
    assert lineage.state == LineageState.PENDING
    # A declared edge moves it: a lineage whose own step keeps failing is failed.
    fail_lineage(lineage.pk, "boom")
    lineage.refresh_from_db()
    assert (lineage.state, lineage.stop_reason) == (LineageState.FAILED, "boom")
    with pytest.raises(
        UndeclaredTransition, match="a stream cannot go from 'failed' to 'evolving'"
    ):
        unit_transition(
            "benchevolver",
            Lineage.objects.filter(pk=lineage.pk),
            source=LineageState.FAILED,
            target=LineageState.EVOLVING,
        )
    # Failing moves only an active lineage: a finished one keeps its state and reason.
    fail_lineage(lineage.pk, "again")
    lineage.refresh_from_db()
    assert (lineage.state, lineage.stop_reason) == (LineageState.FAILED, "boom")


@pytest.mark.django_db
def test_an_undeclared_xcoder_task_move_is_refused_and_writes_nothing(fake_server):
    from xcoder.models import SynthTask, TaskStatus
    from xcoder.stages.common import move_task

    campaign = WORLDS["xcoder"](fake_server)
    task = SynthTask.objects.create(
        xcoder=campaign.xcoder, index=0, style="codeforces", status=TaskStatus.PLANNED
    )
    task.title = "skipping its stages"
    with pytest.raises(UndeclaredTransition, match="from 'planned' to 'accepted'"):
        move_task(task, TaskStatus.ACCEPTED)
    task.refresh_from_db()
    assert (task.status, task.title) == (TaskStatus.PLANNED, "")
    # A declared move stores the task's fields with its new status.
    task.title = "selected"
    assert move_task(task, TaskStatus.SELECTED, reason="kept")
    task.refresh_from_db()
    assert (task.status, task.title, task.reason) == (TaskStatus.SELECTED, "selected", "kept")
    # A stale copy (the task moved on meanwhile) writes nothing.
    stale = SynthTask.objects.get(pk=task.pk)
    stale.status = TaskStatus.PLANNED
    assert not move_task(stale, TaskStatus.SELECTED, title="stale")
    task.refresh_from_db()
    assert task.title == "selected"


@pytest.mark.django_db
def test_an_undeclared_candidate_move_is_refused_and_writes_nothing(fake_server):
    # BenchEvolver's candidates move forward stage by stage, back for a repair or for more
    # panel evidence, and to a decision from any stage; nothing else.
    from evolution.benchevolver.models import Candidate, CandidateStage, Lineage
    from evolution.benchevolver.stages.common import move_candidate

    campaign = WORLDS["benchevolver"](fake_server)
    lineage = Lineage.objects.get(campaign=campaign)
    cand = Candidate.objects.create(
        lineage=lineage, round=1, parent=lineage.seed, stage=CandidateStage.PROPOSED
    )
    cand.title = "skipping its stages"
    with pytest.raises(UndeclaredTransition, match="from 'proposed' to 'validated'"):
        move_candidate(cand, CandidateStage.VALIDATED)
    cand.refresh_from_db()
    assert (cand.stage, cand.title) == (CandidateStage.PROPOSED, "")
    # A decided candidate is never reopened.
    with pytest.raises(UndeclaredTransition, match="from 'decided' to 'proposed'"):
        unit_transition(
            "benchevolver",
            Candidate.objects.filter(pk=cand.pk),
            source=CandidateStage.DECIDED,
            target=CandidateStage.PROPOSED,
        )
    # Declared moves store the fields named with the new stage, forward and back (the test
    # generator is written again); a field the step did not name is left as stored.
    cand.title = "not named"
    cand.test_repairs = 1
    assert move_candidate(cand, CandidateStage.GENERATED, generators={"program": "p"})
    assert move_candidate(cand, CandidateStage.PROPOSED, "test_repairs")
    cand.refresh_from_db()
    assert (cand.stage, cand.generators, cand.test_repairs, cand.title) == (
        CandidateStage.PROPOSED,
        {"program": "p"},
        1,
        "",
    )
    # The stage itself moves only along an edge; it is never a field to store.
    with pytest.raises(ValueError, match="cannot store"):
        move_candidate(cand, CandidateStage.GENERATED, "stage")


@pytest.mark.django_db
def test_a_candidate_move_whose_source_stage_no_longer_matches_changes_nothing(fake_server):
    # Two workers hold copies of one candidate: the first moves it on; the second's copy is
    # stale, and its move (the same edge, or a repair back) writes nothing at all.
    from evolution.benchevolver.models import Candidate, CandidateStage, Decision, Lineage
    from evolution.benchevolver.stages.common import move_candidate

    campaign = WORLDS["benchevolver"](fake_server)
    lineage = Lineage.objects.get(campaign=campaign)
    cand = Candidate.objects.create(
        lineage=lineage, round=1, parent=lineage.seed, stage=CandidateStage.MEASURED
    )
    stale = Candidate.objects.get(pk=cand.pk)
    assert move_candidate(cand, CandidateStage.JUDGED, judge_report={"model": {"parsed": True}})
    assert not move_candidate(stale, CandidateStage.JUDGED, judge_report={"stale": True})
    assert not move_candidate(stale, CandidateStage.VALIDATED, generators={"panel_extra": 3})
    assert stale.stage == CandidateStage.MEASURED  # the copy is not told it moved
    cand.refresh_from_db()
    assert (cand.stage, cand.judge_report, cand.generators) == (
        CandidateStage.JUDGED,
        {"model": {"parsed": True}},
        {},
    )
    # A decided candidate is not undone by a stale step either.
    decided = Candidate.objects.get(pk=cand.pk)
    assert move_candidate(decided, CandidateStage.DECIDED, decision=Decision.NOT_HARDER)
    assert not move_candidate(cand, CandidateStage.DECIDED, decision=Decision.ERROR)
    cand.refresh_from_db()
    assert (cand.stage, cand.decision) == (CandidateStage.DECIDED, Decision.NOT_HARDER)


@pytest.mark.django_db
def test_an_undeclared_transition_is_refused_and_writes_nothing(fake_server):
    campaign = WORLDS["reasoning"](fake_server)
    rc = campaign.reasoning
    from reasoning.models import ReasoningRun

    run = ReasoningRun.objects.create(reasoning=rc, series=rc.series, number=1)
    item = ReasoningItem.objects.create(
        run=run,
        reasoning=rc,
        reasoning_type="t",
        difficulty=1,
        question_index=0,
        position=0,
        status=ItemStatus.JUDGED,
    )
    with pytest.raises(UndeclaredTransition, match="from 'judged' to 'generated'"):
        unit_transition(
            "reasoning",
            ReasoningItem.objects.filter(pk=item.pk),
            source=ItemStatus.JUDGED,
            target=ItemStatus.GENERATED,
        )
    with pytest.raises(UndeclaredTransition, match="created in state 'judged'"):
        unit_created("reasoning", ItemStatus.JUDGED)
    item.refresh_from_db()
    assert item.status == ItemStatus.JUDGED
    assert kind_for("reasoning").allows(NEW, ItemStatus.GENERATED)


# --------------------------------------------------------------------------- failures


@pytest.mark.parametrize(
    ("exc", "infrastructure"),
    [
        (errors.SandboxFailure("SE"), True),
        (SandboxUnavailable("bwrap is not installed"), True),
        (OperationalError("could not connect to server"), True),
        (IntegrityError("duplicate key"), True),
        (LLMTransportError("timed out", status=None, tries=3), True),
        (LLMTransportError("rate limited", status=429, tries=3), True),
        (LLMTransportError("bad gateway", status=502, tries=3), True),
        (LLMTransportError("bad request", status=400, tries=1), False),
        (LLMTransportError("no such model", status=404, tries=1), False),
        (ParseError("no code block"), False),
        (ValueError("malformed"), False),
        (KeyError("missing"), False),
    ],
)
def test_failures_are_classified_once_for_every_kind(exc, infrastructure):
    assert errors.is_infrastructure(exc) is infrastructure


def test_the_budget_is_not_an_infrastructure_failure():
    assert not errors.is_infrastructure(BudgetExhausted("calls: 10 of 10"))


def test_sandbox_failure_is_defined_once():
    from evolution.benchevolver.stages import validate_execute as benchevolver_stage
    from evolution.judging import attempts as panel_attempts
    from evosyn.stages import execute as evosyn_stage
    from frontiersmith.stages import build as frontier_stage
    from xcoder.stages import verify as xcoder_stage

    assert benchevolver_stage.SandboxFailure is errors.SandboxFailure
    assert panel_attempts.SandboxFailure is errors.SandboxFailure
    assert xcoder_stage.SandboxFailure is errors.SandboxFailure
    assert evosyn_stage.SandboxFailure is errors.SandboxFailure
    assert frontier_stage.SandboxFailure is errors.SandboxFailure


# --------------------------------------------------------------------------- tasks


def test_the_older_task_names_stay_registered():
    for name in (*tasks.LEGACY_TASK_NAMES, lifecycle.STEP_TASK, lifecycle.TICK_TASK):
        assert name in current_app.tasks, name


@pytest.mark.django_db(transaction=True)
def test_a_message_queued_under_an_older_task_name_still_runs_the_step(fake_server, monkeypatch):
    sent = []
    monkeypatch.setattr(
        lifecycle, "send_task", lambda name, args, **options: sent.append((name, args))
    )
    campaign = WORLDS["reasoning"](fake_server)
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING, tick_token="c")
    campaign.refresh_from_db()
    ticket = runner.issue_ticket("reasoning", campaign.pk, campaign=campaign, only_if_quiet=False)
    legacy = current_app.tasks["reasoning.tasks.reasoning_step"]

    assert legacy(campaign.pk, "stale") == "skipped"
    assert legacy(campaign.pk, ticket) == "done"

    rc = campaign.reasoning.__class__.objects.get(pk=campaign.pk)
    assert rc.steps_done == 1 and rc.ticket != ticket  # the next step got a new ticket
    assert sent == [(lifecycle.STEP_TASK, ("reasoning", campaign.pk, rc.ticket, "default"))]


# --------------------------------------------------------------------------- run_campaign --inline


@pytest.mark.django_db(transaction=True)
def test_run_campaign_inline_completes_an_xcoder_campaign(fake_server):
    campaign = WORLDS["xcoder"](fake_server)
    out, err = StringIO(), StringIO()

    call_command("run_campaign", str(campaign.pk), "--inline", stdout=out, stderr=err)

    campaign.refresh_from_db()
    assert campaign.state == CampaignState.COMPLETED
    assert f"campaign {campaign.pk}: completed" in out.getvalue()
