"""BenchEvolver's trajectory heatmap and campaign analytics: HTML shells plus cached JSON / CSV data.

Every page and data endpoint is for curators and admins. The data endpoints send an ETag made
of the campaign's fingerprint, so a browser that already holds the current data gets a 304
without the chart being rebuilt or even read from the cache.

The analytics page and the chart endpoints take ``reviews`` (a ``ReviewAggregates``, or None:
nothing reviewed) as a keyword argument from the URLconf: ``evolution.urls.patterns`` puts it
there, and the project's URLconf passes review's (``benchapp/urls.py``).
"""

from __future__ import annotations

import gzip
import hashlib
import json

from django.core.cache import cache
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, CURATOR, role_required
from evolution.http_cache import accepts_gzip, not_modified
from evolution.models import Campaign

from .analytics import heatmap, selectors, tables
from .analytics.reviews import ReviewAggregates

_ID_PLACEHOLDER = 987654321


def _campaign(pk: int, *, reviews: ReviewAggregates | None = None) -> Campaign:
    try:
        return selectors.campaign_for_analytics(pk=pk, reviews=reviews)
    except Campaign.DoesNotExist:
        raise Http404("No such campaign.")


def _etag(campaign: Campaign, request, name: str) -> str:
    raw = f"{name}|{selectors.fingerprint(campaign)}|{request.META.get('QUERY_STRING', '')}"
    return '"' + hashlib.sha1(raw.encode()).hexdigest()[:24] + '"'


def _json_body(campaign: Campaign, request, name: str, build) -> bytes:
    """The serialized JSON for this campaign state and query string, from the cache when the
    same request was answered since the campaign last advanced (no unpickling of the chart
    data, no re-serializing). Gzipped when the browser accepts it (a heatmap page of 200 seeds
    is about 0.5 MB of JSON, a tenth of that gzipped): both forms are cached."""
    digest = hashlib.sha1(request.META.get("QUERY_STRING", "").encode()).hexdigest()[:16]
    key = f"bf:analytics:body:{name}:{campaign.pk}:{selectors.fingerprint(campaign)}:{digest}"
    zipped = accepts_gzip(request)
    if zipped and (body := cache.get(key + ":gz")) is not None:
        return body
    body = cache.get(key)
    if body is None:
        body = json.dumps(build(), cls=DjangoJSONEncoder, separators=(",", ":")).encode()
        cache.set(key, body, selectors.CACHE_SECONDS)
    if zipped:
        body = gzip.compress(body, compresslevel=6, mtime=0)
        cache.set(key + ":gz", body, selectors.CACHE_SECONDS)
    return body


def _json(request, body: bytes, etag: str) -> HttpResponse:
    response = HttpResponse(body, content_type="application/json")
    if accepts_gzip(request):
        response["Content-Encoding"] = "gzip"
    patch_vary_headers(response, ["Accept-Encoding"])
    response["ETag"] = etag
    # Revalidate every time: the ETag makes that cheap, and a campaign may advance any second.
    response["Cache-Control"] = "private, no-cache"
    return response


