"""The gate's independent difficulty: the draft's candidates sampled afresh by an evaluation
panel over real HTTP (loopback model server) and judged in the real sandbox; the gate reads
that figure, says so, and shows the selection-time one beside it."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from evolution.models import PanelMember
from releases import independent, services
from releases.gate import GateRules, RulesError
from releases.models import GateEvaluationSample
from tests.factories import ProblemSetFactory, SolverAttemptFactory
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI, Fault, by_model, intermittent
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import SUM_CODE, WRONG_CODE, crafted_world
from .living_support import endpoint


def _sample(headers) -> int:
    key = headers.get("X-BenchForge-Key") or headers.get("x-benchforge-key", "")
    return int(key.rsplit("sample=", 1)[1])


class Fresh:
    """A model that finds E-OK easy (always right) and E-EASY middling (right on sample 0 of
    2), and fails everything else."""

    def __call__(self, body, headers):
        prompt = body["messages"][-1]["content"]
        if "Task E-OK." in prompt:
            return fenced(SUM_CODE)
        if "Task E-EASY." in prompt and _sample(headers) == 0:
            return fenced(SUM_CODE)
        return fenced(WRONG_CODE)


def always_right(body, headers):
    return fenced(SUM_CODE)


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.fixture
def draft(transactional_db):
    world = crafted_world()
    # The curator lets the gate read selection-time figures where no independent one exists,
    # so that the tests below can compare the two.
    bench = services.benchmark_create(name="LiveCodeBench-Plus", default_rules=SELECTION_TIME_OK)
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    return world, release


def _report(run) -> dict[str, dict]:
    return {e["public_id"]: e for e in run.report}


def _rule(entry, name="difficulty") -> dict:
    return next(r for r in entry["rules"] if r["rule"] == name)


def test_the_gate_follows_the_independent_pass_at_1_not_the_selection_time_one(draft, server):
    world, release = draft
    server.responder = Fresh()
    fresh = endpoint(server, "fresh")
    independent.panel_update(
        release=release, endpoints=[fresh], samples=2, exclude_selection_models=True
    )
    ok, easy = world.problem("E-OK").public_id, world.problem("E-EASY").public_id

    before = _report(services.gate_run_create(release=release))
    # Selection-time: E-OK 3/8 = 0.375 is inside [0.05, 0.75], E-EASY 7/8 = 0.875 is not.
    assert before[ok]["passed"] is True
    assert _rule(before[easy])["passed"] is False
    assert before[ok]["facts"]["difficulty_source"] == "selection"

    evaluation = services.gate_evaluation_start(release=release)
    assert evaluation.planned == 12 * 1 * 2  # every pass/fail candidate, 1 model, K = 2
    evaluation = independent.evaluation_execute(evaluation_id=evaluation.pk)
    assert evaluation.state == "completed", evaluation.error
    assert server.request_count == 24

    after = _report(services.gate_run_create(release=release))
    # Independently, E-OK is solved 2/2 (1.0, outside the window): the gate drops it.
    assert after[ok]["passed"] is False
    rule = _rule(after[ok])
    assert rule["passed"] is False
    assert rule["detail"].startswith(
        f"independent pass@1 1.000 (2/2 fresh samples, evaluation {evaluation.pk}: 1 model(s) "
        "× 2 fresh sample(s)); selection-time pass@1 0.375 (3/8), biased low by selection; "
        "must lie within [0.05, 0.75]"
    )
    facts = after[ok]["facts"]
    assert facts["difficulty_source"] == "independent"
    assert (facts["independent_passes"], facts["independent_attempts"]) == (2, 2)
    assert (facts["panel_passes"], facts["panel_attempts"]) == (3, 8)
    # E-EASY, too easy at selection (0.875), is 1/2 = 0.5 independently: inside the window.
    assert _rule(after[easy])["passed"] is True
    assert after[easy]["passed"] is True

    summary = evaluation.summary
    rows = {r["public_id"]: r for r in summary["per_problem"]}
    assert rows[ok]["gap"] == pytest.approx(0.375 - 1.0)
    assert rows[easy]["gap"] == pytest.approx(0.875 - 0.5)
    assert rows[ok]["models"] == {"fresh": {"passes": 2, "attempts": 2}}
    # S3 was never measured at selection: no gap, but an independent figure (0/2).
    s3 = rows[world.problem("S3").public_id]
    assert s3["gap"] is None and s3["independent"]["attempts"] == 2
    gaps = [r["gap"] for r in summary["per_problem"] if r["gap"] is not None]
    assert summary["gap"]["n"] == len(gaps) == 11
    assert summary["gap"]["value"] == pytest.approx(sum(gaps) / len(gaps))
    assert summary["gap"]["low"] <= summary["gap"]["value"] <= summary["gap"]["high"]


def test_a_required_independent_figure_fails_candidates_without_one(draft, server):
    world, release = draft
    services.release_update(
        release=release,
        rules={**release.gate_rules, "require_independent": True, "selection_time_reason": None},
    )
    report = _report(services.gate_run_create(release=release))
    rule = _rule(report[world.problem("E-OK").public_id])
    assert rule["passed"] is False
    assert "requires the independent pass@1" in rule["detail"]
    assert "pass@1 0.375 (3/8), biased low by selection" in rule["detail"]


def test_by_default_the_gate_requires_the_independent_figure(transactional_db):
    """The gate read the winner's-curse figure by default, shown as a plain "pass@1 0.375
    (3/8)": a release could be frozen on it without anyone choosing to."""
    assert GateRules().require_independent is True
    world = crafted_world()
    bench = services.benchmark_create(name="Default rules")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    report = _report(services.gate_run_create(release=release))
    evolved = [e for e in report.values() if e["origin"] == "evolved"]
    assert evolved and not any(e["passed"] for e in evolved)
    rule = _rule(report[world.problem("E-OK").public_id])
    assert "requires the independent pass@1" in rule["detail"]
    with pytest.raises(ValidationError, match="Nothing passed the gate"):
        services.release_freeze(release=release)


