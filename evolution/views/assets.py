"""plotly.js as the chart pages load it, served from the installed plotly package (never a
CDN): the URL carries the version, so the file may be cached for a year; gzip when the browser
accepts it."""

from __future__ import annotations

import plotly
from django.http import Http404, HttpResponse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from .. import plotly_assets
from ..http_cache import accepts_gzip, not_modified

PLOTLY_VERSION = plotly.__version__


def _bundle_response(request, name: str) -> HttpResponse:
    bundle = plotly_assets.bundle(name)
    if (response := not_modified(request, bundle.etag)) is not None:
        return response
    if accepts_gzip(request):
        response = HttpResponse(bundle.gzipped, content_type="text/javascript; charset=utf-8")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(bundle.raw, content_type="text/javascript; charset=utf-8")
    patch_vary_headers(response, ["Accept-Encoding"])
    response["ETag"] = bundle.etag
    response["Cache-Control"] = "public, max-age=31536000, immutable"
    return response


@require_GET
def plotly_js(request, version: str):
    """The whole plotly.js from the installed plotly package (never a CDN). The URL carries the
    package version, so the file may be cached for a year; gzip when the browser accepts it."""
    if version != PLOTLY_VERSION:
        raise Http404("Unknown plotly version.")
    return _bundle_response(request, "full")


@require_GET
def plotly_cartesian_js(request, version: str):
    """plotly.js's cartesian partial bundle (``evolution.plotly_assets``), what the
    chart pages load: a third of the whole bundle's size. Cached and compressed as above."""
    if version != plotly_assets.version("cartesian"):
        raise Http404("Unknown plotly.js version.")
    return _bundle_response(request, "cartesian")
