"""Writes of the gateway: campaign budget reservation, the LLMCall log, unparsable marks."""

from __future__ import annotations

from decimal import Decimal

from django.db import transaction
from django.db.models import F, Q

from evolution.models import Campaign, LLMCall
from evolution.models.fields import compress_json_text

from .errors import BudgetExhausted, LLMError

_MICRO = Decimal("0.000001")


def call_cost(endpoint, *, tokens_in: int, tokens_out: int) -> Decimal:
    """Price of one exchange from the endpoint's per-1k-token prices, to the micro-unit."""
    cost = (Decimal(tokens_in) * Decimal(endpoint.price_in_per_1k)) / 1000 + (
        Decimal(tokens_out) * Decimal(endpoint.price_out_per_1k)
    ) / 1000
    return cost.quantize(_MICRO)


def _budget_reason(campaign: Campaign) -> str:
    used_tokens = campaign.tokens_in + campaign.tokens_out
    if campaign.budget_max_calls is not None and campaign.calls_made >= campaign.budget_max_calls:
        return (
            f"campaign {campaign.pk} budget reached: {campaign.calls_made} of "
            f"{campaign.budget_max_calls} calls made"
        )
    if campaign.budget_max_tokens is not None and used_tokens >= campaign.budget_max_tokens:
        return (
            f"campaign {campaign.pk} budget reached: {used_tokens} of "
            f"{campaign.budget_max_tokens} tokens used"
        )
    if campaign.budget_max_cost is not None and campaign.cost >= campaign.budget_max_cost:
        return (
            f"campaign {campaign.pk} budget reached: cost {campaign.cost} of "
            f"{campaign.budget_max_cost}"
        )
    return f"campaign {campaign.pk} budget reached"


def campaign_budget_reserve(*, campaign_id: int) -> None:
    """Count one call against the campaign, or raise BudgetExhausted if a budget is reached.

    One conditional UPDATE checks every budget and increments ``calls_made`` together, so
    concurrent workers can never start more calls than ``budget_max_calls``. Tokens and cost
    are only known afterwards: they are added by ``llm_call_record`` and may overshoot their
    budgets by the calls already in flight when the limit is crossed.
    """
    reserved = (
        Campaign.objects.filter(pk=campaign_id)
        .filter(Q(budget_max_calls__isnull=True) | Q(calls_made__lt=F("budget_max_calls")))
        .filter(
            Q(budget_max_tokens__isnull=True)
            | Q(budget_max_tokens__gt=F("tokens_in") + F("tokens_out"))
        )
        .filter(Q(budget_max_cost__isnull=True) | Q(budget_max_cost__gt=F("cost")))
        .update(calls_made=F("calls_made") + 1)
    )
    if reserved:
        return
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        raise LLMError(f"campaign {campaign_id} does not exist")
    raise BudgetExhausted(_budget_reason(campaign), campaign_id=campaign_id)


def llm_call_begin(
    *, endpoint, context, role: str, template: str, template_version: str, request_json: str
) -> LLMCall:
    """Log a call's intent (status "sent") before its request leaves, committed at once.

    ``llm_call_record(call=...)`` completes the row; a worker that dies in between leaves it
    "sent", so every request a provider may have received (and billed) is in the ledger."""
    return LLMCall.objects.create(
        campaign_id=context.campaign_id,
        lineage_id=context.lineage_id,
        candidate_id=context.candidate_id,
        role=role,
        endpoint=endpoint,
        endpoint_name=endpoint.name,
        template=template,
        template_version=template_version,
        request_z=compress_json_text(request_json),
        status=LLMCall.Status.SENT,
        tries=0,
    )


def llm_call_record(
    *,
    call: LLMCall | None = None,
    endpoint,
    context,
    role: str,
    template: str,
    template_version: str,
    request_json: str,
    response_text: str | None,
    tokens_in: int = 0,
    tokens_out: int = 0,
    latency_ms: int = 0,
    tries: int = 1,
    http_status: int | None = None,
    status: str,
    error: str = "",
    replayed: bool = False,
) -> LLMCall:
    """Insert the LLMCall (or complete ``call``, its logged intent) and add its tokens and
    cost to the campaign, in one transaction.

    ``calls_made`` was already counted by ``campaign_budget_reserve`` when the call started.
    A replayed exchange also labels its campaign as replayed.
    """
    cost = call_cost(endpoint, tokens_in=tokens_in, tokens_out=tokens_out)
    with transaction.atomic():
        columns = dict(
            campaign_id=context.campaign_id,
            lineage_id=context.lineage_id,
            candidate_id=context.candidate_id,
            role=role,
            endpoint=endpoint,
            endpoint_name=endpoint.name,
            template=template,
            template_version=template_version,
            request_z=compress_json_text(request_json),
            response_z=compress_json_text(response_text) if response_text else None,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost=cost,
            latency_ms=latency_ms,
            tries=min(tries, 32767),
            http_status=http_status,
            status=status,
            error=error,
            replayed=replayed,
        )
        if call is None:
            call = LLMCall.objects.create(**columns)
        else:
            for name, value in columns.items():
                setattr(call, name, value)
            call.save(update_fields=list(columns))
        if context.campaign_id is not None:
            changes = {}
            if tokens_in:
                changes["tokens_in"] = F("tokens_in") + tokens_in
            if tokens_out:
                changes["tokens_out"] = F("tokens_out") + tokens_out
            if cost:
                changes["cost"] = F("cost") + cost
            if replayed:
                changes["replayed"] = True
            if changes:
                Campaign.objects.filter(pk=context.campaign_id).update(**changes)
    return call


def llm_call_mark_unparsable(*, call_id: int, reason: str) -> None:
    """Record that a successful exchange's content could not be parsed by its caller."""
    updated = LLMCall.objects.filter(pk=call_id).update(
        status=LLMCall.Status.UNPARSABLE, error=reason
    )
    if not updated:
        raise LLMError(f"LLM call {call_id} does not exist")
