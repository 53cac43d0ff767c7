"""``{% plotly_script %}``: the script tags a chart page loads plotly.js with.

By default the cartesian partial bundle (``evolution.plotly_assets``), ``async``: the
page is parsed and DOMContentLoaded fires without waiting for the bundle to download and run.
``evolution/plotly_ready.js`` (loaded right after it) gives the page's own scripts
``window.plotlyReady``, a promise of ``Plotly`` that each one waits for before drawing.
With ``settings.PLOTLY_BUNDLE = "full"`` the page loads the whole plotly.js as it did before
this tag existed: before its own scripts, blocking the parser.
"""

from __future__ import annotations

from django import template
from django.conf import settings
from django.templatetags.static import static
from django.urls import reverse
from django.utils.html import format_html

from evolution import plotly_assets

register = template.Library()


def plotly_url() -> str:
    """The URL of the plotly.js bundle the chart pages load (settings.PLOTLY_BUNDLE)."""
    if settings.PLOTLY_BUNDLE == "full":
        import plotly

        return reverse("evolution:plotly_js", args=[plotly.__version__])
    return reverse("evolution:plotly_cartesian_js", args=[plotly_assets.version("cartesian")])


@register.simple_tag
def plotly_script() -> str:
    ready = static("evolution/plotly_ready.js")
    if settings.PLOTLY_BUNDLE == "full":
        return format_html(
            '<script src="{}" id="plotly-js"></script><script src="{}"></script>',
            plotly_url(),
            ready,
        )
    return format_html(
        '<script src="{}" id="plotly-js" async></script><script src="{}"></script>',
        plotly_url(),
        ready,
    )
