"""The index of the public corpora: each import adds its seeds, a changed problem is hashed again
and every process sees it, a rebuild restores it; a screen sets the problem's own lineage apart."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evolution.importers import import_seeds
from evolution.models import Problem
from evolution.screening import index, services
from evolution.screening.models import IndexedProblem, ProblemScreen
from tests.evolution.benchevolver import lcb_world
from tests.factories import EvolvedProblemFactory, ProblemFactory

pytestmark = pytest.mark.django_db

SHORT_SORT_SOLUTION = (
    json.dumps({"question_id": lcb_world.SHORT_SORT_ID, "solution": lcb_world.SHORT_SORT_OK}) + "\n"
)


def _short_sort_rewrite() -> dict:
    from .recall_world import recalled_entry

    entry = recalled_entry()
    return {"statement": entry.statement, "code": entry.code}


def test_each_import_adds_its_seeds_and_a_reimport_changes_nothing():
    import_seeds(source="humaneval")
    rows = {r.problem.origin_id: r for r in IndexedProblem.objects.select_related("problem")}
    assert len(rows) == 164
    assert all(r.code_shingles > 0 and r.statement_shingles > 0 for r in rows.values())
    assert {r.origin_dataset for r in rows.values()} == {"humaneval"}
    assert rows["HumanEval/0"].published_on is None  # HumanEval carries no dates
    summary = services.index_summary()
    assert summary["problems"] == 164
    assert summary["corpora"] == {
        "humaneval": {"problems": 164, "dated": 0, "first": None, "last": None}
    }

    before = set(IndexedProblem.objects.values_list("id", flat=True))
    import_seeds(source="humaneval")
    assert set(IndexedProblem.objects.values_list("id", flat=True)) == before

    # The LiveCodeBench record publishes no reference: only its statement is indexed; dated.
    import_seeds(source="lcb", path=str(lcb_world.SAMPLE), set_name="lcb")
    row = IndexedProblem.objects.get(origin_id="1873_A")
    assert (row.origin_dataset, str(row.published_on)) == ("livecodebench", "2023-08-21")
    assert row.code_signature is None and row.code_shingles == 0
    assert services.index_summary()["corpora"]["livecodebench"] == {
        "problems": 1,
        "dated": 1,
        "first": "2023-08-21",
        "last": "2023-08-21",
    }


def test_a_changed_problem_is_indexed_again_and_the_next_screen_sees_it():
    import_seeds(source="lcb", path=str(lcb_world.SAMPLE), set_name="lcb")
    rewrite = _short_sort_rewrite()
    first = services.screen_record(**rewrite)
    (n,) = [n for n in first["neighbours"] if n["origin_id"] == "1873_A"]
    assert n["code"] == 0.0 and n["statement"] > 0.1  # no reference to compare the code with
    old_row = IndexedProblem.objects.get(origin_id="1873_A").pk

    # The same record with its reference solution: the problem changed, its row is written anew.
    import_seeds(
        source="lcb",
        path=str(lcb_world.SAMPLE),
        solutions_content=SHORT_SORT_SOLUTION,
        set_name="lcb",
    )
    row = IndexedProblem.objects.get(origin_id="1873_A")
    assert row.pk > old_row and row.code_shingles > 0
    matrix, state = index.current()  # this process's matrix caught up with the stored index
    assert len(matrix) == state.rows == 1 and int(matrix.row_ids[0]) == row.pk
    second = services.screen_record(**rewrite)
    assert second["neighbours"][0]["origin_id"] == "1873_A"
    assert second["neighbours"][0]["code"] == 1.0 and second["max_similarity"] == 1.0
    assert second["index"]["version"] != first["index"]["version"]


def test_rebuild_restores_the_index_and_drops_problems_that_are_not_seeds(capsys):
    import_seeds(source="humaneval")
    IndexedProblem.objects.filter(problem__origin_id__in=["HumanEval/1", "HumanEval/2"]).delete()
    # A problem that stopped being a seed (its row must go).
    gone = Problem.objects.get(origin_id="HumanEval/3")
    Problem.objects.filter(pk=gone.pk).update(kind="evolved", parent=Problem.objects.first())
    report = services.rebuild()
    assert (report.added, report.removed, report.updated) == (2, 1, 0)
    assert report.unchanged == 161
    assert IndexedProblem.objects.count() == 163
    assert not IndexedProblem.objects.filter(problem=gone).exists()

    call_command("screening_index", "--rebuild")
    out = capsys.readouterr().out
    assert "rebuilt: 0 added, 0 updated, 163 unchanged, 0 removed" in out
    assert "index: 163 public problems: humaneval 163" in out
    assert "method: datasketch MinHash (128 permutations)" in out


def test_a_screen_sets_the_problems_own_lineage_apart():
    import_seeds(source="humaneval")
    seed = Problem.objects.get(origin_id="HumanEval/0")
    # The same problem published again in another corpus: a copy of the seed, not a recall.
    copy = ProblemFactory(
        origin_dataset="apps",
        origin_id="copy-of-0",
        statement=seed.statement,
        reference_solution=seed.reference_solution,
    )
    services.index_problems([copy])
    # An evolution of HumanEval/0 that kept its code, and one that took HumanEval/12's.
    kept = EvolvedProblemFactory(
        parent=seed, statement="Count close pairs.", reference_solution=seed.reference_solution
    )
    other = Problem.objects.get(origin_id="HumanEval/12")
    recalled = EvolvedProblemFactory(
        parent=kept, statement="Longest string.", reference_solution=other.reference_solution
    )

    record = services.screen_problem(kept, context="command").record
    assert [(n["origin_id"], n["relation"]) for n in record["lineage"]] == [
        ("HumanEval/0", "its seed"),
        ("copy-of-0", "copy of its seed"),
    ]
    assert all(n["origin_id"] not in ("HumanEval/0", "copy-of-0") for n in record["neighbours"])
    assert record["lineage"][0]["code"] == 1.0
    assert record["max_similarity"] < 0.5

    screen = services.screen_problem(recalled, context="measurement")
    assert screen.record["neighbours"][0]["origin_id"] == "HumanEval/12"
    assert screen.max_similarity == 1.0
    assert ProblemScreen.objects.get(problem=recalled).context == "measurement"
    # The gate reads the stored screen while the index is unchanged, and screens again after.
    assert services.screens_for([recalled])[recalled.pk] == screen.record
    import_seeds(source="lcb", path=str(lcb_world.SAMPLE), set_name="lcb")
    again = services.screens_for([recalled])[recalled.pk]
    assert (
        again["index"]["problems"] == 166 and again["screened_at"] >= screen.record["screened_at"]
    )
    assert ProblemScreen.objects.get(problem=recalled).context == "gate"


def test_an_empty_index_screens_nothing():
    problem = EvolvedProblemFactory()
    record = services.screen_problem(problem, context="gate").record
    assert record["index"]["problems"] == 0 and record["neighbours"] == []
    assert record["max_similarity"] == 0.0
    assert services.ledger_entry(record)["outcome"] == "not screened: no public corpus is indexed"
