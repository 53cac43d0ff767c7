"""Stage ``difficulty`` (appendix B.3 done differently, setting ``difficulty_estimate``): a judge
model rates each accepted task's statement on the Codeforces scale (prompt
``prompts/difficulty.md``, parser and calibration in ``engine/difficulty.py``).

It runs once every task is decided and before the panel measures the accepted problems, so the
judge sees only the statement, never a measured pass rate. The calls of all accepted tasks
still unrated go out side by side; each answer is stored on its task as it is applied, so a
rerun asks only for the ones missing. An answer with no rating in it is stored as a failed
estimate with the reason (and the call marked unparsable), never retried in a loop.

``rate_campaign`` runs the same step over a campaign that has finished (the command
``xcoder_difficulty``): the estimate of every accepted task still unrated, the calls in the
campaign's ledger and budget as the stage makes them.
"""

from __future__ import annotations

from django.db import transaction

from evolution.llm import fanout, mark_unparsable
from evolution.llm.parsing import ParseError
from evolution.models import ModelEndpoint

from ..engine import difficulty as estimate
from ..engine import prompts
from ..models import SynthTask, TaskStatus
from .common import Action, Ctx, fan_out_calls, load_context, raise_first

METHOD = estimate.METHOD


def judge_endpoint(ctx: Ctx) -> ModelEndpoint:
    """The endpoint named by ``difficulty_judge``, or the generator endpoint."""
    name = ctx.settings.difficulty_judge
    return ModelEndpoint.objects.get(name=name) if name else ctx.xc.generator_endpoint


def unrated(ctx: Ctx):
    """Accepted tasks without an estimate, by index."""
    return SynthTask.objects.filter(
        xcoder=ctx.xc, status=TaskStatus.ACCEPTED, difficulty={}
    ).order_by("index")


def _ask(ctx: Ctx, task: SynthTask, endpoint: ModelEndpoint):
    messages, template = prompts.difficulty_messages(statement=task.statement)
    return ctx.chat(
        "xcoder_difficulty",
        messages,
        template,
        endpoint=endpoint,
        key=f"task={task.index};difficulty",
        temperature=0.0,
    )


def act_difficulty(ctx: Ctx, action: Action) -> None:
    rate(ctx, judge_endpoint(ctx))


def rate(ctx: Ctx, endpoint: ModelEndpoint) -> list[SynthTask]:
    """Ask ``endpoint`` for the rating of every accepted task still unrated, side by side, and
    store each answer on its task; returns the tasks asked for. The first failed call is
    raised after the others are stored."""
    tasks = list(unrated(ctx))
    outcomes = fan_out_calls(
        [lambda t=t: _ask(ctx, t, endpoint) for t in tasks], fanout.width_for(endpoint)
    )
    for task, result in zip(tasks, outcomes, strict=True):
        if isinstance(result, BaseException):
            continue
        try:
            rating = estimate.parse_rating(result.content)
        except ParseError as exc:
            mark_unparsable(result.call_id, str(exc))
            record = {"status": "failed", "reason": str(exc)}
        else:
            record = {"status": "ok", **rating.to_dict()}
        record.update(method=METHOD, judge=endpoint.name, call_id=result.call_id)
        store(task, record)
    raise_first(outcomes)
    return tasks


def rate_campaign(campaign_id: int, endpoint: ModelEndpoint | None = None) -> list[SynthTask]:
    """``rate`` over the X-Coder campaign ``campaign_id`` outside its run: with ``endpoint``,
    or the judge its settings name (``judge_endpoint``)."""
    ctx = load_context(campaign_id)
    return rate(ctx, endpoint or judge_endpoint(ctx))


def store(task: SynthTask, record: dict) -> None:
    """Keep ``record`` as the task's estimate unless one is there already (a rerun)."""
    with transaction.atomic():
        SynthTask.objects.filter(pk=task.pk, difficulty={}).update(difficulty=record)
