"""The living loop, end to end: a stronger model joins the panel of a published release, the
re-measurement runs on a real Celery worker, the panel's pooled pass@1 crosses the gate's
upper bound and the problems are flagged saturated with the model that did it; one action
turns them into a BenchEvolver campaign that the engine runs on the same worker against the
loopback server (scripted evolver answers, the same two-model panel), and after review and the
gate the next version retires the saturated problems and adds the engine's accepted ones,
saying why."""

from __future__ import annotations

import signal
from collections import Counter

import pytest
import redis
from django.conf import settings
from django.core.exceptions import ValidationError

from evolution.benchevolver.engine.families import canonical_family
from evolution.models import Campaign, LLMCall, ModelEndpoint
from releases import living, selectors, services
from releases.models import DifficultyPoint, ReEvolution, Remeasurement, SaturationFlag
from tests.support.fake_openai import FakeOpenAI
from tests.support.workers import kill_group, start_worker, wait_for, wait_until_consuming

from .builders import review
from .helpers import frozen_release
from .living_support import MUTATIONS, REEVOLUTION_SETTINGS, Evolution, endpoint

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _done(remeasurement_id: int) -> Remeasurement | None:
    r = Remeasurement.objects.get(pk=remeasurement_id)
    return r if r.state in ("completed", "failed") else None


def _settled(campaign_id: int) -> Campaign | None:
    c = Campaign.objects.get(pk=campaign_id)
    return c if c.state in ("completed", "paused", "failed", "cancelled") else None


