from django import template
from django.urls import reverse

from evolution.models.campaigns import CampaignKind

register = template.Library()


@register.simple_tag
def control_url(campaign, action: str) -> str:
    """Where the controls partial posts ``action`` for ``campaign``: the one control view, by
    the route of the campaign's kind (``<kind>:campaign_control``; BenchEvolver's is
    ``evolution:campaign_control``)."""
    namespace = "evolution" if campaign.kind == CampaignKind.BENCHEVOLVER else campaign.kind
    return reverse(f"{namespace}:campaign_control", args=[campaign.pk, action])
