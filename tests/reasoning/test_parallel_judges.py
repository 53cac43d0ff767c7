"""The judge panel's seats are asked side by side (the platform fan-out), and the verdicts are
kept in seat order whatever order the answers arrive in."""

from __future__ import annotations

import re

import pytest

from reasoning.models import ReasoningItem
from reasoning.services import reasoning_run_inline

from .conftest import World, make_campaign, one_type, verdict

pytestmark = pytest.mark.django_db(transaction=True)


class SeatWorld(World):
    """Seat 1 says wrong, the others right (by seat, never by arrival order)."""

    def __call__(self, body, headers):
        key = headers.get("x-benchforge-key", "")
        seat = re.search(r";judge=(\d+)", key)
        if headers.get("x-benchforge-role") == "evaluation" and seat:
            self.keys.append(("evaluation", key))
            return verdict(seat.group(1) != "1")
        return super().__call__(body, headers)


@pytest.mark.parametrize("fan_out, in_flight", [(1, 1), (8, 3)])
def test_the_panels_seats_are_asked_side_by_side_and_kept_in_seat_order(
    fake_server, settings, fan_out, in_flight
):
    settings.ENGINE_FANOUT_THREADS = fan_out
    fake_server.latency = 0.1
    fake_server.responder = SeatWorld()
    campaign = make_campaign(fake_server, judges=3, reasoning_types=one_type(), difficulty_end=1)
    reasoning_run_inline(campaign_id=campaign.pk)
    item = ReasoningItem.objects.get(reasoning_id=campaign.pk)
    assert [v["score"] for v in item.verdicts] == [1.0, 0.0, 1.0]
    assert item.disagreement is True
    # Generation, answering and judging are one request at a time except the panel.
    assert fake_server.max_in_flight == in_flight