def test_reading_the_selection_time_figure_needs_the_curators_reason(draft):
    world, release = draft
    services.release_update(
        release=release,
        rules={**release.gate_rules, "require_independent": False, "selection_time_reason": None},
    )
    rule = _rule(
        _report(services.gate_run_create(release=release))[world.problem("E-OK").public_id]
    )
    assert rule["passed"] is False and "needs the curator's reason" in rule["detail"]
    reason = "pilot: evaluation panel not ready"
    services.release_update(
        release=release, rules={**release.gate_rules, "selection_time_reason": reason}
    )
    rule = _rule(
        _report(services.gate_run_create(release=release))[world.problem("E-OK").public_id]
    )
    assert rule["passed"] is True
    assert rule["detail"].endswith(f"selection-time figure read by the curator's choice: {reason}")
    with pytest.raises(RulesError, match="only with require_independent off"):
        GateRules.from_dict({"selection_time_reason": reason})


def test_the_evaluation_panel_includes_the_selection_models_by_default(draft):
    """The paper's evaluation suite includes the models used for selection (fresh samples
    remove the winner's curse); they were left out by default."""
    _, release = draft
    assert independent.panel_settings(release=release)["exclude_selection_models"] is False


def test_models_used_for_selection_are_left_out_when_configured(draft, server):
    world, release = draft
    server.responder = always_right
    selector = endpoint(server, "selector")
    twin = endpoint(server, "twin")  # another endpoint serving the selection model
    twin.model = "selector"
    twin.save()
    calibrator = endpoint(server, "calibrator")
    fresh = endpoint(server, "fresh")
    PanelMember.objects.create(panel=world.campaign.panel, endpoint=selector)
    # A seed's calibration attempt by a model outside the campaign panel also counts.
    lineage = world.campaign.lineages.get(seed=world.problem("S2"))
    SolverAttemptFactory(lineage=lineage, endpoint=calibrator, attempt_index=0, verdict="WA")

    panel = [selector, twin, calibrator, fresh]
    independent.panel_update(
        release=release, endpoints=panel, samples=1, exclude_selection_models=False
    )
    kept_all = services.gate_evaluation_start(release=release)
    assert set(kept_all.endpoints.values_list("name", flat=True)) == {
        "selector",
        "twin",
        "calibrator",
        "fresh",
    }
    kept_all.delete()

    independent.panel_update(
        release=release, endpoints=panel, samples=1, exclude_selection_models=True
    )
    evaluation = services.gate_evaluation_start(release=release)
    assert list(evaluation.endpoints.values_list("name", flat=True)) == ["fresh"]
    why = {x["endpoint"]: x["why"] for x in evaluation.excluded}
    assert set(why) == {"selector", "twin", "calibrator"}
    assert "selection panel" in why["selector"]
    assert "same model (selector)" in why["twin"]
    assert "answered the candidates during selection" in why["calibrator"]

    evaluation = independent.evaluation_execute(evaluation_id=evaluation.pk)
    assert evaluation.state == "completed", evaluation.error
    assert evaluation.summary["models"] == ["fresh"]
    # Only the fresh model was asked: one sample of each of the 12 candidates.
    assert server.request_count == 12
    assert {r.body["model"] for r in server.requests} == {"fresh"}

    independent.panel_update(
        release=release, endpoints=[selector, twin], samples=1, exclude_selection_models=True
    )
    with pytest.raises(ValidationError, match="Every model of the evaluation panel is left out"):
        services.gate_evaluation_start(release=release)


