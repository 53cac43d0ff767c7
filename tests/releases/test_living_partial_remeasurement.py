"""One model that cannot be measured does not discard the others' results: the re-measurement
records what it measured, names what it could not, and withdraws no flag on a partial panel
(issue: a model failing one item left the other problems unrecorded)."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from evolution.models import ModelEndpoint
from releases import living
from releases.models import DifficultyPoint, PanelSeat, SaturationFlag
from tests.support.fake_openai import FakeOpenAI, Fault

from .living_support import Panel, endpoint, remeasured_release

pytestmark = pytest.mark.django_db(transaction=True)


class BrokenModel(Panel):
    """``weak`` and ``strong`` answer as in the living world; ``broken`` refuses every call."""

    def __call__(self, body, headers):
        if body["model"] == "broken":
            return Fault.http_status(401, '{"error": {"message": "invalid api key"}}')
        return super().__call__(body, headers)


def test_a_model_that_cannot_be_measured_keeps_the_others_results():
    cache.clear()
    world, release = remeasured_release()
    flagged_before = set(
        SaturationFlag.objects.active().filter(release=release).values_list("public_id", flat=True)
    )
    assert len(flagged_before) == 2
    with FakeOpenAI() as server:
        server.responder = BrokenModel()
        ModelEndpoint.objects.update(base_url=server.base_url)
        broken = endpoint(server, "broken")
        PanelSeat.objects.create(benchmark=release.benchmark, endpoint=broken, samples=4)
        # The strong model leaves too: on the whole panel the weak one alone would withdraw
        # both flags (0.75 <= 0.75), but the broken model might be above the bound.
        PanelSeat.objects.filter(endpoint__name="strong").delete()
        r = living.remeasurement_create(
            benchmark=release.benchmark, trigger="panel_change", reason="broken joined"
        )
        done = living.remeasurement_execute(remeasurement_id=r.pk)

    assert done.state == "completed", done.error
    assert done.summary["not_measured"] and done.summary["not_measured"][0].startswith("broken")
    assert done.error.startswith("not measured: broken")
    # The provider's status is said once (it read "HTTP 401: HTTP 401: …").
    assert "last: HTTP 401: the provider refused the key" in done.error
    assert "HTTP 401: HTTP 401" not in done.error
    assert done.summary["models"] == ["weak"]
    points = DifficultyPoint.objects.filter(remeasurement=done)
    assert points.count() == release.items.count() == 3
    assert all(p.samples == 4 for p in points)  # the weak model's four samples, each problem
    # A partial panel withdraws nothing.
    assert done.summary["withdrawn"] == []
    still = set(
        SaturationFlag.objects.active().filter(release=release).values_list("public_id", flat=True)
    )
    assert still == flagged_before
