"""The campaign a lab runs first, through the HTTP API with a bearer token: the demo pack's
seeds (and three HumanEval seeds carried over from an export of the installed importer's set),
an evolver and a two-model panel on the loopback model server, a campaign launched and
followed to its end. Shared by the rehearsals of the installed wheel and of the compose stack."""

from __future__ import annotations

import json
import time

import httpx

from evolution.benchevolver.demo import pack

# What the in-process demo decides for each seed of the pack (tests/evolution/benchevolver/
# test_pack_campaign.py asserts the same decisions on the in-process runner).
EXPECTED_DECISIONS = {
    "demo/array-sum": ["accepted", "accepted"],
    "demo/pair-count": ["accepted", "judge_rejected", "duplicate"],
}

# The decisions of a campaign, by seed, in round order (run in the stack's own database).
DECISIONS_SQL = """SELECT p.origin_id, c.decision FROM evolution_candidate c
JOIN evolution_lineage l ON l.id = c.lineage_id
JOIN evolution_problem p ON p.id = l.seed_id
WHERE l.campaign_id = {campaign} ORDER BY p.origin_id, c.round"""


def humaneval_seed_lines(exported_jsonl: str) -> list[str]:
    """The pack's HumanEval seeds from an ``export_problems --set humaneval`` file."""
    lines = [
        line
        for line in exported_jsonl.splitlines()
        if line.strip() and json.loads(line)["origin_id"] in pack.HUMANEVAL_SEEDS
    ]
    assert len(lines) == len(pack.HUMANEVAL_SEEDS), len(lines)
    return lines


def import_pack(api: httpx.Client, humaneval_lines: list[str]) -> dict:
    pack_lines = pack.SEEDS_FILE.read_text(encoding="utf-8").splitlines()
    imported = api.post(
        "/problem-sets/import",
        json={
            "source": "jsonl",
            "content": "\n".join(pack_lines + humaneval_lines),
            "set_name": "demo-pack",
        },
    )
    assert imported.status_code == 200, imported.text
    assert imported.json()["problems_in_set"] == 6
    return imported.json()


def launch_campaign(api: httpx.Client, *, model_base_url: str, name: str) -> int:
    """Endpoints, a panel and a launched campaign over the imported pack; the campaign's id."""

    def endpoint(model: str) -> int:
        made = api.post(
            "/endpoints",
            json={
                "name": f"{name}-{model}",
                "provider": "openai",
                "base_url": model_base_url,
                "model": model,
                "concurrency_limit": 8,
                "timeout_s": 30,
                "max_retries": 1,
            },
        )
        assert made.status_code == 201, made.text
        return made.json()["id"]

    evolver = endpoint("evolver")
    members = [{"endpoint_id": endpoint(m), "attempts": 4} for m in pack.SOLVER_MODELS]
    panel = api.post("/panels", json={"name": f"{name}-panel", "members": members})
    assert panel.status_code == 201, panel.text
    campaign = api.post(
        "/campaigns",
        json={
            "name": name,
            "seed_set": "demo-pack",
            "evolver_id": evolver,
            "panel_id": panel.json()["id"],
            "settings": pack.DEMO_SETTINGS,
            "launch": True,
        },
    )
    assert campaign.status_code == 201, campaign.text
    return campaign.json()["id"]


def wait_for_end(api: httpx.Client, campaign_id: int, *, timeout: float = 900) -> dict:
    """The campaign's state once it is neither queued nor running (or at the time-out)."""
    deadline = time.monotonic() + timeout
    state: dict = {}
    while time.monotonic() < deadline:
        state = api.get(f"/campaigns/{campaign_id}").json()
        if state["state"] not in ("queued", "running"):
            break
        time.sleep(1)
    return state


def decided(rows) -> dict[str, list[str]]:
    """{seed: [decision, ...]} from DECISIONS_SQL's rows."""
    out: dict[str, list[str]] = {}
    for origin_id, decision in rows:
        out.setdefault(origin_id, []).append(decision)
    return out


def assert_expected_decisions(decisions: dict[str, list[str]]) -> None:
    for origin_id, expected in EXPECTED_DECISIONS.items():
        assert decisions.get(origin_id) == expected, (origin_id, decisions)