def _csv(text: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _url_template(name: str) -> str:
    """A URL with ``{id}`` where the object's pk goes, for the page's JavaScript."""
    return reverse(name, args=[_ID_PLACEHOLDER]).replace(str(_ID_PLACEHOLDER), "{id}")


# --------------------------------------------------------------------------- heatmap


class BadQuery(ValueError):
    pass


def _int_param(request, name: str, default: int, *, maximum: int) -> int:
    raw = request.GET.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadQuery(f"{name} must be a whole number, got {raw[:20]!r}")
    if not 0 <= value <= maximum:
        raise BadQuery(f"{name} must be between 0 and {maximum}, got {value}")
    return value


def heatmap_query(request) -> selectors.HeatmapQuery:
    """The heatmap filters from the query string; BadQuery names the offending parameter."""
    sort = request.GET.get("sort", "") or "position"
    if sort not in heatmap.SORTS:
        raise BadQuery(f"sort must be one of {', '.join(heatmap.SORTS)}")
    outcome = request.GET.get("outcome", "")
    if outcome and outcome not in heatmap.OUTCOMES:
        raise BadQuery(f"outcome must be one of {', '.join(heatmap.OUTCOMES)}")
    return selectors.HeatmapQuery(
        difficulty=request.GET.get("difficulty", "")[:60],
        family=request.GET.get("family", "")[:120],
        outcome=outcome,
        sort=sort,
        offset=_int_param(request, "offset", 0, maximum=10_000_000),
        limit=_int_param(request, "limit", 200, maximum=100_000),
    )


@role_required(ADMIN, CURATOR)
@require_GET
def campaign_heatmap(request, pk: int):
    campaign = _campaign(pk)
    config = {
        "dataUrl": reverse("evolution:campaign_heatmap_json", args=[pk]),
        "csvUrl": reverse("evolution:campaign_heatmap_csv", args=[pk]),
        "candidateUrl": _url_template("evolution:candidate_detail"),
        "lineageUrl": _url_template("evolution:lineage_detail"),
    }
    return render(
        request,
        "evolution/analytics/heatmap.html",
        {
            "campaign": campaign,
            "config": config,
            "query": request.GET,
        },
    )


@role_required(ADMIN, CURATOR)
@require_GET
def campaign_heatmap_json(request, pk: int):
    campaign = _campaign(pk)
    try:
        query = heatmap_query(request)
    except BadQuery as exc:
        return HttpResponseBadRequest(str(exc))
    etag = _etag(campaign, request, "heatmap")
    if (response := not_modified(request, etag)) is not None:
        return response
    body = _json_body(
        campaign,
        request,
        "heatmap",
        lambda: selectors.heatmap_page(campaign=campaign, query=query),
    )
    return _json(request, body, etag)


@role_required(ADMIN, CURATOR)
@require_GET
def campaign_heatmap_csv(request, pk: int):
    campaign = _campaign(pk)
    try:
        query = heatmap_query(request)
    except BadQuery as exc:
        return HttpResponseBadRequest(str(exc))
    # The download holds every row that matches the filters, not one page.
    query = selectors.HeatmapQuery(**{**query.__dict__, "offset": 0, "limit": 0})
    page = selectors.heatmap_page(campaign=campaign, query=query)
    return _csv(tables.to_csv(heatmap.csv_rows(page["rows"])), f"campaign-{pk}-heatmap.csv")


# --------------------------------------------------------------------------- analytics


@role_required(ADMIN, CURATOR)
@require_GET
def campaign_analytics(request, pk: int, reviews: ReviewAggregates | None = None):
    # Table 1 on the page counts reviewed problems.
    campaign = _campaign(pk, reviews=reviews)
    chart_list = [
        {
            "name": c.name,
            "title": c.title,
            "description": c.description,
            "uses_reviews": c.uses_reviews,
            "json_url": reverse("evolution:campaign_chart_json", args=[pk, c.name]),
            "csv_url": reverse("evolution:campaign_chart_csv", args=[pk, c.name]),
        }
        for c in selectors.CHARTS.values()
    ]
    return render(
        request,
        "evolution/analytics/analytics.html",
        {
            "campaign": campaign,
            "charts": chart_list,
            # Table 1 and the cost summary are rendered on the page itself (cached data too),
            # so the headline numbers read without JavaScript.
            "yield_table": selectors.chart_data(campaign=campaign, name="yield"),
            "cost": selectors.chart_data(campaign=campaign, name="cost"),
            "config": {
                "candidateUrl": _url_template("evolution:candidate_detail"),
                "heatmapUrl": reverse("evolution:campaign_heatmap", args=[pk]),
            },
        },
    )


def _chart_name(name: str) -> str:
    if name not in selectors.CHARTS:
        raise Http404("No such chart.")
    return name


def _chart_campaign(pk: int, name: str, reviews: ReviewAggregates | None) -> Campaign:
    # Only the review-based charts follow review activity: the others keep their cached data
    # (and ETag) when a review is saved.
    return _campaign(pk, reviews=reviews if selectors.CHARTS[name].uses_reviews else None)


@role_required(ADMIN, CURATOR)
@require_GET
def campaign_chart_json(request, pk: int, chart: str, reviews: ReviewAggregates | None = None):
    name = _chart_name(chart)
    campaign = _chart_campaign(pk, name, reviews)
    etag = _etag(campaign, request, name)
    if (response := not_modified(request, etag)) is not None:
        return response
    body = _json_body(
        campaign, request, name, lambda: selectors.chart_data(campaign=campaign, name=name)
    )
    return _json(request, body, etag)


@role_required(ADMIN, CURATOR)
@require_GET
def campaign_chart_csv(request, pk: int, chart: str, reviews: ReviewAggregates | None = None):
    name = _chart_name(chart)
    campaign = _chart_campaign(pk, name, reviews)
    data = selectors.chart_data(campaign=campaign, name=name)
    return _csv(tables.to_csv(tables.ROWS[name](data)), f"campaign-{pk}-{name}.csv")
