"""Saturation flags are withdrawn, with the date and the reason, when a later re-measurement
finds the problem back at or below the bound and no panel model above it; a weaker model
joining the panel (which only dilutes the pooled pass@1) withdraws nothing; the flag rows stay
as history and a problem saturated again gets a new flag."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from evolution.models import ModelEndpoint
from releases import living
from releases.models import PanelSeat, SaturationFlag
from tests.support.answers import fenced
from tests.support.fake_openai import FakeOpenAI, by_model

from .builders import WRONG_CODE
from .living_support import Panel, endpoint, remeasured_release


@pytest.fixture
def measured(transactional_db, settings):
    settings.PUBLIC_PAGE_CACHE_SECONDS = 600  # the public pages are cached: changes must show
    cache.clear()
    yield remeasured_release()
    cache.clear()


def _run(remeasurement):
    done = living.remeasurement_execute(remeasurement_id=remeasurement.pk)
    assert done.state == "completed", done.error
    return done


def _seat(name: str):
    return PanelSeat.objects.get(endpoint__name=name).endpoint


def test_a_flag_is_withdrawn_only_when_no_panel_model_stays_above_the_bound(measured):
    world, release = measured
    bench = release.benchmark
    ok, override = world.problem("E-OK").public_id, world.problem("E-OVERRIDE").public_id
    item_url = reverse("releases:public_item", args=[bench.slug, release.version, ok])
    anonymous = Client()
    page = anonymous.get(item_url).content.decode()
    assert "saturated</span> since" in page and "saturation withdrawn" not in page
    original = {f.public_id: f.pk for f in SaturationFlag.objects.filter(release=release)}
    assert set(original) == {ok, override}

    with FakeOpenAI() as server:
        server.responder = by_model({"weaker": lambda body, headers: fenced(WRONG_CODE)}, Panel())
        weaker = endpoint(server, "weaker")
        # A weaker model dilutes the pooled pass@1 of E-OK to 7/12 = 0.58, below the bound, but
        # strong still solves it every time: the flag stays.
        diluted = _run(living.panel_seat_add(benchmark=bench, endpoint=weaker, samples=4))
    assert diluted.summary["withdrawn"] == [] and diluted.summary["saturated"] == 2
    point = diluted.points.get(public_id=ok)
    assert (point.passes, point.samples) == (7, 12)
    assert SaturationFlag.objects.active().filter(release=release).count() == 2

    # strong, the model that saturated both, leaves: weak 3/4 + weaker 0/4 = 0.375 and no model
    # above 0.75 on its own (weak is at 0.75 exactly): both flags are withdrawn.
    left = _run(living.panel_seat_remove(benchmark=bench, endpoint=_seat("strong")))
    assert left.trigger == "panel_change" and left.reason == "strong left the panel"
    assert sorted(left.summary["withdrawn"]) == sorted([ok, override])
    assert left.summary["saturated"] == 0 and left.summary["newly_saturated"] == []
    flag = SaturationFlag.objects.get(pk=original[ok])
    assert not flag.active and flag.withdrawn_by == left
    assert flag.withdrawn_at == left.points.get(public_id=ok).measured_at
    assert flag.withdrawn_pass_at_1 == pytest.approx(3 / 8)
    day = timezone.now().strftime("%Y-%m-%d")
    assert flag.withdrawn_reason == (
        f"re-measured on {day}: pass@1 0.38 over the panel <= 0.75 and no panel model above it "
        "(strong left the panel)"
    )
    # What it was flagged for is kept.
    assert (flag.pass_at_1, flag.saturating_models) == (pytest.approx(7 / 8), ["strong"])
    share = living.saturation_share(release=release)
    assert (share["saturated"], share["problems"]) == (0, 3)
    with pytest.raises(ValidationError):  # nothing saturated is left to re-evolve
        living.reevolution_create(release=release)

    # The cached public pages show it at once.
    page = anonymous.get(item_url)
    assert page["X-Page-Cache"] == "miss"
    html = page.content.decode()
    assert "saturated</span> since" not in html
    assert 'class="withdrawn-flag"' in html and "(strong left the panel)" in html
    detail = anonymous.get(reverse("releases:public_detail", args=[bench.slug, release.version]))
    assert "0 of 3 problems saturated" in detail.content.decode()
    living_page = anonymous.get(reverse("releases:living", args=[bench.slug])).content.decode()
    assert living_page.count('class="withdrawn-flag"') == 2
    assert living_page.count('class="saturation-flag"') == 0
    assert "(2 withdrawn)" in living_page
    api = anonymous.get(f"/api/benchmarks/{bench.slug}/living").json()
    assert api["saturated"] == []
    assert {f["public_id"] for f in api["withdrawn"]} == {ok, override}
    assert all(f["withdrawn_reason"].endswith("(strong left the panel)") for f in api["withdrawn"])

    # strong comes back (its completed run is reused) once weaker has gone: saturated again, a
    # new flag beside the withdrawn one.
    _run(living.panel_seat_remove(benchmark=bench, endpoint=weaker))
    back = _run(
        living.panel_seat_add(benchmark=bench, endpoint=ModelEndpoint.objects.get(name="strong"))
    )
    assert sorted(back.summary["newly_saturated"]) == sorted([ok, override])
    history = list(SaturationFlag.objects.filter(release=release, public_id=ok).order_by("id"))
    assert [f.active for f in history] == [False, True]
    assert history[1].remeasurement == back and history[1].saturating_models == ["strong"]
    assert living.saturation_share(release=release)["saturated"] == 2
    html = anonymous.get(item_url).content.decode()
    assert "saturated</span> since" in html and 'class="withdrawn-flag"' in html
    # At most one active flag per problem, in the database too.
    with pytest.raises(IntegrityError), transaction.atomic():
        SaturationFlag.objects.create(
            release=release,
            public_id=ok,
            flagged_at=timezone.now(),
            pass_at_1=0.9,
            bound=0.75,
            remeasurement=back,
        )


def test_removing_a_model_that_is_not_on_the_panel_or_the_last_one(measured):
    _, release = measured
    bench = release.benchmark
    strong = _seat("strong")
    living.panel_seat_remove(benchmark=bench, endpoint=strong)
    with pytest.raises(ValidationError, match="strong is not on the panel"):
        living.panel_seat_remove(benchmark=bench, endpoint=strong)
    # The last model leaves: nothing is left to measure with, the flags stay as they are.
    assert living.panel_seat_remove(benchmark=bench, endpoint=_seat("weak")) is None
    assert SaturationFlag.objects.active().filter(release=release).count() == 2
