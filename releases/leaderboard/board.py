"""The public leaderboard as a table a visitor controls, LiveCodeBench style.

Controls (all in the query string, so a view is a link and the public page cache keys on
them): ``after`` keeps only problems released on or after a date (LiveCodeBench's date
slider), ``model`` keeps models whose name contains the text, ``sort`` / ``dir`` order the
rows by any column. Every score is a mean over the problems in view with a seeded bootstrap
interval (``stats.bootstrap_mean``, the run's own seed); with no date chosen they are the
run's stored summary's top-level figures, with one they are recomputed from the run's
per-problem results (every run not in the cache at once, ``stats.bootstrap_means``) and kept
in the shared cache (a completed run on a published release never changes). Both are read
from ``LeaderboardRunFigures`` (``figures_of``: the top-level figures, and the per-problem
values as arrays), never the run's whole summary, a row per problem (hundreds of kilobytes a
run at LiveCodeBench's size): the plain board reads the figures only, a window the arrays of
the runs the cache lacks. A run whose stored summary (or figures) is malformed
(``summaries.readable``) keeps its row, shown as "result unavailable".

pass@1, pass@k, the after-release pass@1 and the breakdowns are over the pass/fail problems
only; open-ended (scored) problems (``scoring.is_scored`` of the item's comparison) have their
own columns, Avg@k and Best@k, and never count as failed passes. A run summarised before
``leaderboard.run_summary`` set them apart (no ``pass_fail_problems`` in its summary) is
recomputed from its per-problem results without them, as a date window is.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import urlencode

from django.core.cache import cache

from evolution.sandbox import scoring

from ..difficulty import LABELS
from ..models import LeaderboardRunFigures, Release, ReleaseState, RunState
from . import summaries
from .stats import bootstrap_means

BASE_SORTS = ("pass1", "passk", "clean", "model", "released", "avgk", "bestk")
CACHE_SECONDS = 24 * 3600


@dataclass
class Board:
    rows: list[dict]
    sort: str
    descending: bool
    after: date | None
    model: str
    difficulties: list[str] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    dates: list[date] = field(default_factory=list)  # distinct problem dates, ascending
    problems: int = 0  # problems in view
    undated: int = 0  # problems without a date (left out by a date window)
    models: list[str] = field(default_factory=list)  # every model, for the filter's list
    scored: bool = False
    # Problems in view that pass@1 is over, and the open-ended (scored) ones, shown apart.
    pass_fail_problems: int = 0
    scored_problems: int = 0
    # A problem of the release is under blind review: nothing that splits it by origin.
    blind: bool = False

    def sort_keys(self) -> list[str]:
        return [
            *(key for key in BASE_SORTS if not (self.blind and key == "clean")),
            *(f"d:{d}" for d in self.difficulties),
            *(f"o:{o}" for o in self.origins),
        ]


def parse_after(raw: str | None) -> date | None:
    try:
        return date.fromisoformat(raw) if raw else None
    except ValueError:
        return None


def _order_difficulties(labels: set[str]) -> list[str]:
    known = [d for d in LABELS if d in labels]
    return known + sorted(labels - set(LABELS))


def _window_key(run, keep: set[str]) -> str:
    digest = hashlib.sha256(",".join(sorted(keep)).encode()).hexdigest()[:32]
    finished = run.finished_at.isoformat() if run.finished_at else ""
    # "board2": entries from before scored problems were set apart are not read back.
    return f"board2:{run.pk}:{finished}:{digest}"


def figures_of(summary) -> tuple[dict | None, dict | None]:
    """What the board reads of a run's stored ``summary`` (``LeaderboardRunFigures``): its
    top-level figures (the summary without its rows per problem and its list of flagged
    problems) and the per-problem values a date window is computed from, as arrays in the
    summary's order: each row's public id, pass@1 and pass@k (k the largest), contamination
    flag, origin, difficulty and whether it is open-ended (scored), and each open-ended row's
    Avg@k and Best@k. ``(None, None)`` when the summary is unreadable (``summaries.readable``)."""
    s = summaries.readable(summary)
    if s is None:
        return None, None
    top = {key: value for key, value in s.items() if key != "per_item"}
    if isinstance(top.get("score"), dict):
        top["score"] = {key: v for key, v in top["score"].items() if key != "per_item"}
    if isinstance(top.get("contamination"), dict):
        top["contamination"] = {
            key: v for key, v in top["contamination"].items() if key != "flagged_items"
        }
    top_k = str(s.get("k", [1])[-1])
    rows = s.get("per_item") or []
    open_rows = (s.get("score") or {}).get("per_item") or []
    problems = {
        "public_id": [r["public_id"] for r in rows],
        "pass": {k: [r["pass"].get(k) for r in rows] for k in sorted({"1", top_k})},
        "contaminated": [r.get("contaminated") for r in rows],
        "origin": [r.get("origin") for r in rows],
        "difficulty": [r.get("difficulty") for r in rows],
        "scored": [bool(r.get("scored")) for r in rows],
        "open": {
            "public_id": [r["public_id"] for r in open_rows],
            "avg": [r["avg"].get(top_k) for r in open_rows],
            "best": [r["best"].get(top_k) for r in open_rows],
        },
    }
    return top, problems


def _arrays_readable(problems) -> bool:
    """Stored per-problem arrays (``figures_of``) of the shape a window reads."""

    def numbers(values, size) -> bool:
        return (
            isinstance(values, list)
            and len(values) == size
            and all(v is None or summaries._number(v) for v in values)
        )

    if not isinstance(problems, dict):
        return False
    ids, passes, flat = problems.get("public_id"), problems.get("pass"), problems.get("open")
    if not isinstance(ids, list) or not isinstance(passes, dict) or not isinstance(flat, dict):
        return False
    size = len(ids)
    lists = [problems.get(key) for key in ("contaminated", "origin", "difficulty", "scored")]
    open_ids = flat.get("public_id")
    return (
        all(isinstance(v, list) and len(v) == size for v in lists)
        and all(numbers(v, size) for v in passes.values())
        and isinstance(open_ids, list)
        and all(numbers(flat.get(key), len(open_ids)) for key in ("avg", "best"))
    )


class _StoredRows:
    """A run's per-problem arrays (``figures_of``) read as its summary's rows, for
    ``_window_plan``: built only when a window is computed, not when the cache has it."""

    def __init__(self, problems: dict, top_k: str):
        self.problems = problems
        self.top_k = top_k

    def get(self, key: str, default=None):
        p = self.problems
        if key == "per_item":
            return [
                {
                    "public_id": public_id,
                    "pass": {k: values[i] for k, values in p["pass"].items()},
                    "contaminated": p["contaminated"][i],
                    "origin": p["origin"][i],
                    "difficulty": p["difficulty"][i],
                    "scored": p["scored"][i],
                }
                for i, public_id in enumerate(p["public_id"])
            ]
        if key == "score":
            flat = p["open"]
            rows = []
            for public_id, avg, best in zip(
                flat["public_id"], flat["avg"], flat["best"], strict=True
            ):
                rows.append(
                    {
                        "public_id": public_id,
                        "avg": {} if avg is None else {self.top_k: avg},
                        "best": {} if best is None else {self.top_k: best},
                    }
                )
            return {"per_item": rows}
        return default


@dataclass(frozen=True)
class _Slot:
    """Where an estimate goes in a window's scores: the column of values it is over."""

    column: int


