"""Each chart's data as flat rows, for CSV downloads (pure functions)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable


def pass_rates_rows(data: dict) -> list[dict]:
    return list(data["rows"])


def yield_rows(data: dict) -> list[dict]:
    return list(data["rows"])


def funnel_rows(data: dict) -> list[dict]:
    rows = [
        {"kind": "stage", "key": s["stage"], "label": s["label"], "count": s["count"]}
        for s in data["stages"]
    ]
    rows += [
        {
            "kind": "reason",
            "key": r["decision"],
            "label": r["reason"],
            "count": r["count"],
            "example_candidate": r["example"],
        }
        for r in data["reasons"]
    ]
    return rows


def cost_rows(data: dict) -> list[dict]:
    total = {k: v for k, v in data.items() if k != "roles"}
    return [{"role": "all", **total}, *data["roles"]]


def families_rows(data: dict) -> list[dict]:
    rows = []
    for family in data["families"]:
        for i, rnd in enumerate(data["rounds"]):
            rows.append(
                {
                    "round": rnd,
                    "family": family,
                    "proposed": data["proposed"][family][i],
                    "accepted": data["accepted"][family][i],
                }
            )
    return rows


def categories_rows(data: dict) -> list[dict]:
    return list(data["rows"])


def ratings_rows(data: dict) -> list[dict]:
    rows = []
    for dim, panel in data["dimensions"].items():
        for i, b in enumerate(panel["bins"]):
            rows.append(
                {
                    "dimension": dim,
                    "bin": b,
                    "seed_problems": panel["seed"][i],
                    "evolved_problems": panel["evolved"][i],
                }
            )
    return rows


def new_categories_rows(data: dict) -> list[dict]:
    return [
        {
            "lineage": r["lineage"],
            "seed_title": r["seed_title"],
            "seed_tags": "; ".join(r["seed_tags"]),
            "evolved_tags": "; ".join(r["evolved_tags"]),
            "new_tags": "; ".join(r["new_tags"]),
            "new": r["new"],
        }
        for r in data["rows"]
    ]


ROWS = {
    "pass_rates": pass_rates_rows,
    "yield": yield_rows,
    "funnel": funnel_rows,
    "cost": cost_rows,
    "families": families_rows,
    "categories": categories_rows,
    "ratings": ratings_rows,
    "new_categories": new_categories_rows,
}

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value) -> str:
    if value is None:
        return ""
    text = str(value)
    # Free text (ideas, reasons, titles) comes from model output: keep a spreadsheet from
    # reading it as a formula. Numbers stay numbers.
    if text.startswith(_FORMULA_START) and not isinstance(value, int | float):
        return "'" + text
    return text


def to_csv(rows: Iterable[dict]) -> str:
    """CSV text with a header of every key in first-seen order."""
    rows = list(rows)
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([_cell(row.get(c)) for c in columns])
    return buffer.getvalue()
