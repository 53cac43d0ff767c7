"""EvoSyn campaigns over HTTP (django-ninja): create (optionally launch) and read one.

Launch, pause, resume and cancel are the shared ``/campaigns/{id}/<action>`` operations of
evolution's router: they work on every campaign kind."""

from __future__ import annotations

from ninja import Router

from accounts.roles import ADMIN, CURATOR
from evolution import campaign_api as kind_api
from evolution.models import ModelEndpoint

from . import selectors, services
from .forms import ROLES
from .models import EvoSynCampaign, InstanceRole

router = Router(tags=["evosyn"])


class EvoSynCampaignIn(kind_api.KindCampaignIn):
    endpoint_id: int
    role_endpoints: dict[str, int] = {}
    # The panel that measures the kept problems (settings.measure_kept); none: not measured.
    panel_id: int | None = None


class EvoSynCampaignOut(kind_api.KindCampaignOut):
    endpoint: str
    role_endpoints: dict[str, int]
    seeds: int


def _campaign_out(esc: EvoSynCampaign) -> dict:
    c = esc.campaign
    return {
        **kind_api.campaign_fields(c),
        "endpoint": c.evolver.name if c.evolver else "",
        "role_endpoints": c.role_endpoints or {},
        "seeds": esc.instances.filter(role=InstanceRole.SEED).count(),
    }


def _references(payload: EvoSynCampaignIn) -> kind_api.References:
    refs = kind_api.References()
    refs.problem_set("seed_set", payload.seed_set, label="seed set")
    refs.endpoint("endpoint_id", payload.endpoint_id)
    for role, endpoint_id in payload.role_endpoints.items():
        if role not in ROLES:
            problem = f"unknown role {role!r} (roles: {', '.join(ROLES)})"
        elif not ModelEndpoint.objects.filter(pk=endpoint_id).exists():
            problem = f"role {role}: endpoint {endpoint_id} does not exist"
        else:
            continue
        refs.errors.setdefault("role_endpoints", []).append(problem)
    refs.panel("panel_id", payload.panel_id)
    return refs


@router.post("/evosyn/campaigns", response={201: EvoSynCampaignOut, 400: kind_api.ErrorOut})
def create_campaign(request, payload: EvoSynCampaignIn):
    """Admins only. Unknown seed set, endpoint or role → 400 naming the field; a bad setting →
    400 whose ``errors`` are keyed by the setting's name. Nothing is created on any 400."""
    return kind_api.create_campaign_response(
        request,
        payload,
        _references(payload),
        lambda found, **common: services.evosyn_campaign_create(
            **common,
            seed_set=found["seed_set"],
            endpoint=found["endpoint_id"],
            role_endpoints=payload.role_endpoints,
            panel=found["panel_id"],
        ),
        lambda pk: _campaign_out(selectors.evosyn_get(campaign_id=pk)),
    )


@router.get("/evosyn/campaigns/{campaign_id}", response=EvoSynCampaignOut)
def get_campaign(request, campaign_id: int):
    kind_api.require(request, ADMIN, CURATOR)
    return _campaign_out(
        kind_api.get_or_404(
            selectors.evosyn_get, campaign_id, EvoSynCampaign.DoesNotExist, "EvoSyn"
        )
    )
