"""X-Coder as its document describes it (issue 17): a campaign on the document's defaults, over
the loopback model server, every program run in the sandbox.

- tool-based tests by default (Table 5 prefers them): a CYaRon generator, run sandboxed with
  the library shipped along, writes one ``.in`` file per test; a stress file above the judge's
  1 MB default is kept in a file, voted on and becomes a hidden test;
- n = 8 candidates spread over the solver endpoints; the think/answer tag filter (C.1 (i));
- evolve-then-merge (B.1): each seed's features are evolved by a call that sees only that
  seed's tree, then merged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from evolution.llm.parsing import ParseError
from evolution.models import Problem
from evolution.models.campaigns import CampaignState
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from xcoder import selectors, services
from xcoder.config import XcoderSettings
from xcoder.engine import cyaron
from xcoder.models import CandidateSolution, EvolutionStep, FeatureNode, NodeOrigin, SynthTask
from xcoder.models import TaskStatus as T
from xcoder.stages.solve import solution_gate
from xcoder.stages.testfiles import text_of

from .helpers import (
    CORRECT,
    CORRECT_B,
    EXTRACTIONS,
    SEED_MAX,
    SEED_SUM,
    WRONG_LARGE,
    Responder,
    endpoint,
    seed_set,
    tagged,
    task_answer,
)

# Evolve-then-merge: each seed's own tree, evolved (depth under its leaves, breadth beside).
SEED_EVOLUTIONS = {
    SEED_SUM: {
        "algorithm": {"selection methods": {"partial ordering": ["quickselect partitioning"]}},
        "data structures": ["binary heap", "pairing heap"],
        "problem type": ["array aggregation"],
    },
    SEED_MAX: {
        "algorithm": {"scanning": ["running maximum", "running minimum"]},
        "data structures": {"double-ended queue": ["monotone deque"]},
        "problem type": ["array aggregation", "window queries"],
    },
}

# A CYaRon generator as the D.2 prompt asks for it: one .in file per test, named by category.
# The stress file holds 200,000 offers of up to 10^9 (about 2 MB: twice the judge's default
# output cap, the document's sizes).
CYARON_GENERATOR = """```python
import argparse
import random

from cyaron import IO, Vector

parser = argparse.ArgumentParser()
parser.add_argument('--seed', type=int, default=42, help='Random seed for reproducibility')
args = parser.parse_args()
random.seed(args.seed)

# nominal: a handful of small offers, half of them accepted
with IO("nominal_small_random.in", disable_output=True) as io:
    io.input_writeln(6, 3)
    io.input_writeln([random.randint(0, 100) for _ in range(6)])
# boundary: one offer, accepted
with IO("boundary_single_offer.in", disable_output=True) as io:
    io.input_writeln(1, 1)
    io.input_writeln(7)
# complex: distinct offers from CYaRon's vector generator, most accepted
with IO("complex_distinct_offers.in", disable_output=True) as io:
    offers = [v[0] for v in Vector.random(12, [(0, 1000)])]
    io.input_writeln(12, 9)
    io.input_writeln(offers)
# stress: the largest input the constraints allow
with IO("stress_max_n.in", disable_output=True) as io:
    n = 200000
    io.input_writeln(n, n // 2)
    io.input_writeln([random.randint(0, 10**9) for _ in range(n)])
```"""

NO_THINK = CORRECT.split("</think>\n", 1)[1]  # the right code, but no reasoning block


def table() -> dict:
    t: dict = {}
    for seed, features in EXTRACTIONS.items():
        t[("xcoder_extract", f"xcoder;extract;seed={seed};role=xcoder_extract")] = tagged(features)
        t[("xcoder_evolve", f"xcoder;evolve;round=1;seed={seed};role=xcoder_evolve")] = tagged(
            SEED_EVOLUTIONS[seed]
        )
    t[("xcoder_write", "xcoder;task=0;write;style=codeforces;role=xcoder_write")] = task_answer()
    t[("xcoder_generator", "xcoder;task=0;generator;role=xcoder_generator")] = CYARON_GENERATOR
    answers = {
        "solver-a": [CORRECT, CORRECT_B, CORRECT, NO_THINK],
        "solver-b": [WRONG_LARGE, CORRECT_B, CORRECT, WRONG_LARGE],
    }
    for name, contents in answers.items():
        for sample, content in enumerate(contents):
            t[
                (
                    "xcoder_solver",
                    f"xcoder;task=0;solve;endpoint={name};sample={sample};role=xcoder_solver",
                )
            ] = content
    return t


class Recording(Responder):
    """The scripted answers, keeping each evolution prompt."""

    def __init__(self, table):
        super().__init__(table)
        self.evolution_prompts: dict[str, str] = {}

    def __call__(self, body, headers):
        key = headers.get("X-BenchForge-Key", headers.get("x-benchforge-key", ""))
        if ";evolve;" in key:
            self.evolution_prompts[key] = body["messages"][-1]["content"]
        return super().__call__(body, headers)


def test_the_settings_default_to_the_documents_choices():
    s = XcoderSettings()
    assert s.test_mode == "generator"  # Table 5: tool-based beats prompting-based
    assert s.candidates == 8 and s.candidates_per_endpoint == 0  # n = 8 (Tables 13, 17)
    assert s.samples_per_endpoint(2) == [4, 4] and s.samples_per_endpoint(3) == [3, 3, 2]
    assert s.evolution_scope == "seed"  # B.1: evolve, then merge
    assert s.think_tags == "required"  # C.1 (i)
    assert XcoderSettings(candidates_per_endpoint=2).samples_per_endpoint(3) == [2, 2, 2]


@pytest.mark.parametrize(
    ("content", "refusal"),
    [
        ("```python\nprint(1)\n```", "no <think> reasoning block"),
        ("<think>\nlong reasoning cut short", "never closed"),
        ("<think>a</think><think>b</think>\n```python\nprint(1)\n```", "exactly one block"),
        ("Sure.\n<think>a</think>\n```python\nprint(1)\n```", "text before"),
        ("<think>a</think>\n<answer>\n```python\nprint(1)\n```", "<answer> block is never"),
        ("<think>a</think>\n   ", "nothing after"),
        ("<think>a</think>\n```python\nprint(1)\n```\n```python\nprint(2)\n```", "exactly one"),
    ],
)
def test_the_tag_filter_refuses_answers_without_complete_think_and_answer_tags(content, refusal):
    code, reason = solution_gate(content, tokens_out=50, max_tokens=25000, think_tags="required")
    assert code == "" and refusal in reason


def test_the_tag_filter_takes_the_code_from_the_answer_part_only():
    content = (
        "<think>\nA first try:\n```python\nprint('draft')\n```\nNo, sort first.\n</think>\n"
        "<answer>\n```python\nprint('final')\n```\n</answer>"
    )
    code, reason = solution_gate(content, tokens_out=50, max_tokens=25000, think_tags="required")
    assert reason == "" and code.strip() == "print('final')"
    # Without the filter the same answer has two code blocks and is refused for that.
    code, reason = solution_gate(content, tokens_out=50, max_tokens=25000, think_tags="off")
    assert code == "" and "exactly one" in reason


@pytest.mark.django_db(transaction=True)
def test_a_campaign_on_the_documents_defaults(fake_server):
    responder = fake_server.responder = Recording(table())
    campaign = services.xcoder_campaign_create(
        name="document defaults",
        seed_set=seed_set(),
        generator_endpoint=endpoint(fake_server, "generator"),
        solver_endpoints=[endpoint(fake_server, "solver-a"), endpoint(fake_server, "solver-b")],
        settings={"num_tasks": 1, "style_mix": {"codeforces": 100}, "measure_kept": False},
    )
    campaign_launch(campaign_id=campaign.pk)
    campaign = run_inline(campaign_id=campaign.pk, max_steps=60)
    assert campaign.state == CampaignState.COMPLETED
    xc = campaign.xcoder

    # Evolve-then-merge: one call per seed, each prompt holding that seed's features only.
    steps = EvolutionStep.objects.filter(xcoder=xc)
    assert {s.problem.origin_id for s in steps} == {SEED_SUM, SEED_MAX}
    assert not steps.filter(problem__isnull=True).exists()  # no category-wide call
    sum_prompt = responder.evolution_prompts[
        f"xcoder;evolve;round=1;seed={SEED_SUM};role=xcoder_evolve"
    ]
    max_prompt = responder.evolution_prompts[
        f"xcoder;evolve;round=1;seed={SEED_MAX};role=xcoder_evolve"
    ]
    assert "partial ordering" in sum_prompt and "running maximum" not in sum_prompt
    assert "running maximum" in max_prompt and "binary heap" not in max_prompt
    # ...and the merged tree holds both seeds' evolutions, with their origins.
    depth = FeatureNode.objects.get(
        xcoder=xc,
        path="algorithm / selection methods / partial ordering / quickselect partitioning",
    )
    assert depth.origin == NodeOrigin.DEPTH and depth.evolution_round == 1
    deque = FeatureNode.objects.get(
        xcoder=xc, path="data structures / double-ended queue / monotone deque"
    )
    assert deque.origin == NodeOrigin.DEPTH
    assert FeatureNode.objects.get(xcoder=xc, path="data structures / pairing heap").origin == (
        NodeOrigin.BREADTH
    )
    shared = FeatureNode.objects.get(xcoder=xc, path="problem type / array aggregation")
    assert shared.origin == NodeOrigin.EXTRACTED and len(shared.sources) == 2
    assert xc.counts_extracted["data structures"] == 2
    assert xc.counts_evolved["data structures"] == 4

    task = SynthTask.objects.get(xcoder=xc, index=0)
    assert task.status == T.ACCEPTED, (task.reason_code, task.reason, task.test_notes)
    # Table 5's preference: only the tool-based generator was asked for tests.
    roles = {role for role, _ in responder.seen}
    assert "xcoder_generator" in roles and "xcoder_tests" not in roles
    assert [t["file_name"] for t in task.tests] == [
        "boundary_single_offer.in",
        "complex_distinct_offers.in",
        "nominal_small_random.in",
        "stress_max_n.in",
    ]
    assert [t["category"] for t in task.tests] == ["boundary", "complex", "nominal", "stress"]
    # The stress input is kept in a file (not in the row), above the judge's 1 MB default.
    stress = task.tests[3]
    assert "input" not in stress and stress["bytes"] > 1_000_000
    path = Path(django_settings.DATA_DIR) / stress["file"]
    text = path.read_text()
    assert len(text.encode()) == stress["bytes"]
    n, k = map(int, text.split("\n", 1)[0].split())
    assert (n, k) == (200000, 100000) and len(text.split()) == 2 + n
    assert len(json.dumps(task.tests)) < 10_000
    # The task page shows a preview of it and where the rest is.
    row = selectors.vote_matrix(task)["rows"][3]
    assert row["input"].startswith("200000 100000") and f"bytes in {stress['file']}" in row["input"]

    # n = 8 candidates, four from each solver endpoint; the one without reasoning is refused.
    candidates = CandidateSolution.objects.filter(task=task)
    assert candidates.count() == 8
    assert (
        sorted(candidates.values_list("endpoint__name", flat=True))
        == ["solver-a"] * 4 + ["solver-b"] * 4
    )
    refused = candidates.get(passed_gates=False)
    assert (refused.endpoint.name, refused.sample) == ("solver-a", 3)
    assert "no <think> reasoning block" in refused.reason

    # The vote ran on the 2 MB test: the wrong candidates (at most 3 offers) lose it.
    ver = task.verification
    assert ver["statuses"][3] == ["OK"] * 7
    assert ver["agree"][3] == [True, True, True, False, True, True, False]
    values = sorted(map(int, text.split()[2:]), reverse=True)
    problem = Problem.objects.get(pk=task.problem_id)
    # The voted label of the 2 MB input is the right answer, kept in a file.
    assert isinstance(ver["labels"][3], dict) or len(ver["labels"][3]) < 100
    assert text_of(ver["labels"][3]).strip() == str(sum(values[:k]))
    # Only the weighted golden suite becomes the problem's tests; the hold-out half (here the
    # stress input among them) confirmed the golden solution and is not stored with it.
    assert ver["split"] == ["golden", "val", "golden", "val"]
    kept = [i for i in (0, 2) if ver["agree"][i][ver["golden"]]]
    assert kept and problem.tests.count() == len(kept)
    assert {t.provenance["split"] for t in problem.tests.all()} == {"golden"}
    assert stress["category"] not in {t.provenance["category"] for t in problem.tests.all()}
    assert problem.metadata["holdout_tests"] == 2


def test_a_test_file_name_gives_its_category():
    names = ["stress_max_n.in", "boundary_single.in", "edge-min.in", "complex_tree.in", "x.in"]
    assert [cyaron.category_of_name(n) for n in names] == [
        "stress",
        "boundary",
        "boundary",
        "complex",
        "nominal",
    ]


def test_a_cut_short_generator_output_is_refused_not_half_read():
    whole = "#XCODER-CASE 4 a.in\n1 2\n#XCODER-CASE 2 b.in\n3\n#XCODER-END 2\n"
    assert [(n, t) for _, n, t in cyaron.frames(whole)] == [("a.in", "1 2\n"), ("b.in", "3\n")]
    with pytest.raises(ParseError, match="ends inside a test file"):
        list(cyaron.frames(whole[:22]))
    with pytest.raises(ParseError, match="not framed"):
        list(cyaron.frames(whole[: -len("#XCODER-END 2\n")]))
