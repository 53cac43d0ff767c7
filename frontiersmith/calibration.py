"""The labelled sets that measure the coarse filter, bundled with BenchForge.

``calibration_sets.json`` holds a few closed-ended problems (the filter should reject them) and
a few open-ended ones (it should accept them), all AUTHORED for BenchForge and labelled by
hand: not the paper's HardTests / FrontierCS problems, and far fewer of them. A campaign
created without a labelled set of its own uses the bundled one of that label (setting
``bundled_calibration``), so the filter's false-positive and false-negative rates show on the
campaign page and in the API from the first campaign on.

The problems are imported once, as seeds of origin dataset ``frontiersmith-calibration`` (their
origin ids name them in replay keys, so a cassette replays in any database).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from django.db import transaction

FILE = Path(__file__).resolve().parent / "calibration_sets.json"
ORIGIN_DATASET = "frontiersmith-calibration"
SET_NAMES = {"closed": "frontiersmith-calibration-closed", "open": "frontiersmith-calibration-open"}
SOURCE = "frontiersmith-bundled"
NOTE = (
    "bundled with BenchForge: problems authored and labelled by hand for it (not the paper's "
    "HardTests / FrontierCS sets, and far fewer), a first indication of the filter's errors"
)


@cache
def sets() -> dict[str, list[dict]]:
    """{"closed": [...], "open": [...]}: each problem's id, title and statement."""
    data = json.loads(FILE.read_text(encoding="utf-8"))
    return {label: data[label] for label in ("closed", "open")}


@transaction.atomic
def bundled_set(label: str):
    """The bundled labelled set of ``label`` ("closed" or "open"), imported if missing."""
    from evolution.models import Problem, ProblemSet  # the file itself is read without Django

    problem_set, _ = ProblemSet.objects.get_or_create(
        name=SET_NAMES[label],
        defaults={
            "description": f"{label}-ended problems for the FrontierSmith coarse filter; {NOTE}.",
            "source": SOURCE,
        },
    )
    problems = []
    for item in sets()[label]:
        problem, _ = Problem.objects.get_or_create(
            origin_dataset=ORIGIN_DATASET,
            origin_id=item["id"],
            defaults={
                "title": item["title"],
                "statement": item["statement"],
                "harness": "stdio",
                "metadata": {"calibration_label": label, "authored": True},
            },
        )
        problems.append(problem)
    problem_set.problems.add(*problems)
    return problem_set


def is_bundled(problem_set) -> bool:
    return problem_set is not None and problem_set.source == SOURCE
