"""One step context: every kind's ``Ctx`` is a ``StepContext`` and asks models through its one
``chat``, keyed in one replay-key format; cassettes recorded under X-Coder's older keys (no
role) still replay."""

from __future__ import annotations

import importlib
import json

import pytest

from evolution.llm import cassette
from evolution.streams.context import StepContext, replay_key
from evolution.streams.kinds import registered

KIND_CONTEXTS = {
    "benchevolver": "evolution.benchevolver.stages.common",
    "reasoning": "reasoning.stages.common",
    "xcoder": "xcoder.stages.common",
    "evosyn": "evosyn.stages.common",
    "frontiersmith": "frontiersmith.stages.common",
}


def test_every_kind_names_its_context_here():
    assert set(KIND_CONTEXTS) == {k.name for k in registered()}


@pytest.mark.parametrize("kind_name", sorted(KIND_CONTEXTS))
def test_every_kinds_context_asks_models_through_the_one_chat(kind_name):
    ctx_class = importlib.import_module(KIND_CONTEXTS[kind_name]).Ctx
    assert issubclass(ctx_class, StepContext)
    # No kind redefines chat: the replay key, the call context and the refusal policy are
    # composed in one place, a kind overriding only the pieces it decides.
    owners = [c for c in ctx_class.__mro__ if "chat" in c.__dict__]
    assert owners == [StepContext]


def test_the_one_replay_key_format():
    assert replay_key("xcoder", "task=0;select", "xcoder_select") == (
        "xcoder;task=0;select;role=xcoder_select"
    )
    assert (
        replay_key("seed=HumanEval/0", "round=1", "judge") == "seed=HumanEval/0;round=1;role=judge"
    )


def test_a_cassette_recorded_under_xcoders_older_keys_still_replays(tmp_path):
    path = tmp_path / "old.jsonl"
    rows = [
        {"role": "xcoder_select", "key": "xcoder;task=0;select", "fingerprint": "a"},
        {"role": "xcoder_solver", "key": "xcoder;task=0;solve;sample=1", "fingerprint": "b"},
        {"role": "judge", "key": "seed=X;round=1;role=judge", "fingerprint": "c"},
    ]
    path.write_text(
        "".join(
            json.dumps({**row, "response": {"content": row["key"], "tokens_in": 1}}) + "\n"
            for row in rows
        )
    )
    loaded = cassette.load(path)
    # Asked with today's keys and unknown fingerprints, the lines are found by role and key.
    select = loaded.find(
        role="xcoder_select",
        key=replay_key("xcoder", "task=0;select", "xcoder_select"),
        fp="other",
    )
    assert select is not None and select.content == "xcoder;task=0;select"
    solve = loaded.find(
        role="xcoder_solver",
        key=replay_key("xcoder", "task=0;solve;sample=1", "xcoder_solver"),
        fp="other",
    )
    assert solve is not None and solve.content == "xcoder;task=0;solve;sample=1"
    # Keys already in the one format are read as they are.
    assert cassette.key_upgrade("judge", "seed=X;round=1;role=judge") == "seed=X;round=1;role=judge"
    assert loaded.find(role="judge", key="seed=X;round=1;role=judge", fp="other") is not None


SINGLE_ENDPOINT_ROLES = {
    # kind: (the kind's row on the context, {role: the row's endpoint column})
    "reasoning": ("rc", {"generation": "generation_endpoint", "answering": "answering_endpoint"}),
    "xcoder": (
        "xc",
        dict.fromkeys(
            importlib.import_module("xcoder.stages.common").GENERATOR_ROLES, "generator_endpoint"
        ),
    ),
    "frontiersmith": (
        "fc",
        {
            **dict.fromkeys(
                importlib.import_module("frontiersmith.stages.common").MUTATOR_ROLES,
                "mutator_endpoint",
            ),
            **dict.fromkeys(
                importlib.import_module("frontiersmith.stages.common").SOLVER_ROLES,
                "solver_endpoint",
            ),
        },
    ),
}


@pytest.fixture
def fake_server():
    from tests.support.fake_openai import FakeOpenAI

    with FakeOpenAI() as server:
        yield server


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind_name", sorted(SINGLE_ENDPOINT_ROLES))
def test_a_role_finds_its_endpoint_one_way(kind_name, fake_server):
    """Stages ask ``ctx.endpoint_for(role)`` (the chat's default) for a role one endpoint
    plays, whether the kind keeps it in a column or in ``Campaign.role_endpoints``; a role
    asked seat by seat (judges, solvers) has no single endpoint."""
    from evolution.streams import runner
    from evolution.streams.kinds import kind_for

    from .worlds import WORLDS

    campaign = WORLDS[kind_name](fake_server)
    kind = kind_for(kind_name)
    ctx = kind.load(runner.active_stream_ids(kind, campaign.pk)[0])
    row_name, roles = SINGLE_ENDPOINT_ROLES[kind_name]
    row = getattr(ctx, row_name)
    for role, column in roles.items():
        assert ctx.endpoint_for(role).pk == getattr(row, f"{column}_id"), role
    with pytest.raises(LookupError):
        ctx.endpoint_for("no such role")


def test_every_frontiersmith_prompt_role_has_its_endpoint():
    from frontiersmith.engine import prompts

    common = importlib.import_module("frontiersmith.stages.common")
    roles = {prompts.load(path.stem).role for path in prompts.PROMPT_DIR.glob("*.md")}
    assert roles == set(common.MUTATOR_ROLES) | set(common.SOLVER_ROLES)
