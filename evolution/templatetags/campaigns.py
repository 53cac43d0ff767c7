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


@register.inclusion_tag("evolution/_worker_notice.html", takes_context=True)
def worker_notice(context, campaign):
    """A launched campaign (queued or running) whose queues no live worker serves: say which,
    since nothing will move until a worker consumes them. Asked of ``evolution.workers``
    (cached a few seconds), only for launched campaigns."""
    if not campaign.is_active:
        return {"missing": []}
    from evolution.streams.kinds import kind_for
    from evolution.workers import workers_by_queue

    live = workers_by_queue()
    try:
        needed = kind_for(campaign.kind).queues
    except LookupError:
        return {"missing": []}
    return {
        "missing": [queue for queue in needed if not live.get(queue)],
        "campaign": campaign,
        "link_workers": context.get("is_admin_role", False),
    }
