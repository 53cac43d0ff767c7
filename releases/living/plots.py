"""Plotly figures of the living benchmark: a problem's difficulty over time (an open-ended
problem's mean score), a release's saturated share over time, and the calibration scatter of expert against model difficulty.

Each function returns a figure as plain data (``{"data": [...], "layout": {...}}``) that the
page embeds with ``json_script`` and ``releases/living_plots.js`` draws with plotly.js, loaded
by ``{% plotly_script %}`` as on every chart page (evolution/templatetags/charts.py). The
inline SVG of the same plot stays in the page as the fallback without JavaScript; the script
hides it once plotly has drawn. Dates are ISO 8601 in UTC so the date axes read the same for
every visitor.
"""

from __future__ import annotations

from datetime import UTC

BLUE, RED, GREY = "#2c6fbb", "#c0392b", "#7f8c8d"
FONT = {"size": 13}
CONFIG_HEIGHT = 320


def _iso(moment) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _layout(**extra) -> dict:
    return {
        "height": CONFIG_HEIGHT,
        "margin": {"l": 70, "r": 20, "t": 20, "b": 60},
        "font": FONT,
        "showlegend": False,
        "hovermode": "closest",
        "plot_bgcolor": "#fafafa",
        **extra,
    }


def _bound_line(bound: float) -> tuple[dict, dict]:
    shape = {
        "type": "line",
        "xref": "paper",
        "x0": 0,
        "x1": 1,
        "yref": "y",
        "y0": bound,
        "y1": bound,
        "line": {"color": RED, "dash": "dash", "width": 1.5},
    }
    note = {
        "xref": "paper",
        "x": 1,
        "xanchor": "right",
        "yref": "y",
        "y": bound,
        "yanchor": "bottom",
        "showarrow": False,
        "text": f"saturation bound {bound:g}",
        "font": {"color": RED, "size": 12},
    }
    return shape, note


def score_history_figure(*, points) -> dict:
    """An open-ended (scored) problem's mean verifier score over the panel's answers at each
    re-measurement: it has no pass@1, so no interval of one and no saturation bound. Hover:
    the date, the number of answers and each model's mean score."""
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "mean score",
                "x": [_iso(p.measured_at) for p in points],
                "y": [round(p.mean_score, 4) for p in points],
                "line": {"color": BLUE, "width": 1.5},
                "marker": {"size": 10, "color": BLUE},
                "customdata": [
                    [
                        p.samples,
                        ", ".join(
                            f"{m['label']} {m['score']:.2f} ({m['n']})"
                            for m in (p.models_detail or [])
                        )
                        or "no model",
                    ]
                    for p in points
                ],
                "hovertemplate": "%{x|%Y-%m-%d %H:%M} UTC<br>mean score <b>%{y:.2f}</b> "
                "over %{customdata[0]} answers<br>%{customdata[1]}<extra></extra>",
            }
        ],
        "layout": _layout(
            xaxis={"title": {"text": "re-measured on (UTC)"}, "type": "date"},
            yaxis={
                "title": {"text": "mean score over the panel"},
                "range": [-0.02, 1.05],
                "dtick": 0.25,
                "zeroline": False,
            },
        ),
    }


def history_figure(*, points, bound: float) -> dict | None:
    """A problem's pass@1 over the panel at each re-measurement (``DifficultyPoint`` rows, in
    date order): markers with their 95% Wilson intervals, red above the saturation bound, and
    the bound dashed. Hover: the date, the interval, passes/samples and each model's share.
    An open-ended problem's points are mean scores: ``score_history_figure``."""
    if not points:
        return None
    if all(p.scored for p in points):
        return score_history_figure(points=points)
    points = [p for p in points if not p.scored]
    shape, note = _bound_line(bound)
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "pass@1",
                "x": [_iso(p.measured_at) for p in points],
                "y": [round(p.pass_at_1, 4) for p in points],
                "error_y": {
                    "type": "data",
                    "symmetric": False,
                    "array": [round(p.high - p.pass_at_1, 4) for p in points],
                    "arrayminus": [round(p.pass_at_1 - p.low, 4) for p in points],
                    "color": GREY,
                    "thickness": 1.2,
                    "width": 5,
                },
                "line": {"color": BLUE, "width": 1.5},
                "marker": {
                    "size": 10,
                    "color": [RED if p.pass_at_1 > bound else BLUE for p in points],
                },
                "customdata": [
                    [
                        round(p.low, 4),
                        round(p.high, 4),
                        p.passes,
                        p.samples,
                        ", ".join(
                            f"{m['label']} {m['c']}/{m['n']}" for m in (p.models_detail or [])
                        )
                        or "no model",
                    ]
                    for p in points
                ],
                "hovertemplate": "%{x|%Y-%m-%d %H:%M} UTC<br>pass@1 <b>%{y:.2f}</b> "
                "(95% interval %{customdata[0]:.2f} to %{customdata[1]:.2f})<br>"
                "%{customdata[2]} of %{customdata[3]} samples: %{customdata[4]}<extra></extra>",
            }
        ],
        "layout": _layout(
            xaxis={"title": {"text": "re-measured on (UTC)"}, "type": "date"},
            yaxis={
                "title": {"text": "pass@1 over the panel"},
                "range": [-0.02, 1.05],
                "dtick": 0.25,
                "zeroline": False,
            },
            shapes=[shape],
            annotations=[note],
        ),
    }