def _window_plan(summary: dict, keep: set[str], top_k: str, scored: set[str], columns: list):
    """A run's scores over the problems in ``keep`` with every estimate left as a ``_Slot``
    into ``columns`` (the values it is the mean of, appended here); None where no values."""

    def slot(values: list[float]):
        if not values:
            return None
        columns.append(values)
        return _Slot(len(columns) - 1)

    rows = [
        r
        for r in summary.get("per_item") or []
        if r["public_id"] in keep and r["public_id"] not in scored and not r.get("scored")
    ]

    def passes(subset, k="1"):
        return [r["pass"].get(k) for r in subset if r["pass"].get(k) is not None]

    out: dict = {
        "pass1": slot(passes(rows)),
        "passk": slot(passes(rows, top_k)),
        "clean": slot(passes([r for r in rows if r.get("contaminated") is False])),
        "flagged": sum(1 for r in rows if r.get("contaminated")),
        "breakdown": {"origin": {}, "difficulty": {}},
    }
    for group in ("origin", "difficulty"):
        names = sorted({r.get(group) or "unlabelled" for r in rows})
        out["breakdown"][group] = {
            name: slot(passes([r for r in rows if (r.get(group) or "unlabelled") == name]))
            for name in names
        }
    score = summary.get("score") or {}
    open_rows = [r for r in score.get("per_item") or [] if r["public_id"] in keep]
    out["avgk"] = slot([r["avg"][top_k] for r in open_rows if top_k in r["avg"]])
    out["bestk"] = slot([r["best"][top_k] for r in open_rows if top_k in r["best"]])
    return out


