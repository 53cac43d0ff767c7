"""X-Coder campaigns over HTTP (django-ninja): create (optionally launch), read one, list its
tasks.

Launch, pause, resume and cancel are the shared ``/campaigns/{id}/<action>`` operations of
evolution's router: they work on every campaign kind."""

from __future__ import annotations

from django.urls import reverse
from ninja import Router, Schema

from accounts.roles import ADMIN, CURATOR
from evolution import campaign_api as kind_api
from evolution.measurement import selectors as measurement_selectors

from . import selectors, services
from .config import XcoderSettings
from .kind import kept_problems
from .models import XcoderCampaign

router = Router(tags=["xcoder"])


class XcoderCampaignIn(kind_api.KindCampaignIn):
    generator_endpoint_id: int
    solver_endpoint_ids: list[int]
    # The panel that measures the accepted problems (settings.measure_kept); none: not measured.
    panel_id: int | None = None


class XcoderMeasurementOut(Schema):
    panel: str | None
    skip_reason: str
    kept: int
    measured: int
    failed: int


class XcoderCampaignOut(kind_api.KindCampaignOut):
    problem_set: str
    generator_endpoint: str
    solver_endpoints: list[str]
    task_counts: dict[str, int]
    accepted_problems: list[str]
    measurement: XcoderMeasurementOut


class XcoderTaskOut(Schema):
    index: int
    style: str
    status: str
    title: str
    reason_code: str
    reason: str
    problem: str | None
    url: str


class XcoderErrorOut(kind_api.ErrorOut):
    pass


def _campaign_out(xc: XcoderCampaign) -> dict:
    c = xc.campaign
    kept = kept_problems(c)
    measured = measurement_selectors.campaign_context(
        c,
        enabled=XcoderSettings.from_dict(c.settings).measure_kept,
        kept_count=kept.count(),
    )
    return {
        **kind_api.campaign_fields(c),
        "problem_set": xc.problem_set.name if xc.problem_set_id else "",
        "generator_endpoint": xc.generator_endpoint.name,
        "solver_endpoints": list(
            xc.solver_endpoints.order_by("name").values_list("name", flat=True)
        ),
        "task_counts": selectors.status_counts(xc),
        "accepted_problems": list(kept.order_by("id").values_list("public_id", flat=True)),
        "measurement": {
            "panel": measured["panel"].name if measured["panel"] else None,
            "skip_reason": measured["skip_reason"],
            "kept": measured["kept"],
            "measured": measured["measured"],
            "failed": measured["failed"],
        },
    }


def _references(payload: XcoderCampaignIn) -> kind_api.References:
    refs = kind_api.References()
    refs.problem_set("seed_set", payload.seed_set, label="seed set")
    refs.endpoint("generator_endpoint_id", payload.generator_endpoint_id)
    refs.endpoints("solver_endpoint_ids", payload.solver_endpoint_ids)
    refs.panel("panel_id", payload.panel_id)
    return refs


@router.post("/xcoder/campaigns", response={201: XcoderCampaignOut, 400: XcoderErrorOut})
def create_campaign(request, payload: XcoderCampaignIn):
    """Admins only. Unknown seed set, endpoint or panel → 400 naming the field; a bad setting →
    400 whose ``errors`` are keyed by the setting's name. Nothing is created on any 400."""
    return kind_api.create_campaign_response(
        request,
        payload,
        _references(payload),
        lambda found, **common: services.xcoder_campaign_create(
            **common,
            seed_set=found["seed_set"],
            generator_endpoint=found["generator_endpoint_id"],
            solver_endpoints=found["solver_endpoint_ids"],
            panel=found["panel_id"],
        ),
        lambda pk: _campaign_out(selectors.xcoder_get(campaign_id=pk)),
    )


def _get(campaign_id: int) -> XcoderCampaign:
    return kind_api.get_or_404(
        selectors.xcoder_get, campaign_id, XcoderCampaign.DoesNotExist, "X-Coder"
    )


@router.get("/xcoder/campaigns/{campaign_id}", response=XcoderCampaignOut)
def get_campaign(request, campaign_id: int):
    """Admins and curators: the campaign, its task counts, accepted problems and the panel
    measurement of those problems."""
    kind_api.require(request, ADMIN, CURATOR)
    return _campaign_out(_get(campaign_id))


@router.get("/xcoder/campaigns/{campaign_id}/tasks", response=list[XcoderTaskOut])
def list_tasks(request, campaign_id: int):
    """Admins and curators: every task in index order with its status and reason."""
    kind_api.require(request, ADMIN, CURATOR)
    xc = _get(campaign_id)
    return [
        {
            "index": t.index,
            "style": t.style,
            "status": t.status,
            "title": t.title,
            "reason_code": t.reason_code,
            "reason": t.reason,
            "problem": t.problem.public_id if t.problem_id else None,
            "url": reverse("xcoder:task_detail", args=[xc.pk, t.index]),
        }
        for t in selectors.task_list(xc)
    ]
