"""The coarse filter is measured on first use: a campaign created without labelled sets takes
the bundled ones (closed- and open-ended problems authored for BenchForge, labelled as such in
the file, on the campaign page and in the API), and its false-positive and false-negative
rates show once the probes are answered (loopback model server, real database)."""

from __future__ import annotations

import json
import re

import pytest

from evolution.models import Problem
from evolution.services.campaigns import campaign_launch
from evolution.streams.runner import run_inline
from frontiersmith import calibration, selectors, services
from frontiersmith.models import FrontierCampaign
from tests.frontiersmith.helpers import SMALL

pytestmark = pytest.mark.django_db(transaction=False)

# The scripted filter errs on exactly these two bundled problems.
SLIPS = ("closed-exact-subset", "open-job-shop")


def labelled_filter(script):
    """The coarse filter answers the bundled probes by their labels, wrongly on SLIPS; every
    other call goes to the campaign's script."""

    def respond(body, headers):
        key = {k.lower(): v for k, v in headers.items()}.get("x-benchforge-key", "")
        found = re.search(r"calibrate=(\w+);problem=([\w-]+)", key)
        if not found:
            return script(body, headers)
        label, origin = found.groups()
        accepted = (label == "open") != (origin in SLIPS)
        return json.dumps(
            {"objective": accepted, "strategies": accepted, "scoring": True, "reason": "r"}
        )

    return respond


def create(world, **settings):
    return services.frontier_campaign_create(
        name="first use",
        seed_set=world["seeds"],
        mutator_endpoint=world["mutator"],
        solver_endpoint=world["solver"],
        settings={**SMALL, **settings},
    )


def test_the_bundled_sets_are_authored_labelled_and_imported_once(db):
    data = json.loads(calibration.FILE.read_text())
    assert "AUTHORED" in data["about"]
    assert "none is taken from HardTests or FrontierCS" in data["about"]
    sets = calibration.sets()
    assert {label: len(items) for label, items in sets.items()} == {"closed": 8, "open": 8}
    ids = [item["id"] for items in sets.values() for item in items]
    assert len(set(ids)) == len(ids)
    first = calibration.bundled_set("closed")
    again = calibration.bundled_set("closed")
    assert first.pk == again.pk and first.problems.count() == 8
    assert Problem.objects.filter(origin_dataset=calibration.ORIGIN_DATASET).count() == 8
    assert "authored" in first.description and calibration.is_bundled(first)
    problem = first.problems.get(origin_id="closed-2sat")
    assert problem.metadata == {"calibration_label": "closed", "authored": True}


def test_a_campaign_without_labelled_sets_shows_the_filter_rates_on_first_use(
    world, script, personas
):
    world["server"].responder = labelled_filter(script)
    campaign = create(world)
    fc = FrontierCampaign.objects.get(pk=campaign.pk)
    assert calibration.is_bundled(fc.calibration_closed)
    assert calibration.is_bundled(fc.calibration_open)
    campaign_launch(campaign_id=campaign.pk)
    # The probes come first (several per step: a step asks a batch of them side by side).
    for _ in range(16):
        if fc.probes.count() == 16:
            break
        run_inline(campaign_id=campaign.pk, max_steps=1)
    assert fc.probes.count() == 16 and not fc.candidates.exists()

    rates = selectors.filter_rates(fc=fc)
    assert (rates["closed"], rates["open"]) == (8, 8)
    assert (rates["false_positives"], rates["false_negatives"]) == (1, 1)
    assert rates["false_positive"] == rates["false_negative"] == pytest.approx(1 / 8)
    [fp] = [p for p in rates["probes"] if p.label == "closed" and p.accepted]
    assert fp.problem.origin_id == "closed-exact-subset"

    page = personas.curator.client.get(f"/frontiersmith/{campaign.pk}/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "false-positive rate 0.125" in html and "false-negative rate 0.125" in html
    assert html.count(">bundled, authored<") == 2
    assert calibration.SET_NAMES["closed"] in html and calibration.SET_NAMES["open"] in html
    assert "authored and labelled by hand" in html

    body = personas.curator.client.get(f"/api/frontiersmith/campaigns/{campaign.pk}").json()
    assert body["calibration_closed"] == calibration.SET_NAMES["closed"]
    assert body["coarse_filter"]["false_positive"] == pytest.approx(1 / 8)
    assert body["coarse_filter"]["false_negative"] == pytest.approx(1 / 8)
    assert body["coarse_filter"]["sets"]["open"] == {
        "name": calibration.SET_NAMES["open"],
        "bundled": True,
    }


def test_a_given_set_is_used_for_its_label_and_the_bundled_one_for_the_other(world):
    campaign = services.frontier_campaign_create(
        name="own closed set",
        seed_set=world["seeds"],
        mutator_endpoint=world["mutator"],
        solver_endpoint=world["solver"],
        settings=SMALL,
        calibration_closed=world["closed"],
    )
    fc = FrontierCampaign.objects.get(pk=campaign.pk)
    assert fc.calibration_closed == world["closed"]
    assert fc.calibration_open.name == calibration.SET_NAMES["open"]


def test_the_setting_turns_the_bundled_sets_off(world, personas):
    campaign = create(world, bundled_calibration=False)
    fc = FrontierCampaign.objects.get(pk=campaign.pk)
    assert fc.calibration_closed is None and fc.calibration_open is None
    assert not Problem.objects.filter(origin_dataset=calibration.ORIGIN_DATASET).exists()
    html = personas.curator.client.get(f"/frontiersmith/{campaign.pk}/").content.decode()
    assert "bundled, authored" not in html and "no labelled set" in html
