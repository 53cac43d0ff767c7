"""The living benchmark's plotly figures as data: what each axis says, where the points and
their intervals go, which points are red and what hovering shows."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from releases.calibration import Calibration, Row
from releases.living import plots
from releases.models import DifficultyPoint


def _point(at, passes, samples, low, high, detail):
    return DifficultyPoint(
        public_id="BF-1",
        measured_at=at,
        pass_at_1=passes / samples,
        low=low,
        high=high,
        passes=passes,
        samples=samples,
        models_detail=detail,
    )


def test_the_history_figure_has_dated_points_intervals_and_the_bound():
    paris = timezone(timedelta(hours=1))
    first = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
    second = datetime(2026, 11, 23, 13, 30, tzinfo=paris)  # 12:30 UTC
    points = [
        _point(first, 3, 4, 0.30, 0.95, [{"label": "weak", "c": 3, "n": 4}]),
        _point(
            second,
            7,
            8,
            0.53,
            0.98,
            [{"label": "weak", "c": 3, "n": 4}, {"label": "strong", "c": 4, "n": 4}],
        ),
    ]
    figure = plots.history_figure(points=points, bound=0.75)
    (trace,) = figure["data"]
    assert trace["x"] == ["2026-11-20 10:00:00", "2026-11-23 12:30:00"]
    assert trace["y"] == [0.75, 0.875]
    assert trace["error_y"]["array"] == [pytest.approx(0.2), pytest.approx(0.105)]
    assert trace["error_y"]["arrayminus"] == [pytest.approx(0.45), pytest.approx(0.345)]
    # 0.75 is the bound itself (not saturated); 0.875 is above it.
    assert trace["marker"]["color"] == [plots.BLUE, plots.RED]
    assert trace["customdata"][1] == [0.53, 0.98, 7, 8, "weak 3/4, strong 4/4"]
    assert "95% interval" in trace["hovertemplate"]
    layout = figure["layout"]
    assert layout["xaxis"] == {"title": {"text": "re-measured on (UTC)"}, "type": "date"}
    assert layout["yaxis"]["title"]["text"] == "pass@1 over the panel"
    assert layout["yaxis"]["range"][0] < 0 and layout["yaxis"]["range"][1] > 1
    (bound,) = layout["shapes"]
    assert (bound["y0"], bound["y1"], bound["line"]["dash"]) == (0.75, 0.75, "dash")
    assert layout["annotations"][0]["text"] == "saturation bound 0.75"
    assert plots.history_figure(points=[], bound=0.75) is None


def test_the_saturation_figure_shows_the_share_as_a_percentage():
    at = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)
    series = [
        {"at": at, "version": "1.0.0", "saturated": 0, "problems": 3, "share": 0.0},
        {
            "at": at + timedelta(days=7),
            "version": "1.0.0",
            "saturated": 2,
            "problems": 3,
            "share": 2 / 3,
        },
    ]
    figure = plots.saturation_figure(series=series)
    (trace,) = figure["data"]
    assert trace["y"] == [0.0, 0.6667]
    assert trace["customdata"] == [["1.0.0", 0, 3], ["1.0.0", 2, 3]]
    assert trace["line"]["shape"] == "hv"  # the share holds until the next re-measurement
    yaxis = figure["layout"]["yaxis"]
    assert yaxis["tickformat"] == ".0%"
    assert yaxis["title"]["text"] == "share of the release saturated"
    assert plots.saturation_figure(series=[]) is None


def _row(pid, difficulty, pass_at_1, **extra):
    return Row(
        problem_id=int(pid[-1]),
        public_id=pid,
        title=f"Title {pid}",
        expert_difficulty=difficulty,
        cf_rating=extra.get("cf"),
        pass_at_1=pass_at_1,
        level=extra.get("level"),
        n_reviews=2,
        gap=extra.get("gap", 0.0),
        reason=extra.get("reason", ""),
    )


def test_the_calibration_figure_puts_the_disagreements_in_their_own_red_trace():
    cal = Calibration(
        rows=[
            _row("P1", 1.5, 0.9, cf=1200, level=1),
            _row("P2", 4.5, 0.1, level=5),
            _row("P3", 1.0, 0.0, gap=0.8, reason="experts rate it easy; the panel fails it"),
        ]
    )
    figure = plots.calibration_figure(calibration=cal)
    agree, disagree = figure["data"]
    assert agree["text"] == ["P1", "P2"] and agree["marker"]["color"] == plots.BLUE
    assert (agree["x"], agree["y"]) == ([1.5, 4.5], [0.9, 0.1])
    assert agree["customdata"][0] == ["Title P1", "1200", 1, 2, ""]
    assert agree["customdata"][1][1:3] == ["none", 5]
    assert disagree["name"] == "most disagreeing" and disagree["marker"]["color"] == plots.RED
    assert disagree["customdata"][0][4] == "experts rate it easy; the panel fails it"
    layout = figure["layout"]
    assert layout["xaxis"]["title"]["text"] == "experts' difficulty (1 easy to 5 hard)"
    assert layout["xaxis"]["range"] == [0.8, 5.2] and layout["xaxis"]["dtick"] == 1
    assert layout["yaxis"]["title"]["text"] == "panel pass@1"
    assert layout["showlegend"] is True
    # Without disagreements: one trace, no legend.
    calm = plots.calibration_figure(calibration=Calibration(rows=cal.rows[:2]))
    assert len(calm["data"]) == 1 and calm["layout"]["showlegend"] is False
    assert plots.calibration_figure(calibration=Calibration()) is None


def test_plotly_is_served_from_the_analytics_route(client):
    from evolution.templatetags import charts

    url = charts.plotly_url()
    assert url.startswith("/assets/plotly-cartesian-") and url.endswith(".min.js")
    response = client.get(url)
    assert response.status_code == 200 and b"plotly" in response.content[:2000].lower()
