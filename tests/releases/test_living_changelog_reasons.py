"""Every problem a version drops has its reason in the public changelog, whichever way it
left: saturated and re-evolved (into what), saturated and left out of the re-evolution,
excluded by a curator (with an erratum it fixes), refused by the gate on its re-measured
pass@1 or another rule (issue: the changelog gave a reason only for re-evolved problems)."""

from __future__ import annotations

import html as html_lib
import re

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from evolution.benchevolver.models import Candidate
from evolution.models import ModelEndpoint
from evolution.streams.runner import run_inline
from releases import living, services
from releases.models import PanelSeat
from tests.support.fake_openai import FakeOpenAI

from .builders import review
from .living_support import REEVOLUTION_SETTINGS, Evolution, remeasured_release

pytestmark = pytest.mark.django_db(transaction=True)


def _changelog(release) -> tuple[set[str], dict[str, str], dict[str, str]]:
    """The public changelog of ``release``: the ids on its "Removed:" line, the reason given
    for each removed id and the reason given for each other id (the replacements)."""
    cache.clear()
    url = reverse("releases:public_detail", args=[release.benchmark.slug, release.version])
    page = Client().get(url)
    assert page.status_code == 200
    section = re.search(
        r'<section class="card" id="changelog">.*?</section>', page.content.decode(), re.S
    )[0]
    line = re.search(r"<p>Removed: (.*?)</p>", section)
    removed = set(re.findall(r"<code>(\w+)</code>", line[1])) if line else set()
    reasons = {
        pid: html_lib.unescape(why)
        for pid, why in re.findall(r"<li[^>]*><code>(\w+)</code>: (.*?)</li>", section)
    }
    return (
        removed,
        {pid: why for pid, why in reasons.items() if pid in removed},
        {pid: why for pid, why in reasons.items() if pid not in removed},
    )


def test_each_way_a_curator_removes_a_problem_is_in_the_changelog_with_its_reason(personas):
    cache.clear()
    world, release = remeasured_release()
    ok, override, s2 = (world.problem(k).public_id for k in ("E-OK", "E-OVERRIDE", "S2"))
    day = release.saturation_flags.get(public_id=ok).flagged_at.strftime("%Y-%m-%d")
    curator = personas.curator.user

    # The curator re-evolves E-OK only: E-OVERRIDE is left out of the draft, then launched.
    reevolution = living.reevolution_create(release=release, settings=REEVOLUTION_SETTINGS)
    living.reevolution_update(reevolution=reevolution, keep=[ok])
    with FakeOpenAI() as server:
        server.responder = Evolution({ok: "E-OK"})
        ModelEndpoint.objects.update(base_url=server.base_url, max_retries=0)
        ModelEndpoint.objects.filter(pk=world.campaign.evolver_id).update(model="evolver")
        living.reevolution_launch(reevolution=reevolution)
        campaign = run_inline(campaign_id=reevolution.campaign_id)
    assert campaign.state == "completed", campaign.state_reason
    (new,) = [
        c.accepted_problem
        for c in Candidate.objects.filter(lineage__campaign=campaign, decision="accepted")
    ]
    review(world, new, (4, "valid"), (4, "valid"))

    # S2 has an erratum; the next version's curator excludes it.
    services.erratum_create(
        release=release,
        item_public_id=s2,
        kind="statement",
        description="The bound on n is missing",
        by=curator,
    )
    draft = services.release_next(release=release)
    services.curation_decide(
        release=draft,
        problem=world.problem("S2"),
        include=False,
        justification="Its statement admits two readings until the erratum is fixed",
        by=curator,
    )
    services.gate_run_create(release=draft)
    nxt = services.release_publish(release=services.release_freeze(release=draft))

    removed, why, replacing = _changelog(nxt)
    assert removed == {ok, override, s2}
    assert set(why) == removed  # every removal has its reason
    saturated = f"saturated on {day}: pass@1 0.88 over the panel > 0.75 (solved by strong)"
    assert why[ok] == f"{saturated}; re-evolved into {new.public_id}"
    assert why[override] == f"{saturated}; not re-evolved"
    assert why[s2] == (
        "excluded by a curator: Its statement admits two readings until the erratum is fixed; "
        "fixes the erratum (statement wrong or ambiguous): The bound on n is missing"
    )
    assert replacing == {new.public_id: f"re-evolved from saturated {ok} ({campaign.name})"}


def test_a_problem_the_gate_refuses_has_the_failed_rules_and_its_re_measurement(personas):
    cache.clear()
    world, release = remeasured_release()
    ok, override, s2 = (world.problem(k).public_id for k in ("E-OK", "E-OVERRIDE", "S2"))
    bench = release.benchmark
    # strong leaves the panel: weak alone solves E-OK and E-OVERRIDE 3 times in 4 and the
    # flags are withdrawn; nothing is saturated any more.
    done = living.remeasurement_execute(
        remeasurement_id=living.panel_seat_remove(
            benchmark=bench, endpoint=PanelSeat.objects.get(endpoint__name="strong").endpoint
        ).pk
    )
    assert done.state == "completed" and sorted(done.summary["withdrawn"]) == sorted([ok, override])
    day = done.points.get(public_id=ok).measured_at.strftime("%Y-%m-%d")

    # The next version's rules ask for more: pass@1 at most 0.7, mean quality at least 3.8.
    draft = services.release_next(release=release)
    services.release_update(
        release=draft, rules={**draft.gate_rules, "max_pass_at_1": 0.7, "min_quality": 3.8}
    )
    services.gate_run_create(release=draft)
    nxt = services.release_publish(release=services.release_freeze(release=draft))

    removed, why, replacing = _changelog(nxt)
    assert removed == {ok, override} and set(why) == removed and replacing == {}
    band = f"difficulty: pass@1 0.75 (3/4) over the panel, re-measured on {day}, outside the gate's band [0.05, 0.7]"
    # E-OK's reviewers gave quality 4 and 3; E-OVERRIDE's was overridden to 4.
    assert why[ok] == (
        f"did not pass the gate: quality: mean quality 3.5; at least 3.8 required; {band}"
    )
    assert why[override] == f"did not pass the gate: {band}"
    assert s2 in {i.public_id for i in nxt.items.all()}

    # A kept item's published panel figure is the one the gate read and labelled it by (the
    # living panel's re-measurement, dated), not its campaign's stale one; where the figure
    # came from before stays in its provenance.
    point = done.points.get(public_id=s2)
    kept = nxt.items.get(public_id=s2)
    assert kept.provenance["panel"] == {
        "passes": point.passes,
        "attempts": point.samples,
        "remeasured_at": point.measured_at.isoformat(),
    }
    gate_facts = next(e for e in nxt.gate_runs.latest("created_at").report if e["public_id"] == s2)
    assert gate_facts["facts"]["panel_attempts"] == point.samples
    assert (
        kept.provenance["seed_calibration"]
        == (release.items.get(public_id=s2).provenance["seed_calibration"])
    )