def _filled(value, estimates: list):
    if isinstance(value, _Slot):
        return estimates[value.column].to_dict()
    if isinstance(value, dict):
        return {key: _filled(v, estimates) for key, v in value.items()}
    return value


def _windowed_many(wanted: list[tuple], load=None) -> list[dict | None]:
    """The scores of each ``(run, summary, keep, top_k, scored)`` over the problems in ``keep``
    (public ids), cached per run and window in the shared cache: the pass@ figures over its
    pass/fail problems, Avg@k and Best@k over its ``scored`` ones. The runs not in the cache
    are estimated together, per bootstrap seed (``stats.bootstrap_means``: one matrix product
    for the columns of one length, the same intervals as one by one). ``load`` (optional)
    reads the rows of the runs the cache lacks, by run id, in one go (``_stored_rows``): then
    a run it gives None for has no scores (None)."""
    keys = [_window_key(run, keep) for run, _summary, keep, *_rest in wanted]
    found = cache.get_many(keys)
    out: list[dict | None] = [found.get(key) for key in keys]
    missing: dict[int, list[int]] = {}
    for index, (run, *_rest) in enumerate(wanted):
        if out[index] is None:
            missing.setdefault(run.bootstrap_seed, []).append(index)
    loaded = {}
    if load is not None and missing:
        loaded = load([wanted[i][0].pk for indices in missing.values() for i in indices])
    for seed, indices in missing.items():
        if load is not None:
            indices = [i for i in indices if loaded.get(wanted[i][0].pk) is not None]
        columns: list[list[float]] = []
        plans = [
            _window_plan(
                loaded[wanted[i][0].pk] if load is not None else wanted[i][1],
                *wanted[i][2:],
                columns,
            )
            for i in indices
        ]
        estimates = bootstrap_means(columns, seed=seed)
        for index, plan in zip(indices, plans, strict=True):
            out[index] = _filled(plan, estimates)
            cache.set(keys[index], out[index], CACHE_SECONDS)
    return out


def _stored_rows(runs: list, fallback: dict) -> callable:
    """``load`` for ``_windowed_many``: the rows of the runs asked, from their stored
    per-problem arrays (one query; ``_StoredRows``), or from the whole summaries in
    ``fallback`` (runs without stored figures); None for arrays that are unreadable."""

    def load(run_ids: list[int]) -> dict:
        top_k = {run.pk: run._board_top_k for run in runs}
        wanted = [pk for pk in run_ids if pk not in fallback]
        out = {pk: fallback[pk] for pk in run_ids if pk in fallback}
        stored = LeaderboardRunFigures.objects.filter(run_id__in=wanted)
        for run_id, problems in stored.values_list("run_id", "problems"):
            if _arrays_readable(problems):
                out[run_id] = _StoredRows(problems, top_k[run_id])
        return out

    return load


def _windowed(run, summary: dict, keep: set[str], top_k: str, scored: set[str]) -> dict:
    """One run's scores over the problems in ``keep`` (``_windowed_many``)."""
    return _windowed_many([(run, summary, keep, top_k, scored)])[0]


def _unavailable(row: dict) -> dict:
    """The row of a run whose stored summary cannot be read: its model, no scores."""
    row.update(
        {
            "available": False,
            "infra_errors": 0,
            "k": "1",
            "pass1": None,
            "passk": None,
            "clean": None,
            "flagged": 0,
            "breakdown": {},
            "avg1": None,
            "avgk": None,
            "bestk": None,
        }
    )
    return row


def _has_figures(run) -> bool:
    try:
        run.figures  # noqa: B018 (select_related's row, or none)
    except LeaderboardRunFigures.DoesNotExist:
        return False
    return True


