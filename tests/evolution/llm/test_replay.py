"""The replay provider (cassettes) and record mode."""

from __future__ import annotations

import json
import os
import threading

import pytest
from django.db import connection

from evolution.llm import CallContext, LLMClient, LLMError, ReplayMissError
from evolution.llm.cassette import append, fingerprint, load
from evolution.models import Campaign, LLMCall
from tests.factories import CampaignFactory, ModelEndpointFactory

MESSAGES = [{"role": "user", "content": "make HumanEval/0 harder"}]


def _line(role, key, fp, content, tokens_in=11, tokens_out=22):
    return json.dumps(
        {
            "role": role,
            "key": key,
            "fingerprint": fp,
            "response": {"content": content, "tokens_in": tokens_in, "tokens_out": tokens_out},
        }
    )


@pytest.fixture
def cassette_dir(settings, tmp_path):
    settings.LLM_CASSETTE_DIR = tmp_path
    return tmp_path


@pytest.fixture
def replay_endpoint(db, cassette_dir):
    return ModelEndpointFactory(provider="replay", base_url="", model="m1", cassette="demo.jsonl")


def _write(path, *lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def test_it_answers_from_the_exchange_with_the_same_fingerprint(replay_endpoint, cassette_dir):
    fp = fingerprint(model="m1", messages=MESSAGES)
    _write(
        cassette_dir / "demo.jsonl",
        _line("mutator", "other-key", "0" * 64, "wrong one"),
        _line("mutator", "recorded-key", fp, "the recorded answer"),
    )
    campaign = CampaignFactory()

    result = LLMClient(replay_endpoint, CallContext(campaign_id=campaign.pk)).chat(
        MESSAGES, role="mutator", replay_key="a different key"
    )

    assert result.content == "the recorded answer"
    assert (result.tokens_in, result.tokens_out, result.latency_ms) == (11, 22, 0)
    assert result.replayed is True
    call = LLMCall.objects.get(pk=result.call_id)
    assert call.replayed and call.status == "ok" and call.latency_ms == 0
    campaign.refresh_from_db()
    assert campaign.replayed is True
    assert (campaign.calls_made, campaign.tokens_in, campaign.tokens_out) == (1, 11, 22)


def test_it_falls_back_to_role_and_key_when_no_fingerprint_matches(replay_endpoint, cassette_dir):
    _write(
        cassette_dir / "demo.jsonl",
        _line("judge", "seed=1;round=2", "0" * 64, "judge said no"),
        _line("solver", "seed=1;round=2", "1" * 64, "solver code"),
    )

    result = LLMClient(replay_endpoint).chat(MESSAGES, role="solver", replay_key="seed=1;round=2")

    assert result.content == "solver code"


def test_it_keeps_repeated_identical_prompts_apart_by_key(replay_endpoint, cassette_dir):
    fp = fingerprint(model="m1", messages=MESSAGES)
    _write(
        cassette_dir / "demo.jsonl",
        *(_line("solver", f"attempt={n}", fp, f"attempt {n}") for n in range(1, 5)),
    )
    client = LLMClient(replay_endpoint)

    answers = [
        client.chat(MESSAGES, role="solver", replay_key=f"attempt={n}").content
        for n in (3, 1, 4, 2)
    ]

    assert answers == ["attempt 3", "attempt 1", "attempt 4", "attempt 2"]


def test_it_records_a_miss_as_a_failed_replayed_call(replay_endpoint, cassette_dir):
    _write(cassette_dir / "demo.jsonl", _line("judge", "k", "0" * 64, "unrelated"))

    with pytest.raises(ReplayMissError, match="no recorded response for role=solver key=k9"):
        LLMClient(replay_endpoint).chat(MESSAGES, role="solver", replay_key="k9")

    call = LLMCall.objects.get(endpoint=replay_endpoint)
    assert (call.status, call.replayed) == ("error", True)
    assert "no recorded response" in call.error


def test_it_reports_a_missing_cassette_file_by_path(replay_endpoint):
    with pytest.raises(LLMError, match="demo.jsonl does not exist"):
        LLMClient(replay_endpoint).chat(MESSAGES, role="solver")
    assert LLMCall.objects.get(endpoint=replay_endpoint).status == "error"


def test_it_names_the_line_of_a_malformed_cassette(replay_endpoint, cassette_dir):
    _write(cassette_dir / "demo.jsonl", _line("judge", "k", "0" * 64, "fine"), "{not json")

    with pytest.raises(LLMError, match="line 2 is malformed"):
        LLMClient(replay_endpoint).chat(MESSAGES, role="judge", replay_key="k")


def test_it_rereads_a_cassette_that_changed_on_disk(cassette_dir):
    path = cassette_dir / "grow.jsonl"
    _write(path, _line("solver", "a", "0" * 64, "first"))
    first = load(path)
    assert load(path) is first  # cached while unchanged

    append(path, role="solver", key="b", fp="1" * 64, content="second", tokens_in=1, tokens_out=2)
    os.utime(path, ns=(0, path.stat().st_mtime_ns + 1_000_000))

    again = load(path)
    assert again is not first
    assert again.find(role="solver", key="b", fp="x").content == "second"


def test_it_resolves_an_absolute_cassette_path_inside_the_cassette_dir(db, cassette_dir):
    inside = cassette_dir / "sub" / "abs.jsonl"
    inside.parent.mkdir()
    _write(inside, _line("solver", "k", "0" * 64, "from an absolute path"))
    endpoint = ModelEndpointFactory(provider="replay", base_url="", cassette=str(inside))

    assert LLMClient(endpoint).chat(MESSAGES, role="solver", replay_key="k").content == (
        "from an absolute path"
    )


def test_it_refuses_a_cassette_outside_the_cassette_roots(db, cassette_dir, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "abs.jsonl"
    _write(elsewhere, _line("solver", "k", "0" * 64, "must never be read"))
    # Saved behind the model's validation (raw update), as an old row or SQL would be.
    endpoint = ModelEndpointFactory(provider="replay", base_url="", cassette="demo.jsonl")
    type(endpoint).objects.filter(pk=endpoint.pk).update(cassette=str(elsewhere))
    endpoint.refresh_from_db()

    with pytest.raises(LLMError, match="refused"):
        LLMClient(endpoint).chat(MESSAGES, role="solver", replay_key="k")


def test_record_mode_captures_exchanges_that_replay_returns_offline(
    db, fake, settings, cassette_dir
):
    settings.LLM_RECORD = True
    live = ModelEndpointFactory(base_url=fake.base_url, model="m1", cassette="captured.jsonl")
    fake.script("solver", ["live answer one", "live answer two"])
    LLMClient(live).chat(MESSAGES, role="solver", replay_key="attempt=1")
    LLMClient(live).chat(MESSAGES, role="solver", replay_key="attempt=2")

    rows = [json.loads(line) for line in (cassette_dir / "captured.jsonl").read_text().splitlines()]
    assert [r["key"] for r in rows] == ["attempt=1", "attempt=2"]
    assert rows[0]["fingerprint"] == fingerprint(model="m1", messages=MESSAGES)
    assert rows[0]["role"] == "solver"

    settings.LLM_RECORD = False
    offline = ModelEndpointFactory(
        provider="replay", base_url="", model="m1", cassette="captured.jsonl"
    )
    replayed = LLMClient(offline).chat(MESSAGES, role="solver", replay_key="attempt=2")
    assert replayed.content == "live answer two"
    assert replayed.replayed is True
    assert Campaign.objects.filter(replayed=True).count() == 0


def test_record_mode_is_off_unless_enabled(db, fake, cassette_dir):
    live = ModelEndpointFactory(base_url=fake.base_url, cassette="captured.jsonl")

    LLMClient(live).chat(MESSAGES, role="solver")

    assert not (cassette_dir / "captured.jsonl").exists()


@pytest.mark.django_db(transaction=True)
def test_record_mode_keeps_lines_whole_under_concurrent_writers(fake, settings, cassette_dir):
    settings.LLM_RECORD = True
    big = "y" * 20_000  # larger than a pipe buffer, so interleaving would show
    fake.responder = lambda body, headers: big + body["messages"][0]["content"]
    live = ModelEndpointFactory(base_url=fake.base_url, cassette="busy.jsonl", concurrency_limit=8)

    def work(n):
        try:
            for i in range(5):
                LLMClient(live).chat(
                    [{"role": "user", "content": f"{n}-{i}"}], role="solver", replay_key=f"{n}-{i}"
                )
        finally:
            connection.close()

    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    rows = [json.loads(line) for line in (cassette_dir / "busy.jsonl").read_text().splitlines()]
    assert len(rows) == 40
    assert all(r["response"]["content"] == big + r["key"] for r in rows)
