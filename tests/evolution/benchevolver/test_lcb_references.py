"""Real LiveCodeBench records (stdin and call-based, public and packed private tests) evolve:
references come from a solutions file or from a calibration attempt that passed every test,
and a seed with no way to get one is skipped before any model is called."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import Client

from evolution.benchevolver.demo import answers as demo_answers
from evolution.benchevolver.services import campaign_create, lineage_advance
from evolution.importers import SeedImportError, import_seeds
from evolution.models import LLMCall, Problem, ProblemSet

from . import lcb_world as w
from .test_scenarios import running

pytestmark = pytest.mark.django_db(transaction=True)

EVOLVED_SORT = """
t = int(input())
for _ in range(t):
    s = input().strip()
    print(sum(a != b for a, b in zip(s, "abc")))
"""
EVOLVED_ACRONYM = """
class Solution:
    def countAcronyms(self, words: List[str], s: str) -> int:
        return sum("".join(w[0] for w in words[i:]) == s for i in range(len(words)))
"""


class LCBPanel:
    """Solver answers by seed and model: 'good' always right, 'shaky' wrong on attempt 0.
    Mutator and writer answers evolve each seed once; every prompt is kept for inspection."""

    def __init__(self):
        self.prompts: list[tuple[str, str, str]] = []

    def __call__(self, body, headers):
        role = headers.get("x-benchforge-role", "")
        key = headers.get("x-benchforge-key", "")
        self.prompts.append((role, key, body["messages"][0]["content"]))
        acronym = f"seed={w.ACRONYM_ID};" in key
        if role == "solver":
            wrong = "model=shaky;attempt=0" in key
            if acronym:
                return demo_answers.code(w.ACRONYM_WRONG if wrong else w.ACRONYM_OK)
            return demo_answers.code(w.SHORT_SORT_WRONG if wrong else w.SHORT_SORT_OK)
        if role == "mutator":
            src = EVOLVED_ACRONYM if acronym else EVOLVED_SORT
            return demo_answers.mutation(
                "Count instead of decide.", "A yes/no is not enough.", "counting", src
            )
        if role == "writer":
            return demo_answers.written(
                "Count", "Count things.", ['["ab"]\n"a"'] if acronym else ["1\nabc\n"]
            )
        return "no scripted answer"

    def by_role(self, role: str) -> list[tuple[str, str]]:
        return [(key, text) for r, key, text in self.prompts if r == role]


def references_world(server, **import_kwargs):
    import_seeds(source="lcb", content=w.records_text(), set_name="lcb-v6", **import_kwargs)
    seed_set = ProblemSet.objects.get(name="lcb-v6")
    evolver = w.endpoint(server, "evolver")
    panel = w.panel_of("lcb-panel", [w.endpoint(server, "good"), w.endpoint(server, "shaky")])
    return seed_set, evolver, panel


def advance_to_first_candidate(lineage, limit=40):
    for _ in range(limit):
        lineage.refresh_from_db()
        if lineage.state not in ("pending", "evolving") or lineage.candidates.exists():
            return lineage
        report = lineage_advance(lineage_id=lineage.pk)
        assert report.outcome == "done", report
    raise AssertionError("lineage never reached a proposal")


@pytest.fixture
def lcb_panel(fake_server):
    responder = LCBPanel()
    fake_server.responder = responder
    return responder


def test_a_solutions_file_gives_lcb_seeds_their_references_and_both_evolve(fake_server, lcb_panel):
    seed_set, evolver, panel = references_world(fake_server, solutions_content=w.solutions_text())
    sort_seed = Problem.objects.get(origin_id=w.SHORT_SORT_ID)
    acronym = Problem.objects.get(origin_id=w.ACRONYM_ID)
    assert sort_seed.reference_solution == w.SHORT_SORT_OK
    assert sort_seed.reference_provenance == {
        "source": "solutions-file",
        "file": "uploaded",
        "line": 1,
        "tests_passed": "5/5",
    }
    assert (acronym.harness, acronym.entry_point) == ("function", "isAcronym")
    assert acronym.starter_code == w.ACRONYM_STARTER
    assert acronym.tests.filter(hidden=True).count() == 3

    campaign = running(campaign_create(name="lcb", seed_set=seed_set, evolver=evolver, panel=panel))
    for lineage in campaign.lineages.all():
        lineage = advance_to_first_candidate(lineage)
        # 7 of 8 attempts pass every public and private test: level 2, allowed; evolving.
        assert (lineage.state, lineage.seed_passes, lineage.seed_attempts) == ("evolving", 7, 8)
        assert lineage.candidates.get(round=1).code.strip()

    # The call-based seed's starter code reaches the solver and the mutator prompts, and the
    # mutator evolves the reference from the solutions file.
    acronym_solver = [t for k, t in lcb_panel.by_role("solver") if f"seed={w.ACRONYM_ID};" in k]
    assert acronym_solver and all(w.ACRONYM_STARTER.rstrip() in t for t in acronym_solver)
    assert all("Starter code" not in t for k, t in lcb_panel.by_role("solver") if "1873_A" in k)
    mutator = dict(lcb_panel.by_role("mutator"))
    acronym_mutator = next(t for k, t in mutator.items() if f"seed={w.ACRONYM_ID};" in k)
    assert w.ACRONYM_STARTER.rstrip() in acronym_mutator
    assert w.ACRONYM_OK.strip() in acronym_mutator
    # class Solution answers were judged the way LiveCodeBench calls them: the wrong one fails a
    # private test, the right ones pass all five.
    verdicts = {
        (a.endpoint.name, a.attempt_index): (a.verdict, a.passed_tests, a.total_tests)
        for a in campaign.lineages.get(seed=acronym).attempts.select_related("endpoint")
    }
    assert verdicts[("good", 0)] == ("AC", 5, 5)
    assert verdicts[("shaky", 0)][0] == "WA"


def test_without_solutions_a_calibration_attempt_that_passed_every_test_becomes_the_reference(
    fake_server, lcb_panel
):
    seed_set, evolver, panel = references_world(fake_server)
    assert not Problem.objects.exclude(reference_solution="").exists()
    campaign = running(
        campaign_create(name="lcb-calib", seed_set=seed_set, evolver=evolver, panel=panel)
    )
    for lineage in campaign.lineages.all():
        lineage = advance_to_first_candidate(lineage)
        assert lineage.state == "evolving"
    sort_seed = Problem.objects.get(origin_id=w.SHORT_SORT_ID)
    acronym = Problem.objects.get(origin_id=w.ACRONYM_ID)
    # The first passing attempt in (model, attempt) order: "good" attempt 0, never the wrong one.
    assert sort_seed.reference_solution.strip() == w.SHORT_SORT_OK.strip()
    assert acronym.reference_solution.strip() == w.ACRONYM_OK.strip()
    provenance = acronym.reference_provenance
    assert provenance["source"] == "calibration"
    assert (provenance["endpoint"], provenance["attempt"], provenance["tests_passed"]) == (
        "good",
        0,
        "5/5",
    )
    assert provenance["campaign"] == campaign.pk
    # The mutator evolved the adopted reference.
    mutator = [t for k, t in lcb_panel.by_role("mutator") if f"seed={w.ACRONYM_ID};" in k]
    assert mutator and w.ACRONYM_OK.strip() in mutator[0]

    # The problem page says where the reference came from.
    admin = get_user_model().objects.create_superuser("adm", password="pw")
    client = Client()
    client.force_login(admin)
    page = client.get(f"/problems/{acronym.public_id}/").content.decode()
    assert "a calibration attempt that passed every public and private test" in page
    lineage = campaign.lineages.get(seed=acronym)
    page = client.get(f"/lineages/{lineage.pk}/").content.decode()
    assert "a calibration attempt that passed every test (<code>good</code>, attempt 0" in page
    assert "<code>good</code>, attempt 0" in page


def test_a_reference_adopted_from_calibration_survives_a_reimport_of_the_records(
    fake_server, lcb_panel, tmp_path
):
    """The engine adopts a passing attempt; importing the same records again (into the same
    set or another, without a solutions file) keeps it and its provenance, and says so."""
    seed_set, evolver, panel = references_world(fake_server)
    campaign = running(
        campaign_create(name="lcb-keep", seed_set=seed_set, evolver=evolver, panel=panel)
    )
    for lineage in campaign.lineages.all():
        advance_to_first_candidate(lineage)
    adopted = {p.origin_id: p.reference_solution for p in Problem.objects.all()}
    assert all(code.strip() for code in adopted.values())

    out = io.StringIO()
    path = tmp_path / "lcb.jsonl"
    path.write_text(w.records_text(), encoding="utf-8")
    call_command("import_seeds", "lcb", str(path), "--set", "lcb-v6", stdout=out)
    call_command("import_seeds", "lcb", str(path), "--set", "lcb-again", stdout=out)

    assert {p.origin_id: p.reference_solution for p in Problem.objects.all()} == adopted
    acronym = Problem.objects.get(origin_id=w.ACRONYM_ID)
    assert acronym.reference_provenance["source"] == "calibration"
    assert acronym.reference_provenance["attempt"] == 0
    text = out.getvalue()
    assert "lcb-v6: 0 created, 0 updated, 2 unchanged" in text
    assert "2 with a reference solution (2 kept)" in text
    assert "0 with a reference solution" not in text


def test_a_seed_no_calibration_attempt_solves_is_skipped_with_the_reason(fake_server):
    fake_server.responder = lambda body, headers: demo_answers.code(w.SHORT_SORT_WRONG)
    import_seeds(source="lcb", content=w.short_sort_line(), set_name="lcb-one")
    seed_set = ProblemSet.objects.get(name="lcb-one")
    panel = w.panel_of("p", [w.endpoint(fake_server, "good")])
    campaign = running(
        campaign_create(
            name="none-pass",
            seed_set=seed_set,
            evolver=w.endpoint(fake_server, "evolver"),
            panel=panel,
            settings={"allowed_seed_levels": [1, 2, 3, 4, 5]},
        )
    )
    lineage = campaign.lineages.get()
    for _ in range(10):
        if lineage_advance(lineage_id=lineage.pk).outcome == "skipped":
            break
    lineage.refresh_from_db()
    assert lineage.state == "skipped"
    assert "no calibration attempt passed every public and private test" in lineage.stop_reason
    assert Problem.objects.get().reference_solution == ""


@pytest.mark.parametrize("how", ["no tests", "calibration off"])
def test_a_seed_with_no_way_to_a_reference_is_skipped_before_any_model_call(fake_server, how):
    fake_server.responder = lambda body, headers: demo_answers.code(w.SHORT_SORT_OK)
    import_seeds(source="lcb", content=w.short_sort_line(), set_name="lcb-one")
    seed = Problem.objects.get()
    settings = {}
    if how == "no tests":
        seed.tests.all().delete()
    else:
        settings["reference_from_calibration"] = False
    campaign = running(
        campaign_create(
            name=f"skip {how}",
            seed_set=ProblemSet.objects.get(name="lcb-one"),
            evolver=w.endpoint(fake_server, "evolver"),
            panel=w.panel_of("p", [w.endpoint(fake_server, "good")]),
            settings=settings,
        )
    )
    lineage = campaign.lineages.get()
    report = lineage_advance(lineage_id=lineage.pk)
    lineage.refresh_from_db()
    assert (report.action, lineage.state) == ("skip_without_reference", "skipped")
    assert "no reference solution" in lineage.stop_reason
    assert fake_server.request_count == 0
    assert not LLMCall.objects.exists()


def test_a_solutions_file_naming_an_unknown_question_is_refused_and_nothing_is_written():
    bad = w.solutions_text() + '{"question_id": "9999_Z", "solution": "print(1)"}\n'
    with pytest.raises(SeedImportError) as info:
        import_seeds(source="lcb", content=w.records_text(), solutions_content=bad)
    assert info.value.field == "solutions.question_id"
    assert "solutions line 3" in str(info.value) and "9999_Z" in str(info.value)
    assert not Problem.objects.exists()


def test_a_reference_inside_the_record_line_is_kept_with_its_provenance():
    record = json.loads(w.short_sort_line())
    record["reference_solution"] = w.SHORT_SORT_OK
    import_seeds(source="lcb", content=json.dumps(record))
    seed = Problem.objects.get()
    assert seed.reference_solution == w.SHORT_SORT_OK
    assert seed.reference_provenance == {
        "source": "record",
        "dataset": "livecodebench",
        "tests_passed": "5/5",
    }


def test_both_livecodebench_harnesses_run_with_the_livecodebench_column_of_table_5(fake_server):
    from evolution.benchevolver.engine.config import EvolutionSettings
    from evolution.benchevolver.stages.common import Ctx

    seed_set, evolver, panel = references_world(fake_server, solutions_content=w.solutions_text())
    campaign = campaign_create(name="columns", seed_set=seed_set, evolver=evolver, panel=panel)
    seen = {}
    for lineage in campaign.lineages.select_related("seed"):
        ctx = Ctx(
            campaign=campaign,
            lineage=lineage,
            settings=EvolutionSettings.from_dict(campaign.settings),
        )
        seen[lineage.seed.harness] = (
            ctx.limits().time_s,
            ctx.settings.memory_raw_window,
            ctx.settings.global_memory_max_entries,
        )
    # The column is the benchmark's, stdin and call-based alike (every benchmark's:
    # test_benchmark_columns.py).
    assert seen == {"stdio": (6.0, 10, 50), "function": (6.0, 10, 50)}
