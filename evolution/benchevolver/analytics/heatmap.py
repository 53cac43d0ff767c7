"""The trajectory heatmap (BenchEvolver Figure 10, Appendix H) as plain data.

One row per seed; column 0 is the seed's calibration, columns 1..R are the lineage's rounds in
chronological order. A cell carries passes / attempts pooled across the panel, the solve rate
that colours it, the decision (accepted cells lie on the dark lineage path; rejected cells are
drawn faint with their reason) and what the hover shows. Rounds a lineage never ran are absent
from its ``cells`` and drawn grey by the page.

Everything here is a pure function of dicts, so the selectors can cache the unfiltered rows
once and filter, sort and page them per request without touching the database again.
"""

from __future__ import annotations

from collections.abc import Iterable

# What a rejected cell is labelled with (Figure 10: "not harder", "judge"); "" is a candidate
# still in flight.
REASON_LABELS = {
    "accepted": "accepted",
    "not_harder": "not harder",
    "judge_rejected": "judge",
    "invalid": "invalid",
    "duplicate": "duplicate",
    "error": "error",
    "": "in flight",
}

# A row's outcome, for the outcome filter.
OUTCOMES = ("accepted", "none accepted", "running", "skipped", "failed")

SORTS = ("position", "gain")

IDEA_CHARS = 200
REASON_CHARS = 160


def _rate(passes: int | None, attempts: int | None) -> float | None:
    if not attempts:
        return None
    return round((passes or 0) / attempts, 4)


def cell_from_candidate(candidate: dict) -> dict:
    """One candidate as a heatmap cell. ``candidate`` holds id, round, decision, passes,
    attempts, level, family, idea and reason (the decision reason)."""
    decision = candidate.get("decision") or ""
    return {
        "r": candidate["round"],
        "id": candidate["id"],
        "d": decision,
        "label": REASON_LABELS.get(decision, decision),
        "p": candidate.get("passes"),
        "a": candidate.get("attempts"),
        "rate": _rate(candidate.get("passes"), candidate.get("attempts")),
        "lv": candidate.get("level"),
        "f": candidate.get("family") or "",
        "idea": (candidate.get("idea") or "")[:IDEA_CHARS],
        "why": (candidate.get("reason") or "")[:REASON_CHARS],
    }


def outcome_of(state: str | None, any_accepted: bool) -> str:
    """A row's outcome from its lineage's state and whether any of its rounds was accepted."""
    return _outcome({"state": state}, [True] if any_accepted else [])


def _outcome(lineage: dict, accepted_cells: list) -> str:
    state = lineage.get("state")
    if accepted_cells:
        return "accepted"
    if state == "skipped":
        return "skipped"
    if state == "failed":
        return "failed"
    if state in ("pending", "evolving"):
        return "running"
    return "none accepted"


def build_rows(lineages: Iterable[dict], candidates: Iterable[dict]) -> list[dict]:
    """Heatmap rows in lineage position order.

    ``lineages``: dicts with id, position, state, stop_reason, seed_passes, seed_attempts,
    seed_level and seed_public_id, seed_title, seed_difficulty. ``candidates``: dicts as
    ``cell_from_candidate`` takes them plus lineage_id. Candidates of unknown lineages are
    ignored.

    Each row's ``path`` is the accepted lineage: column 0 (the seed) then the rounds whose
    candidate was accepted. ``gain`` is the final accepted level minus the seed level (0 when
    nothing was accepted); ``rate_drop`` the seed's solve rate minus the final accepted one.
    """
    by_lineage: dict[int, list[dict]] = {}
    for c in candidates:
        by_lineage.setdefault(c["lineage_id"], []).append(cell_from_candidate(c))
    rows = []
    for lin in sorted(lineages, key=lambda item: (item["position"], item["id"])):
        cells = sorted(by_lineage.get(lin["id"], []), key=lambda cell: cell["r"])
        accepted = [cell for cell in cells if cell["d"] == "accepted"]
        seed_rate = _rate(lin.get("seed_passes"), lin.get("seed_attempts"))
        final = accepted[-1] if accepted else None
        gain = 0
        rate_drop = 0.0
        if final is not None:
            if final["lv"] is not None and lin.get("seed_level") is not None:
                gain = final["lv"] - lin["seed_level"]
            if final["rate"] is not None and seed_rate is not None:
                rate_drop = round(seed_rate - final["rate"], 4)
        rows.append(
            {
                "lineage": lin["id"],
                "position": lin["position"],
                "seed_id": lin.get("seed_public_id") or "",
                "label": lin.get("seed_title") or "",
                "difficulty": lin.get("seed_difficulty") or "",
                "state": lin.get("state") or "",
                "stop_reason": (lin.get("stop_reason") or "")[:REASON_CHARS],
                "outcome": _outcome(lin, accepted),
                "seed": {
                    "p": lin.get("seed_passes"),
                    "a": lin.get("seed_attempts"),
                    "rate": seed_rate,
                    "lv": lin.get("seed_level"),
                },
                "cells": cells,
                "path": [0] + [cell["r"] for cell in accepted],
                "gain": gain,
                "rate_drop": rate_drop,
                "families": sorted({cell["f"] for cell in cells if cell["f"]}),
            }
        )
    return rows