def _window_request(run, s: dict | None, items: dict, after: date | None, scored: set[str]):
    """``(run, summary, keep, top_k, scored)`` when the run's row is computed from its
    per-problem results (a date window, or a summary from before scored problems were set
    apart), else None (the stored summary is the row)."""
    if s is None or (after is None and ("pass_fail_problems" in s or not scored)):
        return None
    if after is None:  # summarised with its scored problems counted as failed passes
        keep = set(items)
    else:
        keep = {pid for pid, day in items.items() if day is not None and day >= after}
    return (run, s, keep, str(s.get("k", [1])[-1]), scored)


def _row(run, s: dict | None, after: date | None, windowed: dict | None) -> dict:
    """The run's row from its readable summary ``s`` (None: unavailable) and, when its scores
    were computed over a window, those (``windowed``)."""
    row = {
        "run_id": run.pk,
        "model": run.label,
        "source": run.get_source_display(),
        "model_release_date": run.model_release_date,
        "samples": run.samples_per_problem,
        "finished_at": run.finished_at,
        "windowed": after is not None,
        "available": True,
    }
    if s is None:
        return _unavailable(row)
    ks = s.get("k", [1])
    top_k = str(ks[-1])
    # Failed model calls asked again: never counted as a sample (releases.leaderboard).
    row.update({"infra_errors": s.get("infra_errors", 0), "k": top_k})
    score = s.get("score") or {}
    if windowed is None:
        row.update(
            {
                "pass1": (s.get("pass") or {}).get("1"),
                "passk": (s.get("pass") or {}).get(top_k),
                "clean": (s.get("contamination") or {}).get("clean_pass1"),
                "flagged": (s.get("contamination") or {}).get("flagged", 0),
                "breakdown": s.get("breakdown", {}),
                "avg1": (score.get("avg") or {}).get("1"),
                "avgk": (score.get("avg") or {}).get(top_k),
                "bestk": (score.get("best") or {}).get(top_k),
            }
        )
    else:
        row.update(windowed)
        row["avg1"] = (score.get("avg") or {}).get("1") if after is None else None
    if run.model_release_date is None:
        # No date, no contamination check: the column says so instead of a blank.
        row["clean"] = None
    return row


def _sort_value(row: dict, sort: str):
    if sort == "model":
        return row["model"].lower()
    if sort == "released":
        released = row["model_release_date"]
        return released.toordinal() if released else -1
    if sort.startswith(("d:", "o:")):
        group = "difficulty" if sort[0] == "d" else "origin"
        value = (row.get("breakdown") or {}).get(group, {}).get(sort[2:])
    else:
        value = row.get(sort)
    return -1.0 if value is None else value["value"]


