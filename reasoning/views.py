"""Pages of reasoning campaigns: list, creation, the live campaign page (matrix heatmap and EMA
charts: an HTML shell plus a JSON data endpoint), items with the curator's override, run
reports and the result log as downloads."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from accounts.roles import ADMIN, CURATOR, has_role, role_required
from evolution import pages

from . import selectors, series_io, services
from .config import settings_table
from .forms import OverrideForm, ReasoningCampaignForm
from .models import ItemStatus, ReasoningCampaign, ReasoningSeries


def _get(pk: int) -> ReasoningCampaign:
    return pages.kind_campaign_or_404(
        selectors.reasoning_get, pk, ReasoningCampaign.DoesNotExist, "reasoning"
    )


campaign_list = pages.kind_campaign_list("reasoning", selectors.campaign_list)
campaign_new = pages.kind_campaign_new(
    "reasoning", ReasoningCampaignForm, services.reasoning_campaign_create
)


LIVE_BODY = "reasoning/_live.html"


def _detail_context(rc: ReasoningCampaign) -> dict:
    return {
        "rc": rc,
        "campaign": rc.campaign,
        "progress": selectors.progress(rc),
        "state": selectors.run_state(rc),
        "runs": selectors.run_list(rc),
        "series": rc.series,
        "series_state": selectors.series_state(rc.series),
    }


@role_required(ADMIN, CURATOR)
def campaign_detail(request, pk: int):
    rc = _get(pk)
    context = _detail_context(rc)
    if not request.htmx:  # the live poll needs only the progress, not settings and charts
        context.update(
            series_campaigns=selectors.series_campaigns(rc.series),
            settings_table=settings_table(rc.campaign.settings),
            judges=selectors.judge_names(rc),
            can_control=has_role(request.user, ADMIN),
            settings=selectors.settings_of(rc),
        )
    return pages.render_campaign_page(
        request, "reasoning/campaign_detail.html", context, live_body=LIVE_BODY
    )


@role_required(ADMIN, CURATOR)
@require_GET
def campaign_charts(request, pk: int):
    """The data behind the page's charts: the matrix (all runs or ``?run=N``) and EMA series."""
    rc = _get(pk)
    run_number = _int_param(request, "run")
    return JsonResponse(
        {
            "matrix": selectors.matrix(rc, run_number=run_number),
            "ema": selectors.ema_series(rc),
            "state": selectors.run_state(rc),
            "series_ema": selectors.series_ema(rc.series),
        },
        encoder=DjangoJSONEncoder,
    )


def _int_param(request, name: str) -> int | None:
    value = request.GET.get(name, "")
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise Http404(f"{name} must be a number")


@role_required(ADMIN, CURATOR)
def item_list(request, pk: int):
    rc = _get(pk)
    filters = {
        "run_number": _int_param(request, "run"),
        "reasoning_type": request.GET.get("type") or None,
        "difficulty": _int_param(request, "difficulty"),
        "status": request.GET.get("status") or None,
        "flagged": request.GET.get("flagged") or None,
    }
    items = selectors.item_list(rc, **filters)
    page = Paginator(items, 40).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "reasoning/item_list.html",
        {
            "rc": rc,
            "campaign": rc.campaign,
            "page": page,
            "filters": filters,
            "query": query.urlencode(),
            "settings": selectors.settings_of(rc),
            "runs": selectors.run_list(rc),
            "statuses": ItemStatus.values,
        },
    )


@role_required(ADMIN, CURATOR)
def item_detail(request, pk: int):
    try:
        item = selectors.item_get(item_id=pk)
    except services.ReasoningItem.DoesNotExist:
        raise Http404("No such item.")
    form = OverrideForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.item_override_score(
                item_id=item.pk,
                score=form.score_value(),
                reason=form.cleaned_data["reason"],
                user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc.messages)
        else:
            messages.success(request, "Score overridden; the EMAs were recomputed.")
            return redirect("reasoning:item_detail", item.pk)
    return render(
        request,
        "reasoning/item_detail.html",
        {
            "item": item,
            "campaign": item.reasoning.campaign,
            "form": form,
            "history": item.log.order_by("id"),
        },
    )


@role_required(ADMIN, CURATOR)
def run_report(request, pk: int, number: int):
    rc = _get(pk)
    run = get_object_or_404(rc.runs, number=number)
    if not run.report:
        raise Http404("The report is written when the run finishes.")
    response = HttpResponse(run.report, content_type="text/markdown; charset=utf-8")
    if request.GET.get("inline") != "1":
        response["Content-Disposition"] = (
            f'attachment; filename="report_campaign_{pk}_run_{number}.md"'
        )
    return response


@role_required(ADMIN, CURATOR)
def result_log(request, pk: int):
    """The append-only result log as JSONL (the document's runs.jsonl)."""
    rc = _get(pk)
    lines = [
        json.dumps(
            {
                "event": e.event,
                "run": e.run.number if e.run else None,
                "at": e.created_at.isoformat(),
                **e.payload,
            },
            cls=DjangoJSONEncoder,
            ensure_ascii=False,
        )
        for e in selectors.log_entries(rc)
    ]
    response = HttpResponse("\n".join(lines) + "\n", content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="runs_campaign_{pk}.jsonl"'
    return response


# --------------------------------------------------------------------------- series


def _series(slug: str) -> ReasoningSeries:
    try:
        return selectors.series_get(slug=slug)
    except ReasoningSeries.DoesNotExist:
        raise Http404("No reasoning series with this name.")


@role_required(ADMIN, CURATOR)
def series_list(request):
    return render(request, "reasoning/series_list.html", {"series_list": selectors.series_list()})


@role_required(ADMIN, CURATOR)
def series_detail(request, slug: str):
    """A series across its campaigns: its state, the EMA each campaign started from and left,
    every run, the imported history, the document's files."""
    series = _series(slug)
    return render(
        request,
        "reasoning/series_detail.html",
        {
            "series": series,
            "series_state": selectors.series_state(series),
            "series_campaigns": selectors.series_campaigns(series),
            "series_runs": selectors.series_runs(series),
            "series_ema": selectors.series_ema(series),
        },
    )


@role_required(ADMIN, CURATOR)
def series_state_file(request, slug: str):
    """The series' state.json (section 6.1)."""
    series = _series(slug)
    response = JsonResponse(series_io.state_json(series), json_dumps_params={"indent": 2})
    response["Content-Disposition"] = f'attachment; filename="state_{series.slug}.json"'
    return response


@role_required(ADMIN, CURATOR)
def series_runs_file(request, slug: str):
    """The series' runs.jsonl (section 9): one line per finished run with its ExampleResults."""
    series = _series(slug)
    response = HttpResponse(series_io.runs_jsonl(series), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="runs_{series.slug}.jsonl"'
    return response
