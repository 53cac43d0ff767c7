"""`make demo` builds the whole product offline: this runs the same command (without serving)."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from evolution.demo import pack, setup
from evolution.models import Campaign

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_the_committed_cassette_is_exactly_what_the_pack_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(pack, "CASSETTE", tmp_path / "demo.jsonl")
    monkeypatch.setattr(pack, "SEEDS_FILE", tmp_path / "seeds.jsonl")
    pack.write_files()
    committed = setup.pack.CASSETTE.__class__(pack.__file__).parent / "cassettes" / "demo.jsonl"
    assert (tmp_path / "demo.jsonl").read_text() == committed.read_text()
    assert (tmp_path / "seeds.jsonl").read_text() == (
        committed.parent.parent / "seeds.jsonl"
    ).read_text()


def test_the_demo_builds_every_capability_and_prints_the_logins():
    out = io.StringIO()
    call_command("demo", no_serve=True, stdout=out, stderr=io.StringIO())
    text = out.getvalue()
    for username in ("demo-admin", "demo-curator", "demo-reviewer"):
        assert re.search(rf"{username}\s+password: \S+", text), text
    done = Campaign.objects.get(name=setup.COMPLETED_NAME)
    assert done.state == "completed" and done.replayed
    assert done.lineages.filter(candidates__decision="accepted").distinct().count() == 3
    resumable = Campaign.objects.get(name=setup.RESUMABLE_NAME)
    assert resumable.state == "paused"
    assert "Review round" in text and "published" in text
    # Running it again reuses what exists instead of duplicating it.
    call_command("demo", no_serve=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert Campaign.objects.filter(name=setup.COMPLETED_NAME).count() == 1


def test_the_demo_refuses_to_build_on_a_missing_sandbox(settings):
    from django.core.management.base import CommandError

    settings.SANDBOX_PYTHON = "/nonexistent/python3"
    with pytest.raises(CommandError, match="apt-get install -y bubblewrap python3"):
        call_command("demo", no_serve=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert not Campaign.objects.exists()
