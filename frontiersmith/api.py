"""FrontierSmith campaigns over HTTP (django-ninja): create (optionally launch) and read one.

Launch, pause, resume and cancel are the shared ``/campaigns/{id}/<action>`` operations of
evolution's router: they work on every campaign kind."""

from __future__ import annotations

from ninja import Router

from accounts.roles import ADMIN, CURATOR
from evolution import campaign_api as kind_api

from . import selectors, services
from .models import FrontierCampaign

router = Router(tags=["frontiersmith"])


class FrontierCampaignIn(kind_api.KindCampaignIn):
    mutator_endpoint_id: int
    solver_endpoint_id: int
    calibration_closed: str | None = None
    calibration_open: str | None = None


class FrontierCampaignOut(kind_api.KindCampaignOut):
    seed_pool: str
    seed_pool_size: int
    output_set: str
    mutator_endpoint: str
    solver_endpoint: str
    calibration_closed: str | None
    calibration_open: str | None
    current_round: int
    coarse_filter: dict


def _campaign_out(fc: FrontierCampaign) -> dict:
    return {
        **kind_api.campaign_fields(fc.campaign),
        "seed_pool": fc.seed_pool.name,
        "seed_pool_size": fc.seed_pool.problems.count(),
        "output_set": fc.output_set.name,
        "mutator_endpoint": fc.mutator_endpoint.name,
        "solver_endpoint": fc.solver_endpoint.name,
        "calibration_closed": fc.calibration_closed.name if fc.calibration_closed else None,
        "calibration_open": fc.calibration_open.name if fc.calibration_open else None,
        "current_round": fc.current_round,
        "coarse_filter": _coarse_filter(fc),
    }


def _coarse_filter(fc: FrontierCampaign) -> dict:
    """The coarse filter's error rates on the labelled sets (the campaign page's table)."""
    rates = selectors.filter_rates(fc=fc)
    return {k: v for k, v in rates.items() if k != "probes"}


def _references(payload: FrontierCampaignIn) -> kind_api.References:
    refs = kind_api.References()
    for field in ("seed_set", "calibration_closed", "calibration_open"):
        refs.problem_set(field, getattr(payload, field))
    for field in ("mutator_endpoint_id", "solver_endpoint_id"):
        refs.endpoint(field, getattr(payload, field))
    return refs


@router.post(
    "/frontiersmith/campaigns", response={201: FrontierCampaignOut, 400: kind_api.ErrorOut}
)
def create_campaign(request, payload: FrontierCampaignIn):
    """Admins only. Unknown seed set, calibration set or endpoint → 400 naming the field; a bad
    setting → 400 whose ``errors`` are keyed by the setting's name. Nothing is created on any
    400."""
    return kind_api.create_campaign_response(
        request,
        payload,
        _references(payload),
        lambda found, **common: services.frontier_campaign_create(
            **common,
            seed_set=found["seed_set"],
            mutator_endpoint=found["mutator_endpoint_id"],
            solver_endpoint=found["solver_endpoint_id"],
            calibration_closed=found["calibration_closed"],
            calibration_open=found["calibration_open"],
        ),
        lambda pk: _campaign_out(selectors.frontier_get(campaign_id=pk)),
    )


@router.get("/frontiersmith/campaigns/{campaign_id}", response=FrontierCampaignOut)
def get_campaign(request, campaign_id: int):
    kind_api.require(request, ADMIN, CURATOR)
    return _campaign_out(
        kind_api.get_or_404(
            selectors.frontier_get, campaign_id, FrontierCampaign.DoesNotExist, "FrontierSmith"
        )
    )