def saturation_figure(*, series: list[dict]) -> dict | None:
    """The share of the measured release saturated after each completed re-measurement
    (``benchmark_living``'s series: at, version, saturated, problems, share)."""
    if not series:
        return None
    return {
        "data": [
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": "saturated",
                "x": [_iso(row["at"]) for row in series],
                "y": [round(row["share"], 4) for row in series],
                "line": {"color": RED, "width": 2, "shape": "hv"},
                "marker": {"size": 9, "color": RED},
                "customdata": [
                    [row["version"], row["saturated"], row["problems"]] for row in series
                ],
                "hovertemplate": "%{x|%Y-%m-%d %H:%M} UTC, v%{customdata[0]}<br>"
                "<b>%{customdata[1]} of %{customdata[2]}</b> problems saturated "
                "(%{y:.0%})<extra></extra>",
            }
        ],
        "layout": _layout(
            xaxis={"title": {"text": "re-measurement (UTC)"}, "type": "date"},
            yaxis={
                "title": {"text": "share of the release saturated"},
                "range": [-0.02, 1.05],
                "tickformat": ".0%",
                "dtick": 0.25,
                "zeroline": False,
            },
        ),
    }


def calibration_figure(*, calibration) -> dict | None:
    """Expert difficulty (1 easy to 5 hard) across, the panel's pass@1 up, one marker per
    problem; the most-disagreeing problems (the adjudication candidates) in red. Hover: the
    problem, both ratings, the Codeforces estimate, the panel's level and why it stands out."""
    rows = calibration.rows
    if not rows:
        return None
    flagged = {r.problem_id for r in calibration.disagreements}
    reasons = {r.problem_id: r.reason for r in calibration.disagreements}

    def trace(name: str, chosen: list, color: str) -> dict:
        return {
            "type": "scatter",
            "mode": "markers",
            "name": name,
            "x": [r.expert_difficulty for r in chosen],
            "y": [round(r.pass_at_1, 4) for r in chosen],
            "text": [r.public_id for r in chosen],
            "customdata": [
                [
                    r.title,
                    f"{r.cf_rating:.0f}" if r.cf_rating else "none",
                    r.level if r.level is not None else "none",
                    r.n_reviews,
                    reasons.get(r.problem_id, ""),
                ]
                for r in chosen
            ],
            "marker": {"size": 12, "color": color, "opacity": 0.75, "line": {"width": 1}},
            "hovertemplate": "<b>%{text}</b> %{customdata[0]}<br>experts %{x:.1f}/5 "
            "(%{customdata[3]} reviews) · Codeforces %{customdata[1]}<br>panel pass@1 "
            "%{y:.2f} · level %{customdata[2]}<br>%{customdata[4]}<extra></extra>",
        }

    data = [trace("problems", [r for r in rows if r.problem_id not in flagged], BLUE)]
    if flagged:
        data.append(trace("most disagreeing", [r for r in rows if r.problem_id in flagged], RED))
    return {
        "data": data,
        "layout": _layout(
            height=380,
            showlegend=bool(flagged),
            legend={"orientation": "h", "y": 1.08, "x": 0},
            xaxis={
                "title": {"text": "experts' difficulty (1 easy to 5 hard)"},
                "range": [0.8, 5.2],
                "dtick": 1,
                "zeroline": False,
            },
            yaxis={
                "title": {"text": "panel pass@1"},
                "range": [-0.03, 1.05],
                "dtick": 0.25,
                "zeroline": False,
            },
        ),
    }
