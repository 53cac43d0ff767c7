"""The cost ledger never under-reports: a call is logged before its request leaves and
completed after, so a worker that dies mid-call still leaves the request in the ledger."""

from __future__ import annotations

import pytest

from evolution.llm import LLMClient
from evolution.llm import client as client_module
from evolution.models import LLMCall

MESSAGES = [{"role": "user", "content": "add two numbers"}]


class WorkerDied(BaseException):
    """What a SIGKILL looks like from inside: nothing after this point runs, no except
    Exception clause sees it."""


def test_a_worker_dying_mid_call_leaves_the_request_in_the_ledger(endpoint, fake, monkeypatch):
    seen_before_sending = []

    def dies_on_the_wire(endpoint, *, body, headers, slot, sleep):
        # The provider has the request now; the ledger must already hold it.
        seen_before_sending.extend(LLMCall.objects.filter(endpoint=endpoint).values("status"))
        raise WorkerDied

    monkeypatch.setattr(client_module, "post_chat", dies_on_the_wire)
    with pytest.raises(WorkerDied):
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert seen_before_sending == [{"status": "sent"}]
    call = LLMCall.objects.get(endpoint=endpoint)
    assert call.status == "sent" and call.role == "solver"
    assert call.request_text  # what was sent is kept


def test_a_completed_call_is_one_row_not_an_intent_and_a_result(endpoint, fake):
    result = LLMClient(endpoint).chat(MESSAGES, role="solver")

    calls = list(LLMCall.objects.filter(endpoint=endpoint))
    assert [c.pk for c in calls] == [result.call_id]
    assert calls[0].status == "ok" and calls[0].tries == 1


def test_a_failed_call_completes_its_intent_as_an_error(endpoint, fake):
    from tests.support.fake_openai import Fault

    fake.script("solver", [Fault.server_error()] * 5)
    with pytest.raises(Exception):  # noqa: B017 - the transport error type is not the point
        LLMClient(endpoint).chat(MESSAGES, role="solver")

    assert list(LLMCall.objects.filter(endpoint=endpoint).values_list("status", flat=True)) == [
        "error"
    ]
