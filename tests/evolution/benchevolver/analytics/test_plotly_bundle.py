"""The chart pages load plotly.js's cartesian partial bundle, kept in the repository and served
by the site (never a CDN): compressed, cached for a year, ``async`` so the page's parsing never
waits for it; every trace type the pages draw is one the bundle has. The browser tests of each
chart page (tests/evolution/benchevolver/analytics/test_browser.py, tests/reasoning/test_browser.py,
tests/releases/test_browser_leaderboard.py) check in Chromium that the charts draw with it."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest
from django.template import Context, Template
from django.urls import reverse

from evolution import plotly_assets
from evolution.templatetags import charts

ROOT = Path(__file__).resolve().parents[4]
# The trace modules of plotly.js-cartesian-dist-min (its README).
CARTESIAN_TRACES = {
    "bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour",
    "image", "pie", "scatter", "scatterternary", "violin",
}  # fmt: skip


def test_the_cartesian_bundle_is_served_gzipped_and_cached_for_a_year(client):
    url = charts.plotly_url()
    version = plotly_assets.version("cartesian")
    assert url == f"/assets/plotly-cartesian-{version}.min.js"
    zipped = client.get(url, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
    assert zipped.status_code == 200 and zipped["Content-Encoding"] == "gzip"
    assert zipped["Content-Type"].startswith("text/javascript")
    assert "max-age=31536000" in zipped["Cache-Control"] and "immutable" in zipped["Cache-Control"]
    assert "Accept-Encoding" in zipped["Vary"]
    raw = gzip.decompress(zipped.content)
    assert raw.startswith(b"/**\n* plotly.js (cartesian - minified) v" + version.encode())
    # A third of the whole bundle on the wire, and under 0.6 MB.
    assert len(zipped.content) < 600_000
    full = client.get(reverse("evolution:plotly_js", args=[charts_full_version()]))
    assert len(raw) < len(full.content) / 3
    plain = client.get(url)
    assert "Content-Encoding" not in plain and plain.content == raw
    assert client.get(url, HTTP_IF_NONE_MATCH=zipped["ETag"]).status_code == 304
    assert client.get("/assets/plotly-cartesian-0.0.1.min.js").status_code == 404


def charts_full_version() -> str:
    import plotly

    return plotly.__version__


def test_the_tag_loads_the_bundle_async_then_the_ready_promise(settings):
    html = Template("{% load charts %}{% plotly_script %}").render(Context())
    assert re.fullmatch(
        r'<script src="/assets/plotly-cartesian-[\d.]+\.min\.js" id="plotly-js" async></script>'
        r'<script src="/static/evolution/plotly_ready\.js"></script>',
        html,
    ), html
    # The whole plotly.js, blocking, as the pages loaded it before (the benchmark's baseline).
    settings.PLOTLY_BUNDLE = "full"
    html = Template("{% load charts %}{% plotly_script %}").render(Context())
    assert f'<script src="/assets/plotly-{charts_full_version()}.min.js" id="plotly-js">' in html
    assert " async" not in html


# Other things plotly calls a "type": error bars', shapes' and axes'.
NOT_TRACES = {
    "data", "percent", "constant", "sqrt", "line", "rect", "circle", "path", "date", "log",
    "linear", "category",
}  # fmt: skip


def _trace_types(text: str) -> set[str]:
    return set(re.findall(r'\btype"?: *"(\w+)"', text)) - NOT_TRACES


@pytest.mark.parametrize(
    "path",
    [
        "evolution/benchevolver/static/evolution/heatmap.js",
        "evolution/benchevolver/static/evolution/analytics.js",
        "releases/static/releases/leaderboard.js",
        "reasoning/templates/reasoning/campaign_detail.html",
        "evosyn/templates/evosyn/campaign_detail.html",
        "releases/living/plots.py",
    ],
)
def test_every_trace_type_a_page_draws_is_in_the_bundle(path):
    types = _trace_types((ROOT / path).read_text())
    assert types - CARTESIAN_TRACES == set(), f"{path} draws trace types the bundle lacks"


def test_every_chart_template_loads_plotly_through_the_tag():
    """No template names a plotly.js URL of its own (which would bring back the whole bundle,
    loaded before the page could finish parsing)."""
    offenders = []
    for template in ROOT.glob("*/templates/**/*.html"):
        text = template.read_text()
        if "plotly_url" in text or re.search(r"<script[^>]*plotly[^>]*\.js", text):
            offenders.append(str(template.relative_to(ROOT)))
        draws = "Plotly." in text or "data-figure=" in text or "leaderboard-chart" in text
        if draws and "{% plotly_script %}" not in text:
            offenders.append(str(template.relative_to(ROOT)))
    assert offenders == []