def filter_options(rows: list[dict]) -> dict:
    """The values each filter can take, from the unfiltered rows (so choices never vanish)."""
    return {
        "difficulties": sorted({r["difficulty"] for r in rows}),
        "families": sorted({f for r in rows for f in r["families"]}),
        "outcomes": [o for o in OUTCOMES if any(r["outcome"] == o for r in rows)],
        "sorts": list(SORTS),
    }


def filter_rows(
    rows: list[dict],
    *,
    difficulty: str | None = None,
    family: str | None = None,
    outcome: str | None = None,
) -> list[dict]:
    """Rows whose seed has ``difficulty``, that tried ``family`` in some round, whose outcome is
    ``outcome``; a filter left at None (or "") does not apply."""
    out = rows
    if difficulty:
        out = [r for r in out if r["difficulty"] == difficulty]
    if family:
        out = [r for r in out if family in r["families"]]
    if outcome:
        out = [r for r in out if r["outcome"] == outcome]
    return list(out)


def sort_rows(rows: list[dict], sort: str = "position") -> list[dict]:
    """``position``: the campaign's seed order. ``gain``: largest final difficulty gain first
    (level gain, then solve-rate drop), seed order breaking ties."""
    if sort == "gain":
        return sorted(rows, key=lambda r: (-r["gain"], -r["rate_drop"], r["position"]))
    return sorted(rows, key=lambda r: r["position"])


def max_round(rows: Iterable[dict]) -> int:
    return max((cell["r"] for r in rows for cell in r["cells"]), default=0)


def csv_rows(rows: list[dict]) -> list[dict]:
    """One CSV line per drawn cell (the seed's calibration is round 0)."""
    out = []
    for r in rows:
        base = {
            "lineage_id": r["lineage"],
            "seed_public_id": r["seed_id"],
            "seed_title": r["label"],
            "seed_difficulty": r["difficulty"],
            "outcome": r["outcome"],
        }
        seed = r["seed"]
        out.append(
            {
                **base,
                "round": 0,
                "candidate_id": "",
                "decision": "seed",
                "label": "seed",
                "passes": seed["p"],
                "attempts": seed["a"],
                "solve_rate": seed["rate"],
                "level": seed["lv"],
                "family": "",
                "on_accepted_path": True,
                "idea": "",
                "reason": "",
            }
        )
        for cell in r["cells"]:
            out.append(
                {
                    **base,
                    "round": cell["r"],
                    "candidate_id": cell["id"],
                    "decision": cell["d"],
                    "label": cell["label"],
                    "passes": cell["p"],
                    "attempts": cell["a"],
                    "solve_rate": cell["rate"],
                    "level": cell["lv"],
                    "family": cell["f"],
                    "on_accepted_path": cell["d"] == "accepted",
                    "idea": cell["idea"],
                    "reason": cell["why"],
                }
            )
    return out
