"""Endpoints and panels from the terminal, validated as the admin pages validate them, so a lab
can script what `run_campaign --create` names (issue: there was no command for either)."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from evolution.models import ModelEndpoint, Panel

pytestmark = pytest.mark.django_db


def _run(*args) -> str:
    from io import StringIO

    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def test_endpoints_and_a_panel_are_made_and_listed():
    out = _run(
        "endpoint",
        "good",
        "--base-url",
        "http://127.0.0.1:8001/v1",
        "--model",
        "good-1",
        "--concurrency",
        "8",
        "--timeout",
        "30",
    )
    assert out.startswith("endpoint good registered")
    _run("endpoint", "replayed", "--provider", "replay", "--model", "m", "--cassette", "demo.jsonl")
    good = ModelEndpoint.objects.get(name="good")
    assert (good.base_url, good.model, good.concurrency_limit, good.timeout_s) == (
        "http://127.0.0.1:8001/v1",
        "good-1",
        8,
        30.0,
    )
    # An update changes what is given and keeps the rest.
    assert _run("endpoint", "good", "--model", "good-2").startswith("endpoint good updated")
    good.refresh_from_db()
    assert (good.model, good.concurrency_limit) == ("good-2", 8)

    assert _run("panel", "frontier", "--member", "good", "--member", "replayed:8").startswith(
        "panel frontier created with 2 member(s)"
    )
    panel = Panel.objects.get(name="frontier")
    assert sorted((m.endpoint.name, m.attempts) for m in panel.members.all()) == [
        ("good", None),
        ("replayed", 8),
    ]
    assert "frontier\tgood, replayed:8" in _run("panel", "--list")
    assert "good\topenai\tgood-2\thttp://127.0.0.1:8001/v1" in _run("endpoint", "--list")


def test_bad_input_is_refused_naming_the_option():
    with pytest.raises(CommandError, match="--api-key-env"):
        _run(
            "endpoint",
            "leaky",
            "--base-url",
            "https://api.example.com/v1",
            "--model",
            "m",
            "--api-key-env",
            "sk-not-a-variable-name",
        )
    assert not ModelEndpoint.objects.filter(name="leaky").exists()
    with pytest.raises(CommandError, match="--member: no endpoint named 'ghost'"):
        _run("panel", "p", "--member", "ghost")
    with pytest.raises(CommandError, match="at least one target endpoint"):
        _run("panel", "empty")
