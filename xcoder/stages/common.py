"""What every X-Coder stage shares: the action, the step's context (campaign, settings, model calls,
sandbox limits), the seeds, the feature tree's counts and nodes, and rejecting a task."""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from evolution import sandbox
from evolution.llm import fanout
from evolution.models import Campaign, ModelEndpoint, Problem
from evolution.streams.context import StepContext
from evolution.streams.kinds import unit_transition

from ..config import XcoderSettings
from ..models import FeatureNode, SynthTask, TaskStatus, XcoderCampaign

log = logging.getLogger(__name__)
METHOD = KIND_NAME = "xcoder"
TIERS_BY_WEIGHT = {1: "small", 2: "medium", 3: "large", 4: "stress"}
# The roles the campaign's generator endpoint plays (the solvers and the difficulty judge are
# asked on each of their own endpoints).
GENERATOR_ROLES = (
    "xcoder_extract",
    "xcoder_evolve",
    "xcoder_select",
    "xcoder_write",
    "xcoder_tests",
    "xcoder_generator",
)


@dataclass(frozen=True)
class Action:
    name: str  # extract | merge | evolve | close_tree | plan | select | write | tests | solve
    # | verify | finished
    problem_id: int | None = None
    round: int | None = None
    category: str = ""
    task_index: int | None = None
    task_id: int | None = None


@dataclass
class Ctx(StepContext):
    xc: XcoderCampaign
    settings: XcoderSettings

    @property
    def campaign(self) -> Campaign:
        return self.xc.campaign

    def endpoint_for(self, role: str) -> ModelEndpoint:
        """The generator asks every role but the solvers and the difficulty judge, which are
        asked on each of their endpoints."""
        if role in GENERATOR_ROLES:
            return self.xc.generator_endpoint
        raise LookupError(f"an X-Coder campaign has no single endpoint for role {role!r}")

    def default_temperature(self) -> float:
        return self.settings.temperature

    def limits(self) -> sandbox.Limits:
        return sandbox.Limits(
            time_s=self.settings.execution_timeout, memory_mb=self.settings.memory_mb
        )

    def generator_width(self) -> int:
        """Parallel calls to the generator endpoint (fan-out setting and its limit)."""
        return fanout.width_for(self.xc.generator_endpoint)

    def task_group(self, index: int) -> range:
        """The tasks that advance together with task ``index``: consecutive indices, as many as
        fill a step's waves of calls to the generator endpoint (``fanout.step_calls``), so each
        task stage asks its calls for the whole group side by side. A fan-out of 1 is one task
        at a time."""
        width = self.generator_width()
        size = 1 if width == 1 else fanout.step_calls(width)
        start = index - index % size
        return range(start, min(start + size, self.settings.num_tasks))


def group_tasks(ctx: Ctx, action: Action, status: str) -> list[SynthTask]:
    """The action's task, then the other tasks of its group waiting at the same ``status``, by
    index: what one step of a task stage works on."""
    task = SynthTask.objects.get(pk=action.task_id)
    others = SynthTask.objects.filter(
        xcoder=ctx.xc, index__in=ctx.task_group(task.index), status=status
    ).exclude(pk=task.pk)
    return [task, *others.order_by("index")]


def fan_out_calls(jobs, width: int) -> list:
    """The calls of ``jobs`` side by side (``evolution.llm.fanout``), results in input order; a
    failed call takes its job's place as the exception."""
    return fanout.fan_out(jobs, width, return_exceptions=True)


raise_first = fanout.raise_first


def ask_group(ctx: Ctx, action: Action, status: str, ask, apply) -> None:
    """One generator call per task of the action's group waiting at ``status``
    (``group_tasks``), side by side: ``ask(ctx, task)``. Each answer is applied in task order,
    ``apply(ctx, task, answer)``, to a task still at ``status`` when its turn comes (read
    again: a rerun may have moved it); then the first failed call is raised."""
    tasks = group_tasks(ctx, action, status)
    outcomes = fan_out_calls([lambda t=t: ask(ctx, t) for t in tasks], ctx.generator_width())
    for task, result in zip(tasks, outcomes, strict=True):
        if isinstance(result, BaseException):
            continue
        task.refresh_from_db()
        if task.status == status:
            apply(ctx, task, result)
    raise_first(outcomes)


def load_context(campaign_id: int) -> Ctx:
    xc = XcoderCampaign.objects.select_related("campaign", "generator_endpoint").get(pk=campaign_id)
    return Ctx(xc=xc, settings=XcoderSettings.from_dict(xc.campaign.settings))


def seed_problems(campaign: Campaign) -> list[Problem]:
    """The seeds features are extracted from: the seed set's problems with a reference."""
    qs = campaign.seed_set.problems.exclude(reference_solution="").order_by("id")
    return list(qs[: campaign.seed_limit] if campaign.seed_limit else qs)


def tree_categories(xc: XcoderCampaign) -> list[str]:
    return list(
        FeatureNode.objects.filter(xcoder=xc, depth=0)
        .order_by("path")
        .values_list("category", flat=True)
    )


def seed_key(problem: Problem) -> str:
    return problem.origin_id or problem.public_id


def category_counts(xc: XcoderCampaign) -> dict[str, int]:
    """Features per category: every node below the category node."""
    counts = dict.fromkeys(tree_categories(xc), 0)
    for category, n in Counter(
        FeatureNode.objects.filter(xcoder=xc, depth__gt=0).values_list("category", flat=True)
    ).items():
        counts[category] = n
    return counts


def store_nodes(xc: XcoderCampaign, specs, *, origin: str, round_no: int, source=None) -> int:
    """Create the nodes that do not exist yet (parents first); add ``source`` to existing ones.
    Returns how many were created."""
    existing = {n.path: n for n in FeatureNode.objects.filter(xcoder=xc)}
    created = 0
    for spec in specs:
        node = existing.get(spec.path)
        if node is None:
            node = FeatureNode.objects.create(
                xcoder=xc,
                parent=existing.get(spec.parent_path) if spec.parent_path else None,
                category=spec.category,
                name=spec.name[:200],
                path=spec.path[:1000],
                depth=spec.depth,
                origin=origin,
                evolution_round=round_no,
                sources=[source] if source else [],
            )
            existing[spec.path] = node
            created += 1
        elif source and source not in node.sources:
            node.sources = [*node.sources, source]
            node.save(update_fields=["sources"])
    return created


def move_task(task: SynthTask, target: str, **fields) -> bool:
    """Store ``task`` (its fields as the step set them, and ``fields``) and move it from the
    status it was loaded in to ``target`` along the kind's declared edges, in one conditional
    UPDATE (``unit_transition``: an undeclared move raises before anything is written). False
    when the task had left that status meanwhile (nothing is written then)."""
    for key, value in fields.items():
        setattr(task, key, value)
    values = {
        f.attname: f.pre_save(task, add=False)
        for f in SynthTask._meta.concrete_fields
        if not f.primary_key and f.attname != "status"
    }
    moved = unit_transition(
        KIND_NAME, SynthTask.objects.filter(pk=task.pk), source=task.status, target=target, **values
    )
    if moved:
        task.status = target
    return bool(moved)


def reject_task(task: SynthTask, code: str, reason: str, **fields) -> None:
    move_task(task, TaskStatus.REJECTED, reason_code=code, reason=reason[:4000], **fields)


def discard_task(task: SynthTask, code: str, reason: str) -> None:
    move_task(task, TaskStatus.DISCARDED, reason_code=code, reason=reason[:4000])
