"""A campaign kind is a declared table, validated when it is registered.

Each method declares its kind in ``<method>/kind.py`` by calling ``register(Kind(...))`` at
import time; ``discover()`` (run from the evolution app's ``ready()``) imports every installed
app's ``kind`` module the way Django's admin discovers ``admin`` modules.

The runner only ever asks the table: how to load a stream and what its next action is, which
stage runs an action (and on which queue), how to give up on an item, and when the campaign is
finished. Units (lineage candidates, reasoning items, synthesis tasks, ...) move only along the
declared edges, and so do streams that have states of their own (BenchEvolver's lineages):
``unit_transition`` refuses any other move.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q, QuerySet

from .errors import UndeclaredTransition

DEFAULT = "default"
SANDBOX = "sandbox"
ANY = "any"  # the step may run on whichever queue's worker picked it up
QUEUES = (DEFAULT, SANDBOX, ANY)
# A unit that does not exist yet: edges from NEW are the states a unit may be created in.
NEW = "<new>"
# The reason the runner gives when it gives up on an item ("judge failed 3 times: ..."); a
# kind's ``given_up`` matches it so that rejections by the method itself are told apart.
GIVE_UP_REASON = r"^[a-z_]+ failed [0-9]+ times: "


def count_by(rows: QuerySet, field: str) -> dict[Any, int]:
    """``{value of field: rows}``: ``rows`` counted by ``field`` in one query (a kind's
    ``seeds`` counts its seed records by campaign)."""
    return dict(rows.order_by().values_list(field).annotate(n=Count("pk")).values_list(field, "n"))


def recorded_problems(campaign_ids: list[int]) -> QuerySet:
    """The problems that record the campaign that made them (``metadata["campaign"]``), seeds
    left out: how X-Coder, EvoSyn and FrontierSmith mark what they accepted."""
    from evolution.models import Problem

    return Problem.objects.filter(metadata__campaign__in=list(campaign_ids)).exclude(kind="seed")


class KindError(Exception):
    """A kind's declaration is inconsistent (raised when it is registered)."""


@dataclass(frozen=True)
class Stage:
    """One step of the method: ``run(ctx, action)`` does the work and stores the result."""

    name: str
    run: Callable[[Any, Any], None]
    queue: str = DEFAULT


def stages_of(*modules, queue: str = DEFAULT) -> tuple[Stage, ...]:
    """One stage per module of a method's ``stages`` package, named as the module: stage S of
    method M is ``M/stages/S.py``, whose ``act_S`` (or ``_S``) does the work."""
    found = []
    for module in modules:
        name = module.__name__.rsplit(".", 1)[-1]
        run = getattr(module, f"act_{name}", None) or getattr(module, f"_{name}", None)
        if run is None:
            raise KindError(f"{module.__name__} has no act_{name} or _{name}")
        found.append(Stage(name, run, queue))
    return tuple(found)


@dataclass(frozen=True)
class ReEvolver:
    """What the living loop asks of a kind that re-evolves a benchmark's saturated problems
    (``releases.living``): ``create(name=, seed_set=, evolver=, panel=, settings=,
    created_by=)`` makes a draft campaign of the kind seeded with them, ``seeds_drop(campaign,
    problem_ids)`` forgets the kind's own rows of seeds a curator left out of the draft, and
    ``settings_table(campaign)`` lists its algorithm settings as the curator reviews them
    (``AlgorithmSettings.table``)."""

    create: Callable[..., Any]
    seeds_drop: Callable[[Any, list[int]], None]
    settings_table: Callable[[Any], list[dict]]


@dataclass(frozen=True)
class Lineages:
    """What review asks of a kind whose campaigns grow lineages (a seed and the problems
    evolved from it, round by round), each of which a curator may put in a round as one group:
    ``model``, the lineage table as ``app_label.ModelName`` (review's ``ReviewGroup.lineage``
    points to it); ``reviewable()``, the lineages with at least one accepted problem, in the
    order the round form lists them; ``problems(lineage)``, the seed, then its accepted
    problems in round order; ``label(lineage)``, what the round form calls one of
    ``reviewable()``'s rows."""

    model: str
    reviewable: Callable[[], QuerySet]
    problems: Callable[[Any], list]
    label: Callable[[Any], str]