def build(
    *,
    release: Release,
    sort: str = "pass1",
    descending: bool = True,
    after: date | None = None,
    model: str = "",
    blind: bool = False,
) -> Board:
    """The leaderboard of a published release under the given controls. ``blind`` (a problem
    of the release is under blind review, ``releases.blinding``) leaves out what splits the
    release by origin: the pass@1 by difficulty and by origin (no column, no sort key, nothing
    in the rows), and everything resting on the problems' dates, since a seed's date is its
    contest's and an evolution's the day it was made: no date window (``after`` is not
    applied, no dates are listed), no after-release pass@1 and no count of flagged problems."""
    model = (model or "").strip()
    if blind:
        after = None
    board = Board(
        rows=[], sort="pass1", descending=descending, after=after, model=model, blind=blind
    )
    if release.state != ReleaseState.PUBLISHED:
        return board
    items, scored = {}, set()
    for public_id, created, comparison in release.items.values_list(
        "public_id", "created_on", "record__comparison"
    ):
        items[public_id] = created.date() if created else None
        if scoring.is_scored(comparison):
            scored.add(public_id)
    if not blind:
        board.dates = sorted({d for d in items.values() if d is not None})
        board.undated = sum(1 for d in items.values() if d is None)
    in_view = [pid for pid, d in items.items() if after is None or (d and d >= after)]
    board.problems = len(in_view)
    board.scored_problems = sum(1 for pid in in_view if pid in scored)
    board.pass_fail_problems = board.problems - board.scored_problems
    if not blind:
        board.difficulties = _order_difficulties(
            {d or "unlabelled" for d in release.items.values_list("difficulty", flat=True)}
        )
        board.origins = sorted(set(release.items.values_list("origin", flat=True)))
    # Every model's name for the filter's list, but only the shown runs' summaries (each holds
    # a row per problem: hundreds of kilobytes on a release of LiveCodeBench's size).
    completed = release.runs.filter(state=RunState.COMPLETED).order_by("pk")
    labels = list(completed.values_list("pk", "label"))
    board.models = sorted({label for _, label in labels}, key=str.lower)
    needle = model.lower()
    shown = [pk for pk, label in labels if needle in label.lower()]
    chosen = completed.filter(pk__in=shown) if len(shown) < len(labels) else completed
    # Each run's top-level figures only (LeaderboardRunFigures): not its summary, nor its
    # per-problem values, which a window reads for the runs the cache lacks (``_stored_rows``).
    runs = list(chosen.select_related("figures").defer("summary", "figures__problems"))
    stored = {run.pk: run.figures for run in runs if _has_figures(run)}
    # A run completed without stored figures (none is, since migration 0015) is read whole.
    fallback = (
        {
            pk: summaries.readable(summary)
            for pk, summary in completed.filter(
                pk__in=[run.pk for run in runs if run.pk not in stored]
            ).values_list("pk", "summary")
        }
        if len(stored) < len(runs)
        else {}
    )
    readable = [
        summaries.readable(stored[run.pk].summary) if run.pk in stored else fallback[run.pk]
        for run in runs
    ]
    requests = [
        _window_request(r, s, items, after, scored) for r, s in zip(runs, readable, strict=True)
    ]
    for run, s in zip(runs, readable, strict=True):
        run._board_top_k = str(s.get("k", [1])[-1]) if s is not None else "1"
    asked = [request for request in requests if request is not None]
    computed = iter(_windowed_many(asked, load=_stored_rows(runs, fallback)))
    rows = []
    for run, s, request in zip(runs, readable, requests, strict=True):
        windowed = next(computed) if request is not None else None
        # Per-problem values that cannot be read: the row is unavailable, as its summary's.
        rows.append(_row(run, None if request and windowed is None else s, after, windowed))
    for row in rows:
        if blind:
            row.update(breakdown={}, clean=None, flagged=None)
        breakdown = row.get("breakdown") or {}
        row["by_difficulty"] = [breakdown.get("difficulty", {}).get(d) for d in board.difficulties]
        row["by_origin"] = [breakdown.get("origin", {}).get(o) for o in board.origins]
    board.scored = bool(board.scored_problems) or any(r.get("avgk") for r in rows)
    board.sort = sort if sort in board.sort_keys() else "pass1"
    rows.sort(key=lambda r: _sort_value(r, board.sort), reverse=descending)
    board.rows = rows
    return board


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    title: str
    href: str
    current: bool
    descending: bool

    @property
    def aria_sort(self) -> str:
        return ("descending" if self.descending else "ascending") if self.current else "none"


def _query(**params) -> str:
    return "?" + urlencode({k: v for k, v in params.items() if v})


def columns(board: Board) -> dict[str, Column]:
    """Every sortable column by key, with the link that sorts by it (the other controls
    kept; the current column's link flips its direction)."""
    after = board.after.isoformat() if board.after else ""
    specs = {
        "model": ("Model", "the model's name"),
        "released": ("Model released", "the model's release date, when known"),
        "pass1": (
            "pass@1",
            "mean over the pass/fail problems of the share of samples that pass every test "
            "(open-ended problems are scored apart: Avg@k)",
        ),
        "passk": ("pass@k", "unbiased pass@k at the run's largest k, over the pass/fail problems"),
        "clean": (
            "pass@1 after release",
            "pass@1 on the pass/fail problems released after the model, which it cannot have seen",
        ),
        "avgk": ("Avg@k", "mean verifier score of the first k samples (open-ended problems)"),
        "bestk": ("Best@k", "best verifier score among the first k samples (open-ended problems)"),
    }
    for d in board.difficulties:
        specs[f"d:{d}"] = (d.capitalize(), f"pass@1 on the {d} problems")
    for o in board.origins:
        specs[f"o:{o}"] = (o.capitalize(), f"pass@1 on the {o} problems")
    out = {}
    for key, (label, title) in specs.items():
        current = board.sort == key
        if current:
            descending = not board.descending
        else:
            descending = key not in ("model",)
        out[key] = Column(
            key=key,
            label=label,
            title=title,
            href=_query(
                after=after, model=board.model, sort=key, dir="desc" if descending else "asc"
            ),
            current=current,
            descending=board.descending,
        )
    return out