def test_failed_calls_are_not_difficulty_and_a_failing_endpoint_is_named(transactional_db, server):
    world = crafted_world()
    chosen = ProblemSetFactory(name="two candidates")
    chosen.problems.add(world.problem("E-OK"), world.problem("E-OVERRIDE"))
    bench = services.benchmark_create(name="Small")
    release = services.release_create(benchmark=bench, problem_sets=[chosen])
    down = {"answer": Fault.server_error(503)}
    server.responder = by_model(
        {
            # Each sample's first call fails (503, then a time-out is not needed: one fault).
            "flaky": intermittent(always_right, [Fault.server_error(503)]),
            "down": lambda body, headers: down["answer"],
        }
    )
    flaky, broken = endpoint(server, "flaky"), endpoint(server, "down")
    independent.panel_update(
        release=release, endpoints=[flaky, broken], samples=2, exclude_selection_models=True
    )
    evaluation = services.gate_evaluation_start(release=release)
    evaluation = independent.evaluation_execute(evaluation_id=evaluation.pk)
    assert evaluation.state == "failed"
    assert "evaluation endpoint 'down' keeps failing" in evaluation.error
    assert "HTTP 503" in evaluation.error and "flaky" not in evaluation.error
    progress = independent.progress(evaluation=evaluation)
    assert progress == {
        "planned": 8,
        "answered": 4,
        "judged": 4,
        "infra_errors": 4,
        "percent": 50,
    }
    # The flaky endpoint's samples failed once, were asked again and count as answers.
    flaky_rows = GateEvaluationSample.objects.filter(evaluation=evaluation, endpoint=flaky)
    assert {r.verdict for r in flaky_rows} == {"AC"}
    assert all(len(r.details["infra_errors"]) == 1 for r in flaky_rows)
    assert flaky_rows[0].details["infra_errors"][0]["status"] == 503
    # A failed evaluation is not read by the gate.
    report = _report(services.gate_run_create(release=release))
    assert report[world.problem("E-OK").public_id]["facts"]["difficulty_source"] == "selection"

    # The outage ends: running it again asks only the failed samples.
    down["answer"] = fenced(WRONG_CODE)
    asked = server.request_count
    evaluation = independent.evaluation_execute(evaluation_id=evaluation.pk)
    assert evaluation.state == "completed", evaluation.error
    assert server.request_count - asked == 4
    row = {r["public_id"]: r for r in evaluation.summary["per_problem"]}[
        world.problem("E-OK").public_id
    ]
    # 2 right (flaky) + 2 wrong (down): 4 answers, none of the failed calls counted.
    assert row["independent"]["passes"] == 2 and row["independent"]["attempts"] == 4
    assert row["models"] == {
        "down": {"passes": 0, "attempts": 2},
        "flaky": {"passes": 2, "attempts": 2},
    }
    report = _report(services.gate_run_create(release=release))
    facts = report[world.problem("E-OK").public_id]["facts"]
    assert (facts["independent_passes"], facts["independent_attempts"]) == (2, 4)


def test_a_candidate_changed_since_the_evaluation_falls_back_and_says_why(draft, server):
    world, release = draft
    server.responder = always_right
    independent.panel_update(
        release=release,
        endpoints=[endpoint(server, "fresh")],
        samples=1,
        exclude_selection_models=True,
    )
    evaluation = services.gate_evaluation_start(release=release)
    evaluation = independent.evaluation_execute(evaluation_id=evaluation.pk)
    assert evaluation.state == "completed", evaluation.error
    problem = world.problem("E-OK")
    problem.statement += " Clarified."
    problem.save()
    entry = _report(services.gate_run_create(release=release))[problem.public_id]
    assert entry["facts"]["difficulty_source"] == "selection"
    assert f"changed since independent evaluation {evaluation.pk}" in _rule(entry)["detail"]


def test_the_panel_is_refused_when_empty_and_on_a_frozen_release(draft):
    _, release = draft
    with pytest.raises(ValidationError, match="at least one model"):
        independent.panel_update(
            release=release, endpoints=[], samples=4, exclude_selection_models=True
        )
    with pytest.raises(ValidationError, match="Choose the evaluation panel first"):
        services.gate_evaluation_start(release=release)


