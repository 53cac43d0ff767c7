"""What BenchEvolver's lineage and candidate pages read: the provider errors behind each pass
rate (requests failed and retried, shown next to it and never counted in it) and a candidate
with its lineage, seed, parent and accepted problem."""

from __future__ import annotations

from django.db.models import Case, F, IntegerField, QuerySet, Sum, Value, When
from django.db.models.functions import Greatest

from evolution.models import Candidate, Lineage, LLMCall

PANEL_ROLE = "solver"


def failed_requests():
    """Per ledger row, the requests the provider failed (transport errors, HTTP 429/5xx, a
    refusal): every try of a call that got no usable answer, and the tries before the answer of
    one that got it (``tries`` counts requests sent). A call still "sent" failed nothing yet."""
    return Case(
        When(status=LLMCall.Status.ERROR, then=Greatest(F("tries"), Value(1))),
        When(
            status__in=(LLMCall.Status.OK, LLMCall.Status.UNPARSABLE),
            tries__gt=1,
            then=F("tries") - 1,
        ),
        default=Value(0),
        output_field=IntegerField(),
    )


def provider_errors(calls: QuerySet[LLMCall], by: str) -> dict:
    """The provider errors behind ``calls`` (requests failed and retried: a failed call asked
    again, or a request repeated inside one call), summed per value of the column ``by``;
    values without any are left out. These are the infrastructure errors a pass rate leaves
    out: shown next to it, never counted in it."""
    rows = calls.order_by().values(by).annotate(n=Sum(failed_requests()))
    return {row[by]: row["n"] for row in rows if row["n"]}


def panel_provider_errors(*, lineage: Lineage, candidate: Candidate | None = None) -> dict:
    """Provider errors behind a measurement's panel attempts, per endpoint name: the seed's
    calibration (``candidate`` None) or one candidate's difficulty measurement."""
    calls = LLMCall.objects.filter(lineage=lineage, role=PANEL_ROLE)
    calls = calls.filter(candidate=candidate) if candidate else calls.filter(candidate__isnull=True)
    return provider_errors(calls, "endpoint_name")


def attempt_provider_errors(attempts) -> dict[int, int]:
    """Provider errors behind each panel attempt (by pk), from the calls it records: the
    failed calls before it was answered (``details["infra_errors"]``, each its tries; one
    without a ledger row counts once) and the retried requests of the call that answered it
    (``details["call_id"]``)."""
    attempts = list(attempts)
    ids = set()
    for attempt in attempts:
        details = attempt.details or {}
        ids.add(details.get("call_id"))
        ids.update(e.get("call_id") for e in details.get("infra_errors", []))
    ids.discard(None)
    failed = dict(
        LLMCall.objects.filter(pk__in=ids)
        .annotate(failed=failed_requests())
        .values_list("pk", "failed")
    )
    out = {}
    for attempt in attempts:
        details = attempt.details or {}
        n = sum(failed.get(e.get("call_id"), 1) for e in details.get("infra_errors", []))
        n += failed.get(details.get("call_id"), 0)
        if n:
            out[attempt.pk] = n
    return out


def candidate_queryset() -> QuerySet[Candidate]:
    return Candidate.objects.select_related(
        "lineage__campaign", "lineage__seed", "parent", "accepted_problem"
    )