@dataclass(frozen=True)
class Kind:
    """The declared graph of a campaign kind.

    - ``stream_model``: the ``WorkStream`` rows a worker claims; each has a ``campaign`` FK.
    - ``active_streams``: the rows of a campaign that still have work (a Q on ``stream_model``).
    - ``load(stream_id) -> ctx`` and ``next_action(ctx) -> action | None`` (None: the stream
      has no work left); an action has a ``name`` naming one of ``stages``.
    - ``unit_model`` / ``unit_state_field`` / ``states`` / ``edges``: the unit graph.
    - ``stream_state_field`` / ``stream_states`` / ``stream_edges``: the graph of the streams
      themselves, for a kind whose streams have states (BenchEvolver's lineages); none else.
    - ``give_up(ctx, action, reason) -> bool``: retire the item the failing action works on;
      False when the action has no item (a barrier), then ``fail_stream`` (or, when None, the
      campaign fails: a barrier that keeps failing on its own is a programming error).
    - ``unit_of(action) -> id | key | None``: the unit an action works on: its id, or a key
      naming it when the step itself creates it (a reasoning cell's item); None: a stream step.
    - ``given_up``: a Q on ``unit_model`` selecting the units retired by ``give_up``.
    - ``finished(campaign) -> bool``: no work left anywhere in the campaign; by default (one
      stream per campaign, loaded by the campaign's id) when its stream has no next action.
    - ``budget_errors``: exceptions (besides the call budget) that pause for budget.
    - ``seeds(campaign_ids) -> {campaign id: seeds}``: how many seeds each of these campaigns
      (of this kind) starts from, as the kind's own records say, in a few queries whatever
      the number of campaigns; None: the kind starts from no seeds (the campaign list shows a
      dash instead of a count).
    - ``accepted_problems(campaign_ids) -> Problem queryset``: the problems these campaigns
      (of this kind) made, never their seeds; review and releases ask this instead of a
      kind's own tables. None: the kind makes no ``Problem`` rows (reasoning questions).
    - ``seed_problems(campaign_ids) -> Problem queryset``: the seeds these campaigns measured
      themselves, which a release built from them may keep as originals; None: none.
    - ``panel_facts(problem_ids, campaign_ids) -> {problem id: evolution.sources.PanelFacts}``:
      what the kind's own panel measured of these problems, by ``campaign_ids`` first and by any
      campaign of the kind for a problem they did not measure; None: the kind measures with the
      shared panel measurement (``evolution.measurement``) only.
    - ``reevolver``: how the living loop re-evolves saturated problems with the kind
      (``ReEvolver``); None: it does not.
    - ``lineages``: the lineages review rounds may take as groups (``Lineages``); None: the
      kind's problems are grouped by the seed they share, as any problem is.
    - ``problem_tags(problem_ids) -> {problem id: {tag, ...}}``: the review vocabulary's tags
      the kind itself gave these problems (BenchEvolver: the mutation family), which a round's
      tag filter matches as a reviewer's tag; None: the kind gives none.
    """

    name: str
    label: str
    stream_model: type
    unit_model: type
    unit_state_field: str
    states: tuple[str, ...]
    edges: tuple[tuple[str, str], ...]
    stages: tuple[Stage, ...]
    load: Callable[[int], Any]
    next_action: Callable[[Any], Any]
    give_up: Callable[[Any, Any, str], bool]
    given_up: Q
    finished: Callable[[Any], bool] | None = None
    unit_of: Callable[[Any], Hashable | None] = lambda action: None
    active_streams: Q = field(default_factory=Q)
    fail_stream: Callable[[int, str], None] | None = None
    budget_errors: tuple[type[BaseException], ...] = ()
    # One stream per campaign (each step sees the ones before it): the inline runner's
    # ``workers`` is moot.
    sequential: bool = True
    # Label of the campaign's completion ("every lineage finished", "all runs finished").
    completed_reason: str = "all work finished"
    # When the kind has no work left: a reason when what it did amounts to a failure (every
    # unit ended in an error, e.g. every model call was refused), so the campaign ends
    # ``failed`` with it instead of ``completed``; None for a real completion.
    failure: Callable[[Any], str | None] | None = None
    stream_state_field: str = ""
    stream_states: tuple[str, ...] = ()
    stream_edges: tuple[tuple[str, str], ...] = ()
    seeds: Callable[[list[int]], dict[int, int]] | None = None
    accepted_problems: Callable[[list[int]], QuerySet] | None = None
    seed_problems: Callable[[list[int]], QuerySet] | None = None
    panel_facts: Callable[[list[int], list[int]], dict] | None = None
    reevolver: ReEvolver | None = None
    lineages: Lineages | None = None
    problem_tags: Callable[[list[int]], dict[int, set[str]]] | None = None

    def __post_init__(self):
        if self.finished is None:
            object.__setattr__(self, "finished", self._stream_has_no_next_action)

    def _stream_has_no_next_action(self, campaign) -> bool:
        return self.next_action(self.load(campaign.pk)) is None

    def stage(self, name: str) -> Stage:
        for stage in self.stages:
            if stage.name == name:
                return stage
        raise KindError(f"kind {self.name!r} declares no stage {name!r}")

    @property
    def queues(self) -> tuple[str, ...]:
        """The queues a campaign of this kind needs a worker on: ``default`` (its tick and
        every first step) and the queue of each stage that names one."""
        named = {stage.queue for stage in self.stages if stage.queue != ANY}
        return tuple(sorted(named | {DEFAULT}))

    def allows(self, source: str, target: str) -> bool:
        return (source, target) in self.edges

    def graph_of(self, model) -> tuple[str, tuple[tuple[str, str], ...]]:
        """(state field, edges) of ``model``'s rows: the units, or the streams when they
        have states. ``UndeclaredTransition`` for rows whose moves the kind does not declare."""
        if model is self.unit_model:
            return self.unit_state_field, self.edges
        if model is self.stream_model and self.stream_state_field:
            return self.stream_state_field, self.stream_edges
        raise UndeclaredTransition(f"{self.name}: {model.__name__} rows have no declared states")

    def validate(self) -> None:
        names = [s.name for s in self.stages]
        problems = []
        if len(set(names)) != len(names):
            problems.append(f"stage names repeat: {names}")
        for stage in self.stages:
            if not callable(stage.run):
                problems.append(f"stage {stage.name!r} has no callable")
            if stage.queue not in QUEUES:
                problems.append(f"stage {stage.name!r} names queue {stage.queue!r}, not {QUEUES}")
        states = set(self.states)
        for source, target in self.edges:
            if source != NEW and source not in states:
                problems.append(f"edge {source}->{target}: {source!r} is not a declared state")
            if target not in states:
                problems.append(f"edge {source}->{target}: {target!r} is not a declared state")
        if not any(source == NEW for source, _ in self.edges):
            problems.append("no edge from NEW: no unit can ever be created")
        stream_states = set(self.stream_states)
        for source, target in self.stream_edges:
            for state in (source, target):
                if state != NEW and state not in stream_states:
                    problems.append(
                        f"stream edge {source}->{target}: {state!r} is not a declared stream state"
                    )
        if self.stream_edges and hasattr(self.stream_model, "_meta"):
            try:
                self.stream_model._meta.get_field(self.stream_state_field)
            except Exception:
                problems.append(f"stream model has no field {self.stream_state_field!r}")
        for name in ("stream_model", "unit_model"):
            model = getattr(self, name)
            if not hasattr(model, "_meta"):
                problems.append(f"{name} is not a model")
        if hasattr(self.unit_model, "_meta"):
            try:
                self.unit_model._meta.get_field(self.unit_state_field)
            except Exception:
                problems.append(f"unit model has no field {self.unit_state_field!r}")
        if hasattr(self.stream_model, "_meta"):
            fields = {f.name for f in self.stream_model._meta.get_fields()}
            for needed in ("lease_token", "leased_until", "ticket", "ticket_chain", "campaign"):
                if needed not in fields:
                    problems.append(f"stream model has no {needed!r} (inherit WorkStream)")
        if problems:
            raise KindError(f"kind {self.name!r} is not valid: " + "; ".join(problems))


