"""Families come from the reviewers' tag vocabulary, so the global-memory rule sees through
wording, and global memory keeps attempted families as well as accepted ones (Section 3.4)."""

from __future__ import annotations

import pytest

from evolution.benchevolver.demo import pack
from evolution.benchevolver.models import GlobalMemoryEntry
from evolution.benchevolver.services import campaign_create

from .helpers import KeyedResponder, build_world
from .test_scenarios import SETTINGS, advance_until_done, running, sort_seed_evolves_with_family

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_synonym_of_a_family_accepted_elsewhere_needs_the_larger_gain(fake_server):
    table = pack.responses()
    # demo/array-sum R1 is accepted as "dynamic programming over prefixes".
    sort_seed_evolves_with_family(table, "DP-based approach", passes_per_model=3)
    fake_server.responder = KeyedResponder(table)
    seed_set, evolver, panel = build_world(
        fake_server, seeds=("demo/array-sum", "demo/sort-numbers")
    )
    campaign = running(
        campaign_create(
            name="synonyms", seed_set=seed_set, evolver=evolver, panel=panel, settings=SETTINGS
        )
    )
    first = advance_until_done(campaign.lineages.get(seed__origin_id="demo/array-sum"))
    assert first.candidates.get(round=1).family == "dynamic programming"
    second = advance_until_done(campaign.lineages.get(seed__origin_id="demo/sort-numbers"))
    cand = second.candidates.get(round=1)
    assert cand.family == "dynamic programming"
    assert (cand.level, cand.decision) == (2, "not_harder")
    assert "another lineage" in cand.decision_reason

    # Global memory holds both lineages' families: accepted and attempted.
    entries = GlobalMemoryEntry.objects.filter(campaign=campaign)
    assert entries.filter(accepted=True, candidate__lineage=first).exists()
    attempted = entries.get(candidate=cand)
    assert (attempted.accepted, attempted.decision, attempted.family) == (
        False,
        "not_harder",
        "dynamic programming",
    )
