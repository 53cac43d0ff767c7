"""A campaign ends with the same decisions when it runs again on a replay of its model answers:
the exchanges of a first run over the loopback server are written to a cassette, a second
campaign on replay endpoints reads them, and every decision (computed afresh: execution,
votes, panel verdicts) comes out the same: here over LiveCodeBench records (a LeetCode
call-based seed, triangulated with the LiveCodeBench column); the demo pack's committed
cassette, what `make demo` replays, is checked against the pack's live run in
test_pack_campaign.py."""

from __future__ import annotations

import json

import pytest

from evolution.benchevolver.services import campaign_create
from evolution.models import ModelEndpoint, Panel, PanelMember
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline

from . import benchmark_world as bw
from . import lcb_world as w
from .test_benchmark_columns import CountPairsModel

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


class Recording:
    """Answers as ``inner`` does and keeps every answer given, by (role, replay key)."""

    def __init__(self, inner):
        self.inner = inner
        self.answers: dict[tuple[str, str], str] = {}

    def __call__(self, body, headers):
        answer = self.inner(body, headers)
        if isinstance(answer, str):
            lower = {k.lower(): v for k, v in headers.items()}
            self.answers[(lower["x-benchforge-role"], lower["x-benchforge-key"])] = answer
        return answer

    def write(self, path) -> None:
        lines = [
            json.dumps(
                {
                    "role": role,
                    "key": key,
                    "fingerprint": "",
                    "response": {"content": content, "tokens_in": 1, "tokens_out": 1},
                }
            )
            for (role, key), content in sorted(self.answers.items())
        ]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def replay_world(cassette: str, evolver: ModelEndpoint, panel: Panel):
    """Replay endpoints with the same model names (the replay keys name them)."""

    def replay(original: ModelEndpoint) -> ModelEndpoint:
        return ModelEndpoint.objects.create(
            name=f"{original.name} (replayed)",
            provider="replay",
            model=original.model,
            cassette=cassette,
            concurrency_limit=8,
        )

    replayed = Panel.objects.create(name=f"{panel.name} (replayed)")
    for member in panel.members.select_related("endpoint"):
        PanelMember.objects.create(
            panel=replayed, endpoint=replay(member.endpoint), attempts=member.attempts
        )
    return replay(evolver), replayed


def campaign_decisions(campaign) -> list[tuple[str, int, str]]:
    return sorted(
        (lineage.seed.origin_id, cand.round, cand.decision)
        for lineage in campaign.lineages.select_related("seed")
        for cand in lineage.candidates.all()
    )


def _run(**kwargs):
    campaign = campaign_create(**kwargs)
    campaign_launch(campaign_id=campaign.pk)
    return run_inline(campaign_id=campaign.pk, workers=2)


def test_a_livecodebench_campaign_ends_with_the_same_decisions_on_replay(
    fake_server, settings, tmp_path
):
    settings.LLM_CASSETTE_DIR = tmp_path
    recording = Recording(CountPairsModel())
    fake_server.responder = recording
    seed_set = bw.import_world("leetcode", only=(bw.LEETCODE_ID,))
    evolver = w.endpoint(fake_server, "evolver")
    panel = w.panel_of("p", [w.endpoint(fake_server, "good"), w.endpoint(fake_server, "shaky")])
    run_settings = {
        "target_eval_k": 2,
        "execution_timeout": 1.5,
        "max_iters_per_seed": 2,
        "program_gen_large_inputs": 2,
        "program_gen_stress_inputs": 1,
    }
    first = _run(name="lcb", seed_set=seed_set, evolver=evolver, panel=panel, settings=run_settings)
    assert first.state in ("completed", "failed"), first.state_reason
    decided = campaign_decisions(first)
    assert decided and all(d for _, _, d in decided)

    recording.write(tmp_path / "lcb.jsonl")
    replay_evolver, replay_panel = replay_world("lcb.jsonl", evolver, panel)
    second = _run(
        name="lcb replayed",
        seed_set=seed_set,
        evolver=replay_evolver,
        panel=replay_panel,
        settings=run_settings,
    )
    assert (second.state, campaign_decisions(second)) == (first.state, decided)
    assert second.replayed
