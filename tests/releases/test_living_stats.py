"""The Wilson interval of the living benchmark, checked against scipy's binomtest."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from scipy.stats import binomtest

from evolution.models import ModelEndpoint
from releases import living


@pytest.mark.parametrize(("passes", "n"), [(0, 8), (7, 8), (8, 8), (3, 4), (50, 120)])
def test_the_wilson_interval_matches_scipy(passes, n):
    expected = binomtest(passes, n).proportion_ci(confidence_level=0.95, method="wilson")
    low, high = living.wilson_interval(passes, n)
    assert low == pytest.approx(expected.low, abs=1e-9)
    assert high == pytest.approx(expected.high, abs=1e-9)


def test_adding_a_model_needs_a_published_release(frozen):
    _, release = frozen
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", model="m")
    with pytest.raises(ValidationError) as exc:
        living.panel_seat_add(benchmark=release.benchmark, endpoint=endpoint)
    assert "benchmark" in exc.value.message_dict


def test_a_model_cannot_sit_twice_on_a_panel(published):
    _, release = published
    endpoint = ModelEndpoint.objects.create(name="m", base_url="http://127.0.0.1:9/v1", model="m")
    living.panel_seat_add(benchmark=release.benchmark, endpoint=endpoint)
    with pytest.raises(ValidationError) as exc:
        living.panel_seat_add(benchmark=release.benchmark, endpoint=endpoint)
    assert "endpoint" in exc.value.message_dict
