"""Finding 10 of issue #32 on real LiveCodeBench records (a Codeforces stdin record and a
LeetCode call-based one, ``lcb_world``): a mutator answer without code leaves a candidate
decided on its own page, its call listed there and ledgered unparsable."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from evolution.benchevolver.services import campaign_create

from .test_lcb_references import LCBPanel, advance_to_first_candidate, references_world
from .test_scenarios import running

pytestmark = pytest.mark.django_db(transaction=True)

PROSE = "I would count the mismatches against 'abc' with a simple loop over each test case."


class ProseMutator(LCBPanel):
    def __call__(self, body, headers):
        if headers.get("x-benchforge-role", "") == "mutator":
            super().__call__(body, headers)  # keep the prompt
            return PROSE
        return super().__call__(body, headers)


def test_an_unparsable_mutator_answer_on_a_livecodebench_seed_is_on_its_candidate_page(
    fake_server, personas
):
    from . import lcb_world as w

    fake_server.responder = ProseMutator()
    seed_set, evolver, panel = references_world(fake_server, solutions_content=w.solutions_text())
    campaign = running(campaign_create(name="lcb", seed_set=seed_set, evolver=evolver, panel=panel))
    for lineage in campaign.lineages.all():
        lineage = advance_to_first_candidate(lineage)
        cand = lineage.candidates.get(round=1)
        assert cand.decision == "error"
        assert cand.decision_reason.startswith("mutator answer unparsable")
        call = cand.llm_calls.get(role="mutator")
        assert call.status == "unparsable" and call.error
        page = personas.curator.client.get(reverse("evolution:candidate_detail", args=[cand.pk]))
        text = html.unescape(page.content.decode())
        assert "Model calls</b> (1)" in text and PROSE in text


def test_provider_errors_behind_a_livecodebench_calibration_are_shown_with_its_pass_rate(
    fake_server, personas, settings
):
    """Finding 11 on the records: 'good' answers HTTP 500 three times for its first calibration
    attempt of the Codeforces seed, then answers; the pass rate counts the answer only and the
    lineage page shows the retried errors beside it."""
    from tests.support.fake_openai import Fault, intermittent

    from . import lcb_world as w

    settings.LLM_BACKOFF_BASE_S = 0.001
    settings.LLM_BACKOFF_MAX_S = 0.01
    panel_answers = LCBPanel()
    flaky = intermittent(panel_answers, [Fault.server_error(500)] * 3)
    key = f"seed={w.SHORT_SORT_ID};round=0;model=good;attempt=0;role=solver"

    def respond(body, headers):
        if headers.get("x-benchforge-key", "") == key:
            return flaky(body, headers)
        return panel_answers(body, headers)

    fake_server.responder = respond
    seed_set, evolver, panel = references_world(fake_server, solutions_content=w.solutions_text())
    campaign = running(campaign_create(name="lcb", seed_set=seed_set, evolver=evolver, panel=panel))
    lineage = advance_to_first_candidate(campaign.lineages.get(seed__origin_id=w.SHORT_SORT_ID))
    assert (lineage.seed_passes, lineage.seed_attempts) == (7, 8)  # errors are not attempts
    page = personas.admin.client.get(reverse("evolution:lineage_detail", args=[lineage.pk]))
    text = html.unescape(page.content.decode())
    calibration = text[text.index('id="seed-calibration"') :].split("</dd>")[0]
    assert "3 provider errors retried" in calibration
    first = text[text.index('id="seed-attempts"') :].split("</section>")[0]
    assert "3 provider errors retried" in first[first.index("good#0") :].split("</li>")[0]
