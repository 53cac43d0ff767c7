"""The judge panel's seats are asked side by side (the platform fan-out), and the verdicts are
kept in seat order whatever order the answers arrive in; a level's cells of different reasoning
types are generated, answered and judged side by side and decide as one call at a time."""

from __future__ import annotations

import re

import pytest

from evolution.streams.runner import run_inline
from reasoning.models import ReasoningItem, ResultLogEntry

from .helpers import World, make_campaign, one_type, verdict

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
    run_inline(campaign_id=campaign.pk)
    item = ReasoningItem.objects.get(reasoning_id=campaign.pk)
    assert [v["score"] for v in item.verdicts] == [1.0, 0.0, 1.0]
    assert item.disagreement is True
    # Generation, answering and judging are one request at a time except the panel.
    assert fake_server.max_in_flight == in_flight


def _outcome(campaign_id: int) -> tuple[list, list]:
    items = [
        (*row[:-1], [{k: v for k, v in seat.items() if k != "judge"} for seat in row[-1]])
        for row in ReasoningItem.objects.filter(reasoning_id=campaign_id)
        .order_by("id")
        .values_list(
            "difficulty",
            "reasoning_type",
            "question_index",
            "position",
            "status",
            "question",
            "answer",
            "judge_score",
            "regenerations",
            "similarity",
            "verdicts",  # each seat's verdict, without the endpoint's (per-campaign) name
        )
    ]
    cells = {
        i.pk: (i.difficulty, i.reasoning_type, i.question_index)
        for i in ReasoningItem.objects.filter(reasoning_id=campaign_id)
    }
    log = [
        (entry.event, cells.get(entry.item_id))
        for entry in ResultLogEntry.objects.filter(reasoning_id=campaign_id).order_by("id")
    ]
    return items, log


@pytest.mark.parametrize("questions", [1, 2])
def test_a_levels_types_are_asked_side_by_side_and_decide_as_one_call_at_a_time(
    fake_server, settings, questions
):
    from bench.loopback_answers import Reasoning

    types = [
        {"name": "alpha_type", "description": "a"},
        {"name": "beta_type", "description": "b"},
        {"name": "gamma_type", "description": "c"},
    ]
    fake_server.latency = 0.05
    fake_server.responder = Reasoning()  # answers from the replay key: any order, same answer
    runs = {}
    for fan_out in (1, 8):
        settings.ENGINE_FANOUT_THREADS = fan_out
        fake_server.reset_counters()
        campaign = make_campaign(
            fake_server,
            judges=3,
            reasoning_types=types,
            difficulty_end=2,
            num_questions=questions,
        )
        run_inline(campaign_id=campaign.pk)
        runs[fan_out] = (_outcome(campaign.pk), fake_server.max_in_flight)
    (one_items, one_log), one_in_flight = runs[1]
    (items, log), in_flight = runs[8]
    assert one_in_flight == 1 and in_flight > 3  # more than one item's judges at once
    assert len(items) == 2 * 3 * questions
    assert {row[4] for row in items} == {"judged"}
    # Items made, answered, judged and logged in the order one call after the other gives.
    assert items == one_items
    assert log == one_log
    assert [event for event, _ in log].count("item_scored") == len(items)
