"""Disagreements, adjudication and overrides: where reviewers' ratings are far apart a curator
settles the value, or overrides a score.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from .. import selectors
from ..models import (
    CF_MAX,
    CF_MIN,
    CF_STEP,
    RATING_DIMENSIONS,
    Adjudication,
    AdjudicationStatus,
    GroupItem,
    Review,
    ScoreOverride,
    Validity,
)

# Ratings this far apart on one dimension are a disagreement a curator settles.
DISAGREEMENT_GAP = 2


@transaction.atomic
def adjudication_refresh(*, item: GroupItem) -> list[Adjudication]:
    """Open an adjudication per dimension where submitted ratings differ by >= 2, and for
    conflicting validity. Already-open or resolved adjudications are kept as they are."""
    reviews = list(Review.objects.filter(item=item, submitted_at__isnull=False))
    if len(reviews) < 2:
        return []
    opened = []
    for dim in RATING_DIMENSIONS:
        values = [getattr(r, dim) for r in reviews if getattr(r, dim) is not None]
        if len(values) >= 2 and max(values) - min(values) >= DISAGREEMENT_GAP:
            adj, created = Adjudication.objects.get_or_create(
                item=item,
                dimension=dim,
                defaults={
                    "detail": f"{dim} ratings {sorted(values)} differ by {max(values) - min(values)}"
                },
            )
            if created:
                opened.append(adj)
    validities = sorted({r.validity for r in reviews if r.validity})
    if len(validities) > 1:
        adj, created = Adjudication.objects.get_or_create(
            item=item,
            dimension="validity",
            defaults={"detail": f"validity {', '.join(validities)}"},
        )
        if created:
            opened.append(adj)
    verdicts = sorted({r.answer_verdict for r in reviews if r.answer_verdict})
    if len(verdicts) > 1:
        adj, created = Adjudication.objects.get_or_create(
            item=item,
            dimension="answer",
            defaults={"detail": f"answer judged {', '.join(verdicts)}"},
        )
        if created:
            opened.append(adj)
    return opened


@transaction.atomic
def adjudication_resolve(
    *, adjudication: Adjudication, by, resolution: str, value: str = ""
) -> Adjudication:
    """Record the curator's decision. A value (a 1-5 rating or a validity) also becomes an
    override of the aggregated score, so the gate reads the settled number. On a reasoning
    item's "answer" dimension the value (correct / incorrect) replaces the judges' score and
    the campaign's EMA is recomputed (``reasoning_answer_override``)."""
    if not resolution.strip():
        raise ValidationError("Write down how the disagreement was resolved.")
    value = value.strip()
    # The dimension the value settles: a calibration disagreement (experts against the
    # panel, opened by releases.calibration) is settled by the expert difficulty.
    dimension = SETTLED_BY.get(adjudication.dimension, adjudication.dimension)
    if value:
        _check_override_value(dimension, value)
    adjudication.status = AdjudicationStatus.RESOLVED
    adjudication.resolution = resolution.strip()
    adjudication.resolved_value = value
    adjudication.resolved_by = by
    adjudication.resolved_at = timezone.now()
    adjudication.save()
    if value:
        score_override_create(
            item=adjudication.item,
            dimension=dimension,
            value=value,
            reason=f"adjudication: {resolution.strip()}",
            by=by,
        )
    return adjudication


OVERRIDABLE = (*RATING_DIMENSIONS, "cf_rating", "validity", "answer")

# Adjudication dimensions whose value is an override of another dimension.
SETTLED_BY = {"calibration": "difficulty"}

ANSWER_OVERRIDE_SCORES = {"correct": 1.0, "incorrect": 0.0, "clear": None}


def _check_override_value(dimension: str, value: str) -> None:
    if dimension not in OVERRIDABLE:
        raise ValidationError(
            f"Unknown dimension {dimension!r}; use one of {', '.join(OVERRIDABLE)}."
        )
    if dimension == "answer":
        if value not in ANSWER_OVERRIDE_SCORES:
            raise ValidationError(
                f"An answer verdict must be one of {', '.join(ANSWER_OVERRIDE_SCORES)}."
            )
        return
    if dimension == "validity":
        if value not in Validity.values:
            raise ValidationError(f"Validity must be one of {', '.join(Validity.values)}.")
        return
    try:
        number = float(value)
    except ValueError:
        raise ValidationError(f"{dimension} must be a number, got {value!r}.")
    if dimension == "cf_rating":
        if not (CF_MIN <= number <= CF_MAX) or number % CF_STEP:
            raise ValidationError(f"cf_rating must be {CF_MIN}-{CF_MAX} in steps of {CF_STEP}.")
    elif not 1 <= number <= 5:
        raise ValidationError(f"{dimension} must be between 1 and 5.")


@transaction.atomic
def score_override_create(
    *, item: GroupItem, dimension: str, value: str, reason: str, by
) -> ScoreOverride:
    """Replace an aggregated score with a curator's value; the reason is required and kept.
    The "answer" dimension of a reasoning item goes through ``reasoning_answer_override``."""
    value = str(value).strip()
    if dimension == "answer":
        return reasoning_answer_override(item=item, verdict=value, reason=reason, by=by)
    _check_override_value(dimension, value)
    if not reason.strip():
        raise ValidationError("An override needs a reason.")
    return ScoreOverride.objects.create(
        item=item, dimension=dimension, value=value, reason=reason.strip(), created_by=by
    )


@transaction.atomic
def reasoning_answer_override(*, item: GroupItem, verdict: str, reason: str, by) -> ScoreOverride:
    """The curator settles whether a reasoning item's answer is correct.

    ``verdict`` "correct" / "incorrect" replaces the judges' score of the item with 1.0 / 0.0
    in its campaign (through the item's problem source; the reasoning kind recomputes every
    EMA and logs it); "clear" removes the override. The decision is also kept
    as the item's newest "answer" ScoreOverride in this round, with the reason.
    ValidationError when the item is a coding problem, the verdict is unknown or the reason
    is blank.
    """
    verdict = str(verdict).strip()
    if not item.reasoning_item_id:
        raise ValidationError("Only reasoning items have an answer to override.")
    _check_override_value("answer", verdict)
    if not (reason or "").strip():
        raise ValidationError("An override needs a reason.")
    review_round = item.group.round
    selectors.question_source().answer_override(
        item_id=item.reasoning_item_id,
        score=ANSWER_OVERRIDE_SCORES[verdict],
        reason=f"review round {review_round.name!r}: {reason.strip()}",
        user=by,
    )
    return ScoreOverride.objects.create(
        item=item, dimension="answer", value=verdict, reason=reason.strip(), created_by=by
    )
