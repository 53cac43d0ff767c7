"""A failed model call on the leaderboard is an infrastructure error, never a wrong answer:
asked again, left out of every pass rate, counted on the leaderboard page; an endpoint that
keeps failing fails the run naming it, and running it again asks only what is missing. Over
real HTTP (the loopback model server) and the real sandbox."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from evolution.models import ModelEndpoint
from releases import leaderboard, services
from releases.models import LeaderboardSample, RunState
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI, Fault, intermittent

from .builders import SUM_CODE


def _right(body, headers):
    return fenced(SUM_CODE)


def _endpoint(server, name: str = "flaky-model") -> ModelEndpoint:
    return ModelEndpoint.objects.create(
        name=name,
        provider="openai",
        base_url=server.base_url,
        model="flaky-model",
        concurrency_limit=4,
        timeout_s=2,
        max_retries=0,  # every failure reaches the leaderboard: the client does not hide it
        release_date=(timezone.now() - timedelta(days=1)).date(),
    )


def test_failed_calls_are_asked_again_and_never_count_as_wrong(frozen_tx, client):
    """Every sample's first call fails (a 503, a 401, a time-out: three keys each see one);
    the model answers right when asked again. The run completes with the pass rates of the
    answers alone (all right: pass@1 1.0 on every item, nothing "NC"), and the page counts the
    failed calls."""
    world, release = frozen_tx
    faults = [Fault.server_error(503), Fault.http_status(401), Fault.timeout(4.0)]

    with FakeOpenAI() as server:
        # Each key's first request fails with one of the three faults in turn.
        by_key: dict[str, int] = {}

        def responder(body, headers):
            key = headers.get("x-benchforge-key", "")
            if key not in by_key:
                by_key[key] = len(by_key)
                return faults[by_key[key] % len(faults)]
            return _right(body, headers)

        server.responder = responder
        run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=2)
        run = leaderboard.run_execute(run_id=run.pk)
        assert run.state == RunState.COMPLETED, run.error
        items = release.item_count
        assert server.request_count == 2 * items * 2  # each sample: one failure, one answer
    s = run.summary
    assert s["infra_errors"] == items * 2
    assert all((r["n"], r["c"]) == (2, 2) for r in s["per_item"])
    assert s["pass"]["1"]["value"] == pytest.approx(1.0)
    verdicts = set(LeaderboardSample.objects.filter(run=run).values_list("verdict", flat=True))
    assert verdicts == {"AC"}
    # The history of each sample keeps the failure's status and message.
    statuses = sorted(
        e["status"] or 0
        for d in LeaderboardSample.objects.filter(run=run).values_list("details", flat=True)
        for e in d["infra_errors"]
    )
    assert set(statuses) == {0, 401, 503}

    services.release_publish(release=release)
    page = client.get(
        reverse("releases:public_leaderboard", args=[release.benchmark.slug, release.version])
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert f"{items * 2} failed calls asked again, not counted" in html


def test_an_endpoint_that_keeps_failing_fails_the_run_naming_it_and_resumes(frozen_tx):
    """One item's calls always answer 503: after the rounds of asking again the run fails
    with a reason naming the endpoint and the status, its samples are "IE" (not "NC"), the
    other items' samples are judged; once the endpoint answers, running again asks only the
    failed samples and completes with every answer counted."""
    world, release = frozen_tx
    broken = world.problem("E-OK").public_id
    state = {"down": True}

    def responder(body, headers):
        if state["down"] and f"item={broken};" in headers.get("x-benchforge-key", ""):
            return Fault.server_error(503)
        return _right(body, headers)

    with FakeOpenAI() as server:
        server.responder = responder
        run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=2)
        run = leaderboard.run_execute(run_id=run.pk)
        assert run.state == RunState.FAILED
        assert "endpoint 'flaky-model' keeps failing" in run.error
        assert "2 sample(s) still unanswered after 3 rounds; last: HTTP 503" in run.error
        samples = LeaderboardSample.objects.filter(run=run)
        assert set(samples.filter(item__public_id=broken).values_list("verdict", flat=True)) == {
            "IE"
        }
        assert set(samples.exclude(item__public_id=broken).values_list("verdict", flat=True)) == {
            "AC"
        }
        items = release.item_count
        # Round 1 asks every sample; rounds 2 and 3 the two failing ones.
        assert server.request_count == items * 2 + 2 * 2

        state["down"] = False
        server.reset_counters()
        run = leaderboard.run_execute(run_id=run.pk)
        assert run.state == RunState.COMPLETED, run.error
        assert server.request_count == 2  # only the failed samples
    per = {r["public_id"]: r for r in run.summary["per_item"]}
    assert (per[broken]["n"], per[broken]["c"]) == (2, 2)
    assert run.summary["infra_errors"] == 2 * 3


def test_flaky_but_answering_endpoint_matches_a_clean_run(frozen_tx):
    """The same model, once behind a flaky endpoint (a 503 before each answer) and once
    behind a clean one, gets the same scores."""
    _, release = frozen_tx
    with FakeOpenAI() as server:
        server.responder = intermittent(_right, [Fault.server_error(503)])
        flaky = leaderboard.run_execute(
            run_id=leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=1).pk
        )
        server.responder = _right
        clean_endpoint = _endpoint(server, name="clean")
        clean = leaderboard.run_execute(
            run_id=leaderboard.run_create(release=release, endpoint=clean_endpoint, samples=1).pk
        )
    assert flaky.state == clean.state == RunState.COMPLETED
    assert flaky.summary["pass"] == clean.summary["pass"]
    assert flaky.summary["infra_errors"] == release.item_count
    assert clean.summary["infra_errors"] == 0


def test_a_sandbox_failure_is_judged_again_and_a_lasting_one_is_named(
    frozen_tx, settings, monkeypatch
):
    """A sample whose judging failed in the sandbox itself (verdict SE: not the model's fault)
    is judged once more, alone: a passing failure leaves no trace in the scores. A sandbox
    that keeps failing fails the run with what the sandbox said."""
    from evolution.sandbox import batch

    _, release = frozen_tx
    real = batch.judge_many
    lost = []

    def first_lost(jobs, **kwargs):
        # The first job is judged by a sandbox that cannot start its interpreter.
        jobs = list(jobs)
        with override_settings(SANDBOX_PYTHON="/nonexistent/python3"):
            lost.extend(real(jobs[:1], **kwargs))
        yield from lost
        yield from real(jobs[1:], **kwargs)

    with FakeOpenAI() as server:
        server.responder = _right
        monkeypatch.setattr(batch, "judge_many", first_lost)
        run = leaderboard.run_create(release=release, endpoint=_endpoint(server), samples=1)
        run = leaderboard.run_execute(run_id=run.pk)
        assert [r.verdict for r in lost] == ["SE"]
        assert run.state == RunState.COMPLETED, run.error
        assert set(LeaderboardSample.objects.filter(run=run).values_list("verdict", flat=True)) == {
            "AC"
        }

        monkeypatch.setattr(batch, "judge_many", real)
        settings.SANDBOX_PYTHON = "/nonexistent/python3"
        run = leaderboard.run_create(release=release, endpoint=_endpoint(server, "m2"), samples=1)
        run = leaderboard.run_execute(run_id=run.pk)
    assert run.state == RunState.FAILED
    assert "SandboxUnavailable: sandbox failure while judging sample" in run.error
    assert "/nonexistent/python3" in run.error, run.error
