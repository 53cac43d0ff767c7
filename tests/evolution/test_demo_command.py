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
    _every_kind_is_reviewed_and_released()
    # Running it again reuses what exists instead of duplicating it.
    call_command("demo", no_serve=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert Campaign.objects.filter(name=setup.COMPLETED_NAME).count() == 1


def _every_kind_is_reviewed_and_released() -> None:
    """Each kind's demo campaign completed, its problems are in the demo review round (rated)
    and in the published release; X-Coder's and EvoSyn's passed the gate on their measured
    pass@1, with no curator decision."""
    from evolution.measurement.models import Measurement
    from evolution.models import Problem
    from releases.demo import DEMO_BENCHMARK
    from releases.models import Release
    from review.demo import DEMO_ROUND
    from review.models import GroupItem

    for kind in ("xcoder", "evosyn", "frontiersmith", "reasoning"):
        campaign = Campaign.objects.get(kind=kind, name__startswith="Demo")
        assert campaign.state == "completed", (kind, campaign.state_reason)
        assert campaign.replayed
    reviewed = GroupItem.objects.filter(
        group__round__name=DEMO_ROUND, reviews__submitted_at__isnull=False
    ).values_list("problem__method", flat=True)
    assert {"benchevolver", "xcoder", "evosyn", "frontiersmith"} <= set(reviewed)
    release = Release.objects.get(benchmark__name=DEMO_BENCHMARK, state="published")
    released = Problem.objects.filter(pk__in=release.items.values("problem_id"))
    assert {"xcoder", "evosyn", "frontiersmith"} <= set(released.values_list("method", flat=True))
    run = release.gate_runs.latest("created_at")
    decided = set(release.decisions.values_list("problem_id", flat=True))
    for problem in released.filter(method__in=["xcoder", "evosyn"]):
        entry = next(e for e in run.report if e["problem_id"] == problem.pk)
        assert entry["passed"] and problem.pk not in decided, entry
        assert Measurement.objects.get(problem=problem).state == "completed"


def test_the_demo_refuses_to_build_on_a_missing_sandbox(settings):
    from django.core.management.base import CommandError

    settings.SANDBOX_PYTHON = "/nonexistent/python3"
    with pytest.raises(CommandError, match="apt-get install -y bubblewrap python3"):
        call_command("demo", no_serve=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert not Campaign.objects.exists()
