"""Drafts and submission: autosaved drafts with versions (a stale tab cannot overwrite newer
work), active time, and the submitted review.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from .. import selectors
from ..forms import ItemReviewForm, ReasoningItemReviewForm
from ..models import (
    RATING_DIMENSIONS,
    Assignment,
    Review,
)
from .adjudication import adjudication_refresh
from .tags import tags_resolve

# One autosave can add at most this much active time: a tab left open overnight is not work.
MAX_ELAPSED_PER_SAVE = 300


class AlreadySubmitted(ValidationError):
    pass


class DraftConflict(ValidationError):
    """A save or submit based on an older version of the group's draft than the server's
    (another tab or window saved since): nothing of it was stored. ``state`` is what the
    server holds now, for the page to show next to its own answers."""

    def __init__(self, state: selectors.ReviewerDraftState):
        super().__init__(
            "Answers were saved from another tab or window after this page last saved; "
            "nothing was overwritten."
        )
        self.state = state


def _based_on(data: Mapping) -> int | None:
    """The draft version a form was based on; None when it names none (the API, old pages)."""
    raw = data.get("draft_version")
    if raw is None or raw == "":
        return None
    try:
        return int(raw)
    except (TypeError, ValueError):
        return -1  # unreadable: never matches, so it is refused rather than applied


def _writer(data: Mapping) -> str:
    return str(data.get("draft_writer") or "")[:32]


def _check_version(assignment: Assignment, data: Mapping) -> None:
    """Refuse (DraftConflict) a form based on an older version than the server's, unless
    every version since was saved by the same page: nothing in them is new to it."""
    based_on = _based_on(data)
    if based_on is None or based_on == assignment.draft_version:
        return
    writer = _writer(data)
    if writer and writer == assignment.draft_writer and based_on >= assignment.draft_writer_since:
        return
    raise DraftConflict(selectors.reviewer_draft_state(assignment=assignment))


def _item_forms(assignment: Assignment, data: Mapping) -> list[tuple[Review, ItemReviewForm]]:
    """Each review with its bound form: the coding form for a problem, the question-and-answer
    form for a reasoning item."""
    reviews = list(assignment.reviews.select_related("item").order_by("position"))
    return [
        (
            r,
            (ReasoningItemReviewForm if r.item.reasoning_item_id else ItemReviewForm)(
                data, prefix=r.item.opaque_id
            ),
        )
        for r in reviews
    ]


def _elapsed(form: ItemReviewForm | ReasoningItemReviewForm) -> float:
    raw = form.data.get(form.add_prefix("elapsed"), "")
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        return 0.0
    if seconds != seconds:  # NaN
        return 0.0
    return max(0.0, min(seconds, MAX_ELAPSED_PER_SAVE))


def _apply(
    review: Review, form: ItemReviewForm | ReasoningItemReviewForm, *, values: Mapping
) -> None:
    for field in (*RATING_DIMENSIONS, "cf_rating"):
        setattr(review, field, values.get(field))
    review.validity = values.get("validity") or ""
    review.answer_verdict = values.get("answer_verdict") or ""
    review.validity_reason = (values.get("validity_reason") or "").strip()
    review.justification = (values.get("justification") or "").strip()
    review.tags_text = (values.get("tags") or "").strip()
    review.seconds_spent += _elapsed(form)


@transaction.atomic
def assignment_open(*, assignment: Assignment) -> None:
    """Record when the reviewer first opened the group (wall-clock time when JS is off)."""
    Assignment.objects.filter(pk=assignment.pk, opened_at__isnull=True).update(
        opened_at=timezone.now()
    )


@dataclass
class DraftResult:
    """``saved``: problems whose draft changed. ``rejected``: each input (by its form name,
    e.g. ``<opaque id>-quality``) that held a value the field refuses, with the messages; those
    values were not stored, and the caller must say so rather than "saved"."""

    saved: int
    rejected: dict[str, list[str]]
    # What the server holds after the save, with its version.
    state: selectors.ReviewerDraftState | None = None

    @property
    def message(self) -> str:
        return "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in self.rejected.items())


# Free text is kept as typed in a draft, valid yet or not.
_DRAFT_RAW_TEXT = ("validity_reason", "tags", "justification")


@transaction.atomic
def assignment_save_draft(*, assignment: Assignment, data: Mapping) -> DraftResult:
    """Save whatever is valid in ``data`` as a draft; missing fields stay empty.

    A value a field refuses (a rating out of range, an unknown choice) is not stored and is
    reported in ``rejected``, so the reviewer is told instead of reading "saved". Raises
    AlreadySubmitted once the group is submitted, and DraftConflict (storing nothing) when
    ``data["draft_version"]`` names an older version than the server's. A save that changes
    what the server holds bumps the version; the result carries the new state.
    """
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.is_submitted:
        raise AlreadySubmitted("This group was already submitted.")
    if assignment.group.round.status != "open":
        raise ValidationError("This review round is closed.")
    _check_version(assignment, data)
    before = selectors.reviewer_draft_state(assignment=assignment).fields
    changed = 0
    rejected: dict[str, list[str]] = {}
    for review, form in _item_forms(assignment, data):
        if not any(key.startswith(f"{review.item.opaque_id}-") for key in data):
            continue
        form.is_valid()  # fills cleaned_data with every field that is valid on its own
        for name, messages in form.errors.items():
            raw = data.get(form.add_prefix(name))
            # An empty field is unfinished, not wrong; free text is kept as typed.
            if name in _DRAFT_RAW_TEXT or name not in form.fields or raw in (None, ""):
                continue
            rejected[form.add_prefix(name)] = list(messages)
        values = {
            name: form.cleaned_data.get(name)
            for name in form.fields
            if name not in form.errors or name in ("validity_reason", "tags")
        }
        # Keep raw text the reviewer typed even when it is not yet acceptable.
        for name in ("validity_reason", "tags", "justification"):
            raw = data.get(form.add_prefix(name))
            if raw is not None:
                values[name] = str(raw)[:2000]
        _apply(review, form, values=values)
        review.save()
        changed += 1
    certify = data.get("certify_no_ai")
    if certify is not None:
        assignment.certified_no_ai = str(certify).lower() in ("on", "true", "1")
        assignment.save(update_fields=["certified_no_ai"])
    state = selectors.reviewer_draft_state(assignment=assignment)
    if state.fields != before:
        writer = _writer(data)
        if not writer or writer != assignment.draft_writer:
            based_on = _based_on(data)
            assignment.draft_writer = writer
            assignment.draft_writer_since = (
                assignment.draft_version if based_on is None else max(0, based_on)
            )
        assignment.draft_version += 1
        assignment.save(update_fields=["draft_version", "draft_writer", "draft_writer_since"])
        state = replace(state, version=assignment.draft_version)
    return DraftResult(saved=changed, rejected=rejected, state=state)


@dataclass
class SubmitResult:
    ok: bool
    forms: dict[str, ItemReviewForm]
    certify_error: str = ""
    # The group had been submitted already, with these very answers (a second click, a
    # second tab): nothing changed, and the submit counts as done.
    already: bool = False
    # After a refused submit: the draft the server keeps, with its version.
    state: selectors.ReviewerDraftState | None = None


def _text(value) -> str:
    return str(value or "").replace("\r\n", "\n").strip()


def _same_as_submitted(assignment: Assignment, data: Mapping) -> bool:
    """Whether ``data`` is a valid, certified submit of exactly the answers submitted."""
    if str(data.get("certify_no_ai", "")).lower() not in ("on", "true", "1"):
        return False
    for review, form in _item_forms(assignment, data):
        if not form.is_valid():
            return False
        for name, given in form.cleaned_data.items():
            if name == "elapsed":
                continue
            stored = review.tags_text if name == "tags" else getattr(review, name)
            if name in _DRAFT_RAW_TEXT or isinstance(given, str):
                if _text(given) != _text(stored):
                    return False
            elif given != stored:
                return False
    return True


@transaction.atomic
def assignment_submit(*, assignment: Assignment, data: Mapping) -> SubmitResult:
    """Validate every problem of the group strictly and submit them together.

    On any error nothing is submitted, the valid parts are kept as a draft, and the result
    carries the bound forms with their errors. Submitting again the answers already submitted
    is a success that changes nothing (``already``); other answers after the submit raise
    AlreadySubmitted. A submit based on an older draft version than the server's raises
    DraftConflict and stores nothing.
    """
    assignment = Assignment.objects.select_for_update().get(pk=assignment.pk)
    if assignment.is_submitted:
        if _same_as_submitted(assignment, data):
            return SubmitResult(ok=True, forms={}, already=True)
        raise AlreadySubmitted(
            "This group was already submitted, with answers that differ from these; "
            "submitted answers cannot be changed."
        )
    if assignment.group.round.status != "open":
        raise ValidationError("This review round is closed.")
    _check_version(assignment, data)
    pairs = _item_forms(assignment, data)
    certified = str(data.get("certify_no_ai", "")).lower() in ("on", "true", "1")
    valid = all([form.is_valid() for _, form in pairs])
    certify_error = "" if certified else "Certify that no generative AI was used for this group."
    forms_by_item = {review.item.opaque_id: form for review, form in pairs}
    if not valid or not certified:
        draft = assignment_save_draft(assignment=assignment, data=data)
        return SubmitResult(
            ok=False, forms=forms_by_item, certify_error=certify_error, state=draft.state
        )

    now = timezone.now()
    for review, form in pairs:
        _apply(review, form, values=form.cleaned_data)
        review.submitted_at = now
        review.save()
        review.tags.set(tags_resolve(text=review.tags_text, proposed_by=assignment.reviewer))
    # Without JavaScript nothing measured active time: fall back to wall-clock time, split evenly.
    if assignment.opened_at and not any(r.seconds_spent for r, _ in pairs):
        share = (now - assignment.opened_at).total_seconds() / max(1, len(pairs))
        Review.objects.filter(assignment=assignment).update(seconds_spent=share)
    assignment.certified_no_ai = True
    assignment.submitted_at = now
    assignment.save(update_fields=["certified_no_ai", "submitted_at"])
    for review, _ in pairs:
        adjudication_refresh(item=review.item)
    return SubmitResult(ok=True, forms=forms_by_item)