def test_a_stronger_model_joining_the_panel_saturates_problems_on_the_worker():
    redis.Redis.from_url(settings.REDIS_URL).flushdb()
    world, release = frozen_release(publish=True)
    ids = {k: world.problem(k).public_id for k in ("E-OK", "E-OVERRIDE", "S2")}
    bench = release.benchmark
    with FakeOpenAI() as server:
        server.responder = Evolution({ids["E-OK"]: "E-OK", ids["E-OVERRIDE"]: "E-OVERRIDE"})
        weak, strong = endpoint(server, "weak"), endpoint(server, "strong")
        # In this world the evolver of the release's campaign answers on the loopback server.
        ModelEndpoint.objects.filter(pk=world.campaign.evolver_id).update(
            base_url=server.base_url, model="evolver", max_retries=0
        )
        worker = start_worker("living", pool_args=("-c", "1", "-P", "solo"), lease_seconds=60)
        try:
            wait_until_consuming()
            first = living.panel_seat_add(benchmark=bench, endpoint=weak, samples=4)
            # Generous bounds: 12 model calls and 12 sandboxed judgements on a loaded machine.
            first = wait_for(lambda: _done(first.pk), 300, "the first re-measurement")
            assert first.state == "completed", first.error
            # 0.75 is the bound itself: still inside the gate's band, nothing saturated.
            assert first.summary["saturated"] == 0
            assert not SaturationFlag.objects.exists()
            requests_before = server.request_count

            second = living.panel_seat_add(benchmark=bench, endpoint=strong, samples=4)
            second = wait_for(lambda: _done(second.pk), 300, "the second re-measurement")
            assert second.state == "completed", second.error
            # The weak model's completed run was reused: only the strong model was asked.
            assert server.request_count - requests_before == 12

            # --- re-evolution in one action, run by the engine on the worker --------------
            reevolution = living.reevolution_create(
                release=release, settings=REEVOLUTION_SETTINGS, launch=True
            )
            campaign = wait_for(
                lambda: _settled(reevolution.campaign_id), 600, "the re-evolution campaign"
            )
        finally:
            kill_group(worker, signal.SIGTERM)
        assert server.responder.missing == []
    assert second.trigger == "panel_change" and "strong" in second.reason
    assert sorted(second.summary["newly_saturated"]) == sorted([ids["E-OK"], ids["E-OVERRIDE"]])

    flags = {f.public_id: f for f in SaturationFlag.objects.filter(release=release)}
    assert set(flags) == {ids["E-OK"], ids["E-OVERRIDE"]}
    for flag in flags.values():
        assert flag.pass_at_1 == pytest.approx(7 / 8)  # pooled: 3/4 + 4/4 over 8 samples
        assert flag.bound == 0.75
        assert flag.saturating_models == ["strong"]
        assert flag.remeasurement_id == second.pk

    history = living.difficulty_history(release=release, public_id=ids["E-OK"])
    assert [p.pass_at_1 for p in history] == [pytest.approx(0.75), pytest.approx(7 / 8)]
    assert history[0].measured_at < history[1].measured_at
    low, high = living.wilson_interval(7, 8)
    assert (history[1].low, history[1].high) == (pytest.approx(low), pytest.approx(high))
    s2 = DifficultyPoint.objects.get(remeasurement=second, public_id=ids["S2"])
    assert (s2.passes, s2.samples, s2.pass_at_1) == (0, 8, 0.0)

    share = living.saturation_share(release=release)
    assert (share["saturated"], share["problems"]) == (2, 3)

    assert campaign.state == "completed", campaign.state_reason
    assert campaign.kind == "benchevolver"
    assert campaign.settings["max_iters_per_seed"] == 1
    saturated = {world.problem("E-OK"), world.problem("E-OVERRIDE")}
    assert set(campaign.seed_set.problems.all()) == saturated
    assert {m.endpoint.name for m in campaign.panel.members.all()} == {"weak", "strong"}
    assert campaign.evolver == world.campaign.evolver
    assert set(reevolution.retired) == {ids["E-OK"], ids["E-OVERRIDE"]}
    assert (
        "pass@1 0.88 over the panel > 0.75 (solved by strong)" in reevolution.retired[ids["E-OK"]]
    )
    with pytest.raises(ValidationError):  # nothing left to re-evolve
        living.reevolution_create(release=release)

    # The engine measured the seeds as the living panel does (7/8, level 2), evolved each once
    # and accepted a problem the same panel solves 2 times in 8 (level 4).
    accepted = {}
    for lineage in campaign.lineages.select_related("seed"):
        key = "E-OK" if lineage.seed == world.problem("E-OK") else "E-OVERRIDE"
        assert (lineage.seed_passes, lineage.seed_attempts, lineage.seed_level) == (7, 8, 2)
        (cand,) = lineage.candidates.all()
        assert cand.decision == "accepted", cand.decision_reason
        assert (cand.passes, cand.attempts, cand.level) == (2, 8, 4)
        assert cand.panel_results["strong"]["passes"] == 2
        assert cand.panel_results["weak"]["passes"] == 0
        assert cand.family == canonical_family(MUTATIONS[key]["family"])
        assert any(
            e.get("step") == "vote" and e["outcome"] == "agree" for e in cand.validation_ledger
        )
        problem = cand.accepted_problem
        assert problem.parent == lineage.seed
        assert problem.metadata["campaign"] == campaign.pk
        assert problem.reference_solution.strip() == MUTATIONS[key]["code"].strip()
        assert problem.tests.filter(hidden=True).count() == 8  # 3 + 3 + 1 + 1 generated
        accepted[key] = problem
    roles = Counter(LLMCall.objects.filter(campaign=campaign).values_list("role", flat=True))
    # Per seed: 8 calibration and 8 measurement answers from the panel, one of each stage.
    assert roles == {
        "solver": 32,
        "mutator": 2,
        "writer": 2,
        "test_generator": 2,
        "input_validator": 2,
        "brute_force": 2,
        "oracle": 2,
        "judge": 2,
    }

    # --- review, the gate, the next version --------------------------------------------------
    new_ok, new_override = accepted["E-OK"], accepted["E-OVERRIDE"]
    for problem in (new_ok, new_override):
        review(world, problem, (4, "valid"), (4, "valid"))

    draft = services.release_next(release=release)
    assert campaign in draft.campaigns.all()
    gate = services.gate_run_create(release=draft)
    verdicts = {row["public_id"]: row for row in gate.report}
    # The stale campaign measurement of E-OK passed the gate; the re-measured one does not.
    assert verdicts[ids["E-OK"]]["passed"] is False
    assert verdicts[new_ok.public_id]["passed"] is True
    assert verdicts[new_override.public_id]["passed"] is True
    nxt = services.release_publish(release=services.release_freeze(release=draft))

    changelog = selectors.release_changelog(release=nxt)
    removed = {i.public_id for i in changelog.removed}
    added = {i.public_id for i in changelog.added}
    assert {ids["E-OK"], ids["E-OVERRIDE"]} <= removed
    assert added == {new_ok.public_id, new_override.public_id}
    why = living.changelog_reasons(release=nxt, changelog=changelog)
    assert set(why["retired"]) == {ids["E-OK"], ids["E-OVERRIDE"]}
    assert why["retired"][ids["E-OK"]].startswith("saturated on ")
    assert why["replacing"][new_ok.public_id].startswith(f"re-evolved from saturated {ids['E-OK']}")
    assert ReEvolution.objects.get(release=release).campaign == campaign
