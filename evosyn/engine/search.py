"""MAP-Elites over islands (seed 001, section 3.1): the archive the strategy search keeps.

Each island holds a grid of cells; a cell keeps its best strategy (the elite). Features are
(code length, discrimination): how long the program is, and on how many seed instances its top
test separates solutions at all. Every ``migration_interval`` iterations each island's best
strategy is offered to the next island. Plain data in, plain data out: the archive is a JSON
document stored on the campaign.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

LENGTH_EDGES = (600, 1200, 2400, 4800, 9600, 19200, 38400, 76800, 153600)


@dataclass(frozen=True)
class Elite:
    strategy_id: int
    score: float
    cell: str


def features(code: str, checks: list[dict], matrices: list[list[list[int]]], bins: int) -> str:
    """The strategy's MAP-Elites cell, "length_bin:discrimination_bin"."""
    length_bin = min(bins - 1, sum(1 for edge in LENGTH_EDGES[: bins - 1] if len(code) >= edge))
    discriminating = 0
    for check, matrix in zip(checks, matrices, strict=False):
        t = check.get("top_test")
        if t is None or not matrix:
            continue
        column = {row[t] for row in matrix}
        discriminating += len(column) > 1
    share = discriminating / len(checks) if checks else 0.0
    disc_bin = min(bins - 1, int(share * bins))
    return f"{length_bin}:{disc_bin}"


def empty_archive(islands: int) -> dict:
    return {"islands": [{} for _ in range(islands)], "migrations": []}


def insert(archive: dict, island: int, elite: Elite) -> bool:
    """Place ``elite`` in its cell of ``island`` if the cell is empty or holds a lower score
    (ties keep the incumbent: the older program survived longer). True when placed."""
    cells = archive["islands"][island]
    current = cells.get(elite.cell)
    if current is not None and current["score"] >= elite.score:
        return False
    cells[elite.cell] = {"strategy": elite.strategy_id, "score": elite.score}
    return True


def island_elites(archive: dict, island: int) -> list[Elite]:
    cells = archive["islands"][island]
    elites = [Elite(v["strategy"], v["score"], cell) for cell, v in cells.items()]
    return sorted(elites, key=lambda e: (-e.score, e.strategy_id))


def select_parent(
    archive: dict, island: int, *, exploitation_ratio: float, rng: random.Random
) -> tuple[Elite | None, str]:
    """The parent and how it was chosen: with probability ``exploitation_ratio`` the island's
    best elite ("exploit"), else a random elite of the island's archive ("explore"); (None,
    "empty") when the island holds nothing yet. Either way the parent comes from the archive."""
    elites = island_elites(archive, island)
    if not elites:
        return None, "empty"
    if rng.random() < exploitation_ratio:
        return elites[0], "exploit"
    return rng.choice(elites), "explore"


def choose_parent(
    archive: dict, island: int, *, exploitation_ratio: float, rng: random.Random
) -> Elite | None:
    """Exploit the island's best with probability ``exploitation_ratio``, else explore a
    random elite of the island."""
    return select_parent(archive, island, exploitation_ratio=exploitation_ratio, rng=rng)[0]


def inspirations(archive: dict, island: int, parent: Elite | None, k: int = 3) -> list[Elite]:
    """The island's other top elites, shown to the mutator next to the parent (3, the
    ``num_top_programs`` of the document's released configuration)."""
    return [
        e
        for e in island_elites(archive, island)
        if not parent or e.strategy_id != parent.strategy_id
    ][:k]


def migrate(archive: dict, iteration: int) -> list[dict]:
    """Ring migration: each island's best is offered to the next island. Returns what moved."""
    n = len(archive["islands"])
    if n < 2:
        return []
    bests = [island_elites(archive, i)[:1] for i in range(n)]
    moved = []
    for i, best in enumerate(bests):
        if not best:
            continue
        target = (i + 1) % n
        if insert(archive, target, best[0]):
            moved.append(
                {"iteration": iteration, "from": i, "to": target, "strategy": best[0].strategy_id}
            )
    archive["migrations"] = [*archive.get("migrations", []), *moved]
    return moved
