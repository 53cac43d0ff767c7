"""A screen in words, for the ledger, the pages, the gate and the release card. Pure: plain
dicts in the form ``services.screen_record`` documents, no database."""

from __future__ import annotations

__all__ = [
    "RECOMMENDED_MAX_SIMILARITY",
    "before",
    "corpora_text",
    "nearest_text",
    "neighbour_text",
    "shown_neighbours",
]

# The gate's ``max_public_similarity`` that the labelled sets recommend (docs/screening.md,
# "Precision and recall"): a release sets its own, and the rule is off by default.
RECOMMENDED_MAX_SIMILARITY = 0.3


def corpora_text(summary: dict) -> str:
    """ "168 public problems: humaneval 164, livecodebench 4 (dated 2023-07-01 to 2023-08-20)"."""
    corpora = summary.get("corpora") or {}
    if not corpora:
        return "no public problem indexed"
    parts = []
    for name, c in sorted(corpora.items()):
        dated = f" (dated {c['first']} to {c['last']})" if c.get("first") else ""
        parts.append(f"{name} {c['problems']}{dated}")
    total = summary.get("problems", sum(c["problems"] for c in corpora.values()))
    return f"{total} public problem{'s' if total != 1 else ''}: " + ", ".join(parts)


def neighbour_text(n: dict) -> str:
    """ "humaneval HumanEval/12 (similarity 0.25: statement 0.24, code 0.25)"."""
    date = f", {n['date']}" if n.get("date") else ""
    return (
        f"{n['dataset']} {n['origin_id'] or n['public_id']}{date} (similarity "
        f"{n['similarity']:.2f}: statement {n['statement']:.2f}, code {n['code']:.2f})"
    )


def nearest_text(record: dict | None) -> str:
    """The nearest public problem in words, or why there is none."""
    if not record:
        return "not screened"
    if not (record.get("index") or {}).get("problems"):
        return "not screened: no public corpus is indexed"
    neighbours = record.get("neighbours") or []
    if not neighbours:
        return "no public problem shares a shingle with it"
    return "nearest public problem: " + neighbour_text(neighbours[0])


def before(record: dict | None, day: str) -> dict | None:
    """The most similar kept neighbour dated before ``day`` (ISO) or undated: a public problem
    whose date is unknown may be older, so a "newer than" claim counts it."""
    older = [
        n for n in (record or {}).get("neighbours") or [] if not n.get("date") or n["date"] < day
    ]
    return max(older, key=lambda n: n["similarity"], default=None)


def shown_neighbours(record: dict | None, threshold: float, *, nearest: int = 5) -> list[dict]:
    """The neighbours a page lists beside a problem: the ``nearest`` most similar and every
    other one at ``threshold`` or above, each with ``above`` (its similarity reaches the
    threshold, as the gate's rule counts it)."""
    neighbours = (record or {}).get("neighbours") or []
    return [
        {**n, "above": n["similarity"] >= threshold}
        for i, n in enumerate(neighbours)
        if i < nearest or n["similarity"] >= threshold
    ]