def test_the_curator_sets_the_panel_runs_it_and_reads_both_figures(draft, server, personas):
    world, release = draft
    server.responder = Fresh()
    fresh = endpoint(server, "fresh")
    client = personas.curator.client
    page_url = reverse("releases:curate_detail", args=[release.pk])

    # The panel through the API; reviewers may not touch it.
    url = f"/api/releases/{release.pk}/evaluation-panel"
    body = {"endpoint_ids": [fresh.pk], "samples": 2, "exclude_selection_models": True}
    assert (
        personas.reviewer_a.client.put(url, body, content_type="application/json").status_code
        == 403
    )
    answer = client.put(url, body, content_type="application/json")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {
        "endpoints": ["fresh"],
        "samples": 2,
        "exclude_selection_models": True,
        "configured": True,
    }
    bad = client.put(url, {**body, "samples": 0}, content_type="application/json")
    assert bad.status_code == 400 and "between 1 and 100" in bad.json()["detail"]
    unknown = client.put(url, {**body, "endpoint_ids": [99999]}, content_type="application/json")
    assert unknown.status_code == 400 and "99999" in unknown.json()["detail"]

    # The page's form saves the same setting.
    client.post(
        reverse("releases:independent_panel", args=[release.pk]),
        {"endpoints": [fresh.pk], "samples": "2", "exclude_selection_models": "1"},
    )
    page = client.get(page_url).content.decode()
    assert 'id="independent-panel"' in page and 'id="run-independent"' in page

    problems, panel, _ = services._candidate_pool(release)
    evaluation = independent.evaluation_create(release=release, problems=problems, panel=panel)
    fragment = client.get(reverse("releases:independent_fragment", args=[release.pk]))
    # Queued: the section polls itself and shows the progress.
    assert 'hx-trigger="every 2s"' in fragment.content.decode()
    assert "0 of 24 samples answered" in fragment.content.decode()
    running = client.get(f"/api/releases/{release.pk}/independent-evaluations/{evaluation.pk}")
    assert running.json()["state"] == "queued"
    assert running.json()["progress"]["planned"] == 24

    independent.evaluation_execute(evaluation_id=evaluation.pk)
    done = client.get(f"/api/releases/{release.pk}/independent-evaluations/{evaluation.pk}").json()
    assert done["state"] == "completed" and done["models"] == ["fresh"]
    assert done["progress"] == {
        "planned": 24,
        "answered": 24,
        "judged": 24,
        "infra_errors": 0,
        "percent": 100,
    }
    assert done["gap"]["n"] == 11

    assert client.post(f"/api/releases/{release.pk}/gate").status_code == 200
    page = client.get(page_url).content.decode()
    assert 'hx-trigger="every 2s"' not in page  # nothing under way any more
    assert 'id="winners-curse"' in page and 'id="gap-plot"' in page
    ok = world.problem("E-OK").public_id
    row = page.split(f'class="gap-row" data-public-id="{ok}"', 1)[1].split("</tr>", 1)[0]
    assert "0.375" in row and "(3/8)" in row and "1.000" in row and "(2/2)" in row
    assert "-0.625" in row
    gate_row = page.split(f'class="gate-row" data-public-id="{ok}"', 1)[1].split("</tr>", 1)[0]
    assert "0.375" in gate_row and "1.000" in gate_row
    assert "independent pass@1 1.000 (2/2 fresh samples" in gate_row

    csv_text = client.get(reverse("releases:independent_gap_csv", args=[evaluation.pk])).content
    lines = csv_text.decode().splitlines()
    assert lines[0].startswith("public_id,origin,selection_passes")
    assert any(line.startswith(f"{ok},evolved,3,8,0.375,2,2,1.0,") for line in lines)
    assert personas.reviewer_a.client.get(page_url).status_code == 403


def test_the_api_refuses_to_evaluate_a_frozen_release(draft, personas):
    world, release = draft
    client = personas.curator.client
    services.gate_run_create(release=release)
    services.release_freeze(release=release)
    refused = client.post(f"/api/releases/{release.pk}/independent-evaluations")
    assert refused.status_code == 400
    assert "before the gate decides" in refused.json()["detail"]


def test_the_next_version_keeps_the_evaluation_panel(draft, server):
    _, release = draft
    fresh = endpoint(server, "fresh")
    independent.panel_update(
        release=release, endpoints=[fresh], samples=3, exclude_selection_models=False
    )
    services.gate_run_create(release=release)
    frozen = services.release_freeze(release=release)
    with pytest.raises(ValidationError, match="is frozen"):
        independent.panel_update(
            release=frozen, endpoints=[fresh], samples=3, exclude_selection_models=False
        )
    nxt = services.release_next(release=frozen)
    config = independent.panel_settings(release=nxt)
    assert config["configured"] is True
    assert [e.name for e in config["endpoints"]] == ["fresh"]
    assert (config["samples"], config["exclude_selection_models"]) == (3, False)
