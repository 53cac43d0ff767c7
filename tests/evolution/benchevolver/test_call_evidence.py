"""What the pages show of the model calls behind a candidate and a pass rate, through the real
engine on the loopback server: the calls that made a candidate are listed on its page (the
mutator's and the writer's too, made before the candidate existed), an answer that could not be
parsed is ledgered ``unparsable`` with the parse error, and the provider errors retried behind
panel attempts are shown next to every pass rate they were left out of."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from evolution.benchevolver.demo import pack
from evolution.benchevolver.services import campaign_create, lineage_advance
from evolution.benchevolver.stages import common
from evolution.models import LLMCall
from tests.support.fake_openai import Fault, intermittent

from .helpers import KeyedResponder, build_world
from .test_scenarios import (
    SETTINGS,
    advance_until_done,
    put,
    running,
    sort_seed_evolves_with_family,
)

pytestmark = pytest.mark.django_db(transaction=True)

SEED = "demo/sort-numbers"
PROSE = (
    "I would make the problem harder by asking for the k-th smallest distinct value, "
    "but I will describe the idea rather than write the program."
)


def _campaign(fake_server, responder, name="evidence"):
    fake_server.responder = responder
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    campaign = running(
        campaign_create(
            name=name, seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    return campaign, advance_until_done(campaign.lineages.get())


def _page(client, name, pk) -> str:
    response = client.get(reverse(f"evolution:{name}", args=[pk]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_an_unparsable_mutator_answer_is_ledgered_and_listed_on_the_candidate_page(
    fake_server, personas
):
    table = pack.responses()
    put(table, SEED, "mutator", "round=1", PROSE)
    campaign, lineage = _campaign(fake_server, KeyedResponder(table))

    cand = lineage.candidates.get(round=1)
    assert cand.decision == "error"
    assert cand.decision_reason.startswith("mutator answer unparsable")
    calls = list(cand.llm_calls.order_by("id"))
    assert [(c.role, c.status) for c in calls] == [("mutator", "unparsable")]
    assert calls[0].error.startswith("mutator answer unparsable: no JSON object")
    assert calls[0].answer_text == PROSE
    # Nothing of the proposal is left unattached in the ledger.
    assert not LLMCall.objects.filter(
        campaign=campaign, role__in=("mutator", "writer"), candidate__isnull=True
    ).exists()

    page = _page(personas.admin.client, "candidate_detail", cand.pk)
    assert "Model calls</b> (1)" in page
    row = page[page.index('id="model-calls"') :]
    assert "mutator" in row and "unparsable" in row
    assert "mutator answer unparsable: no JSON object" in row
    assert PROSE in row

    # The campaign's ledger counts know the status: its page, the cost chart, the endpoint.
    page = _page(personas.admin.client, "campaign_detail", campaign.pk)
    stats = page[page.index('id="stat-calls"') :].split("</div>")[0]
    assert "1 unparsable" in stats
    cost = personas.admin.client.get(
        reverse("evolution:campaign_chart_json", args=[campaign.pk, "cost"])
    ).json()
    cost = cost.get("data", cost)
    mutator = next(r for r in cost["roles"] if r["role"] == "mutator")
    assert (mutator["calls"], mutator["unparsable"], mutator["failed"]) == (1, 1, 0)
    assert cost["unparsable"] == 1
    endpoint = personas.admin.client.get(
        reverse("staff:endpoint_detail", args=[campaign.evolver_id])
    ).content.decode()
    assert "1 answer could not be parsed" in endpoint


def test_an_unparsable_writer_answer_keeps_the_mutator_call_with_the_candidate(
    fake_server, personas
):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    put(table, SEED, "writer", "round=1", "The statement is: sort the distinct values.")
    _, lineage = _campaign(fake_server, KeyedResponder(table))

    cand = lineage.candidates.get(round=1)
    assert cand.decision == "error"
    assert cand.decision_reason.startswith("writer answer unparsable")
    calls = [(c.role, c.status) for c in cand.llm_calls.order_by("id")]
    assert calls == [("mutator", "ok"), ("writer", "unparsable")]
    page = _page(personas.curator.client, "candidate_detail", cand.pk)
    assert "Model calls</b> (2)" in page
    assert "The statement is: sort the distinct values." in page


def test_a_panel_answer_without_a_program_is_a_failed_attempt_and_an_unparsable_call(
    fake_server,
):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    model = pack.SOLVER_MODELS[1]
    put(table, SEED, "solver", f"round=1;model={model};attempt=3", PROSE)
    _, lineage = _campaign(fake_server, KeyedResponder(table))

    cand = lineage.candidates.get(round=1)
    attempt = cand.solver_attempts.get(endpoint__name=model, attempt_index=3)
    assert attempt.verdict == "NC"  # counted: the model answered, without a program
    call = LLMCall.objects.get(pk=attempt.details["call_id"])
    assert (call.status, call.candidate_id) == ("unparsable", cand.pk)
    assert (
        call.error == attempt.details["parse_error"] == "no fenced python code block in the answer"
    )
    others = cand.llm_calls.filter(role="solver").exclude(pk=call.pk)
    assert others.count() == 7 and set(others.values_list("status", flat=True)) == {"ok"}


@pytest.mark.parametrize(
    ("role", "key"),
    [("test_generator", "round=1;try=0"), ("brute_force", "round=1;repair=0")],
)
def test_unparsable_generator_and_witness_answers_are_ledgered_unparsable(fake_server, role, key):
    """A test generator or brute force answering prose: its call is ledgered unparsable with
    the parse error (it read ``ok``)."""
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    put(table, SEED, role, key, "I would do it with a loop, really.")
    _, lineage = _campaign(fake_server, KeyedResponder(table))

    cand = lineage.candidates.get(round=1)
    call = cand.llm_calls.filter(role=role).order_by("id").first()
    assert call.status == "unparsable", (call.status, cand.decision_reason)
    assert call.error


def test_an_unparsable_judge_answer_is_ledgered_unparsable(fake_server):
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    put(table, SEED, "judge", "round=1", "Looks like a fine problem to me.")
    _, lineage = _campaign(fake_server, KeyedResponder(table))

    cand = lineage.candidates.get(round=1)
    assert cand.decision == "error"
    assert cand.decision_reason.startswith("judge answer unparsable")
    call = cand.llm_calls.get(role="judge")
    assert call.status == "unparsable"
    assert call.error == "judge answer unparsable: no JSON object found in the answer"


def test_calls_made_before_a_crash_are_attached_to_the_candidate_of_their_round(
    fake_server, monkeypatch
):
    """A worker that dies after the mutator answered and before the candidate was stored leaves
    a call of no candidate; the round's rerun stores the candidate with both calls."""
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    responder = KeyedResponder(table)
    fake_server.responder = responder
    seed_set, evolver, panel = build_world(fake_server, seeds=(SEED,))
    campaign = running(
        campaign_create(
            name="crash", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    real_chat = common.Ctx.chat
    crashed = []

    def dying_chat(self, role, *args, **kwargs):
        answer = real_chat(self, role, *args, **kwargs)
        if role == "writer" and not crashed:
            crashed.append(answer.call_id)
            raise SystemExit("worker killed")
        return answer

    monkeypatch.setattr(common.Ctx, "chat", dying_chat)
    lineage = campaign.lineages.get()
    with pytest.raises(SystemExit):
        for _ in range(50):
            lineage_advance(lineage_id=lineage.pk)
    monkeypatch.undo()
    assert not lineage.candidates.exists()
    orphans = LLMCall.objects.filter(campaign=campaign, candidate__isnull=True)
    assert set(orphans.filter(role__in=("mutator", "writer")).values_list("role", flat=True)) == {
        "mutator",
        "writer",
    }
    lineage = advance_until_done(lineage)
    cand = lineage.candidates.get(round=1)
    proposal = cand.llm_calls.filter(role__in=("mutator", "writer")).order_by("id")
    assert [c.role for c in proposal] == ["mutator", "writer", "mutator", "writer"]
    assert crashed[0] in {c.pk for c in proposal}


FLAKY_MODEL = pack.SOLVER_MODELS[0]


def _flaky_first_attempts(table: dict) -> object:
    """solver-a's attempt 0, at calibration and at round 1: HTTP 500 three times, then the
    scripted answer (the endpoint retries once: a failed call, then a call answered on its
    second request)."""
    keyed = KeyedResponder(table)
    flaky = intermittent(keyed, [Fault.server_error(500)] * 3)
    keys = {f"seed={SEED};round={r};model={FLAKY_MODEL};attempt=0;role=solver" for r in (0, 1)}

    def respond(body, headers):
        key = headers.get("x-benchforge-key", headers.get("X-BenchForge-Key", ""))
        return flaky(body, headers) if key in keys else keyed(body, headers)

    return respond


def test_provider_errors_retried_behind_panel_attempts_are_shown_with_the_pass_rates(
    fake_server, personas, settings
):
    settings.LLM_BACKOFF_BASE_S = 0.001
    settings.LLM_BACKOFF_MAX_S = 0.01
    table = pack.responses()
    sort_seed_evolves_with_family(table, "deduplication", passes_per_model=1)
    campaign, lineage = _campaign(fake_server, _flaky_first_attempts(table))

    cand = lineage.candidates.get(round=1)
    assert cand.attempts == 8  # the failed calls are not attempts
    flaky = LLMCall.objects.filter(candidate=cand, endpoint_name=FLAKY_MODEL, role="solver")
    assert sorted((c.status, c.tries) for c in flaky if c.tries > 1) == [("error", 2), ("ok", 2)]

    page = _page(personas.admin.client, "candidate_detail", cand.pk)
    panel = page[page.index('id="panel"') : page.index("</table>", page.index('id="panel"'))]
    row = panel[panel.index(f"<td>{FLAKY_MODEL}</td>") :].split("</tr>")[0]
    assert "3 provider errors retried" in row
    other = panel[panel.index(f"<td>{pack.SOLVER_MODELS[1]}</td>") :].split("</tr>")[0]
    assert "provider error" not in other
    evidence = page[page.index('id="evidence"') :].split("</dd>")[0]
    assert "3 provider errors retried" in evidence

    page = _page(personas.admin.client, "lineage_detail", lineage.pk)
    calibration = page[page.index('id="seed-calibration"') :].split("</dd>")[0]
    assert "3 provider errors retried" in calibration
    attempts = page[page.index('id="seed-attempts"') :].split("</section>")[0]
    first = attempts[attempts.index(f"{FLAKY_MODEL}#0") :].split("</li>")[0]
    assert "3 provider errors retried" in first
    assert "provider error" not in attempts[attempts.index(f"{FLAKY_MODEL}#1") :].split("</li>")[0]
    rounds = page[page.index('id="candidates"') :].split("</table>")[0]
    assert "3 provider errors retried" in rounds

    page = _page(personas.admin.client, "campaign_detail", campaign.pk)
    lineages = page[page.index('id="lineages"') :].split("</table>")[0]
    assert "3 provider errors retried" in lineages


def test_failed_faithfulness_calls_are_shown_with_the_faithfulness_pass_rates(
    fake_server, personas, settings
):
    settings.LLM_BACKOFF_BASE_S = 0.001
    settings.LLM_BACKOFF_MAX_S = 0.01
    keyed = KeyedResponder(pack.responses())
    failing = intermittent(keyed, [Fault.server_error(500)] * 2)
    key = "seed=HumanEval/0;round=1;repair=0;attempt=0;role=faithfulness"

    def respond(body, headers):
        return (
            failing(body, headers)
            if headers.get("x-benchforge-key") == key
            else keyed(body, headers)
        )

    fake_server.responder = respond
    seed_set, evolver, panel = build_world(fake_server, seeds=("HumanEval/0",))
    campaign = running(
        campaign_create(
            name="faithful", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    cand = advance_until_done(campaign.lineages.get()).candidates.get(round=1)
    faith = next(e for e in cand.validation_ledger if e["step"] == "faithfulness")
    assert len(faith["pass_rates"]) == 2 and faith["infrastructure_errors"] == 1

    page = _page(personas.admin.client, "candidate_detail", cand.pk)
    ledger = page[page.index('id="ledger"') :].split("</ol>")[0]
    line = ledger[ledger.index("<b>faithfulness</b>") :].split("</li>")[0]
    assert "1 solver call failed, not counted" in line
    assert "2 provider errors" in page[page.index('id="faithfulness-errors"') :].split("</p>")[0]