_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Validate and register ``kind`` (a second registration under the same name replaces the
    first only when it is the same declaration, e.g. a module imported twice)."""
    kind.validate()
    _KINDS[kind.name] = kind
    return kind


def kind_for(name: str) -> Kind:
    try:
        return _KINDS[name]
    except KeyError:
        raise LookupError(f"no kind is registered for campaign kind {name!r}") from None


def registered() -> list[Kind]:
    return list(_KINDS.values())


def campaigns_by_kind(campaigns) -> dict[str, list[int]]:
    """{kind name: ids of those of ``campaigns`` of that kind}."""
    by_kind: dict[str, list[int]] = {}
    for c in campaigns:
        by_kind.setdefault(c.kind, []).append(c.pk)
    return by_kind


def problem_panel_facts(problem_ids, campaigns=()) -> dict:
    """{problem id: ``evolution.sources.PanelFacts``}: what the kinds' own panels measured of
    ``problem_ids``, each kind by its campaigns among ``campaigns`` first, else by any of its
    campaigns (a problem from a set or an earlier release may have been measured by a kind none
    of ``campaigns`` is: every kind that measures is asked). A problem no kind measured is
    absent (the shared panel measurement may have measured it). The gate, the release
    provenance and every page that shows a problem's measured difficulty read this one
    answer."""
    by_kind = campaigns_by_kind(campaigns)
    facts: dict = {}
    for kind in registered():
        asked = [pid for pid in problem_ids if pid not in facts]
        if kind.panel_facts is None or not asked:
            continue
        for pid, measured in kind.panel_facts(asked, by_kind.get(kind.name, [])).items():
            facts.setdefault(pid, measured)
    return facts


def campaigns_without_worker(live_by_queue: dict[str, list[str]]) -> list[dict]:
    """Launched campaigns (queued or running) that need a queue no live worker serves, each
    with the queues missing. ``live_by_queue`` maps a queue to the live workers consuming it
    (``evolution.workers.workers_by_queue``)."""
    from evolution.models import Campaign

    launched = Campaign.objects.filter(state__in=["queued", "running"]).order_by("pk")
    found = []
    for campaign in launched.only("pk", "name", "kind"):
        kind = _KINDS.get(campaign.kind)
        if kind is None:
            continue
        missing = [queue for queue in kind.queues if not live_by_queue.get(queue)]
        if missing:
            found.append(
                {"id": campaign.pk, "name": campaign.name, "kind": campaign.kind, "queues": missing}
            )
    return found


def discover() -> None:
    from django.utils.module_loading import autodiscover_modules

    autodiscover_modules("kind")


def unit_transition(
    kind: Kind | str, units: QuerySet, *, source: str | Iterable[str], target: str, **fields
) -> int:
    """Move the units ``units`` selects from ``source`` (one state or several) to ``target``
    with one conditional UPDATE; return how many moved. Raises ``UndeclaredTransition`` for an
    edge the kind does not declare, before anything is written. ``units`` may also select the
    kind's streams when they have states of their own (the stream graph then applies)."""
    kind = kind if isinstance(kind, Kind) else kind_for(kind)
    state_field, edges = kind.graph_of(units.model)
    what = "a unit" if units.model is kind.unit_model else "a stream"
    sources = [source] if isinstance(source, str) else list(source)
    for s in sources:
        if (s, target) not in edges:
            raise UndeclaredTransition(
                f"{kind.name}: {what} cannot go from {str(s)!r} to {str(target)!r}"
            )
    return units.filter(**{f"{state_field}__in": sources}).update(**{state_field: target}, **fields)


def unit_created(kind: Kind | str, state: str) -> str:
    """Check that a unit may be created in ``state``; returns it (for ``create(status=...)``)."""
    kind = kind if isinstance(kind, Kind) else kind_for(kind)
    if not kind.allows(NEW, state):
        raise UndeclaredTransition(f"{kind.name}: a unit cannot be created in state {str(state)!r}")
    return state
