"""`make demo` builds the whole product offline: the committed cassette is what the demo pack
writes, and the demo refuses to build without a working sandbox. What the built demo holds is
checked in tests/test_demo_database.py (built once for all its readers)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from evolution.benchevolver.demo import pack
from evolution.demo import setup
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


def test_the_demo_refuses_to_build_on_a_missing_sandbox(settings):
    from django.core.management.base import CommandError

    settings.SANDBOX_PYTHON = "/nonexistent/python3"
    with pytest.raises(CommandError, match="apt-get install -y bubblewrap python3"):
        call_command("demo", no_serve=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert not Campaign.objects.exists()
