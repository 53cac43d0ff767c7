"""Writes for blinded review. Every function is keyword-only and atomic where it matters."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from evolution.models import Campaign, Candidate, Lineage, Problem

from . import selectors
from .forms import ItemReviewForm, ReasoningItemReviewForm
from .models import (
    CF_MAX,
    CF_MIN,
    CF_STEP,
    RATING_DIMENSIONS,
    Adjudication,
    AdjudicationStatus,
    Assignment,
    GroupItem,
    GroupKind,
    Review,
    ReviewGroup,
    ReviewRound,
    ScoreOverride,
    Tag,
    TagStatus,
    TagSynonym,
    Validity,
)
from .vocabulary import normalize_tag_key

MIN_GROUP, MAX_GROUP = 2, 4
# One autosave can add at most this much active time: a tab left open overnight is not work.
MAX_ELAPSED_PER_SAVE = 300
DISAGREEMENT_GAP = 2

_system_random = random.SystemRandom()


# --- rounds, groups, assignments ----------------------------------------------------------


@dataclass(frozen=True)
class GroupSource:
    """What a group is built from: a lineage, or a seed problem and its descendants."""

    root: Problem
    problems: list[Problem]
    lineage: Lineage | None = None


def group_source_from_lineage(*, lineage: Lineage) -> GroupSource:
    return GroupSource(
        root=lineage.seed, problems=selectors.lineage_problem_list(lineage=lineage), lineage=lineage
    )


def group_source_from_root(*, root: Problem) -> GroupSource:
    return GroupSource(root=root, problems=selectors.root_problem_list(root=root))


@transaction.atomic
def round_create(
    *,
    name: str,
    created_by,
    reviewers: Iterable,
    lineages: Iterable[Lineage] = (),
    roots: Iterable[Problem] = (),
    problem_groups: Iterable[Sequence[Problem]] = (),
    reasoning_groups: Iterable[Sequence] = (),
    reviewers_per_group: int = 2,
    exclude_creators: bool = True,
    instructions: str = "",
    rng: random.Random | None = None,
) -> ReviewRound:
    """Create a round with one group per lineage / root / reasoning group and assign reviewers.

    ``problem_groups``: each a sequence of 2-4 problems of any kind, shown as one group
    (``selectors.coding_group_plan`` builds them from campaigns and problem sets).
    ``reasoning_groups``: each a sequence of 2-4 judged reasoning items (see
    ``selectors.reasoning_group_plan``); a round may mix them with coding groups.
    Raises ValidationError (naming the lineage or seed by its public id, or the reasoning
    item by its id) when a source has fewer than 2 or more than 4 items, an item is not judged
    or appears twice, or when no reviewers are given.
    """
    reviewers = list(reviewers)
    if not name.strip():
        raise ValidationError("A round needs a name.")
    if not reviewers:
        raise ValidationError("Choose at least one reviewer.")
    if not 1 <= reviewers_per_group <= 5:
        raise ValidationError("Reviewers per group must be between 1 and 5.")
    sources = [group_source_from_lineage(lineage=lin) for lin in lineages]
    sources += [group_source_from_root(root=root) for root in roots]
    sources += [GroupSource(root=group[0], problems=list(group)) for group in problem_groups]
    question_groups = [list(g) for g in reasoning_groups]
    if not sources and not question_groups:
        raise ValidationError("Choose at least one lineage.")
    _check_reasoning_groups(question_groups)
    seen_roots: set[int] = set()
    seen_problems: set[int] = set()
    for source in sources:
        if len(source.problems) < MIN_GROUP:
            raise ValidationError(
                f"The lineage of {source.root.public_id} has {len(source.problems)} problem(s); "
                f"a review group needs {MIN_GROUP} to {MAX_GROUP}."
            )
        if source.root.pk in seen_roots:
            raise ValidationError(f"{source.root.public_id} was chosen twice.")
        seen_roots.add(source.root.pk)
        for problem in source.problems[:MAX_GROUP]:
            if problem.pk in seen_problems:
                raise ValidationError(f"{problem.public_id} would be reviewed twice in the round.")
            seen_problems.add(problem.pk)

    review_round = ReviewRound.objects.create(
        name=name.strip(),
        created_by=created_by,
        reviewers_per_group=reviewers_per_group,
        exclude_creators=exclude_creators,
        instructions=instructions,
    )
    review_round.reviewers.set(reviewers)
    # Every coding group, then every item, in one insert each: the queries do not grow with
    # the round (a round over a release of LiveCodeBench's size has hundreds of groups).
    groups = ReviewGroup.objects.bulk_create(
        ReviewGroup(
            round=review_round, lineage=source.lineage, root_problem=source.root, position=position
        )
        for position, source in enumerate(sources)
    )
    GroupItem.objects.bulk_create(
        GroupItem(group=group, problem=p, lineage_position=i)
        for group, source in zip(groups, sources, strict=True)
        for i, p in enumerate(source.problems[:MAX_GROUP])
    )
    source = selectors.question_source() if question_groups else None
    for position, items in enumerate(question_groups, start=len(sources)):
        group = ReviewGroup.objects.create(
            round=review_round,
            kind=GroupKind.REASONING,
            reasoning_type=source.group_type(items),
            position=position,
        )
        ordered = sorted(items, key=source.group_order)
        GroupItem.objects.bulk_create(
            GroupItem(group=group, reasoning_item=item, lineage_position=i)
            for i, item in enumerate(ordered)
        )
    round_assign(review_round=review_round, rng=rng)
    return review_round


def _check_reasoning_groups(groups: list[list]) -> None:
    if not groups:
        return
    source = selectors.question_source()
    seen: set[int] = set()
    for items in groups:
        if not MIN_GROUP <= len(items) <= MAX_GROUP:
            ids = ", ".join(str(i.pk) for i in items) or "none"
            raise ValidationError(
                f"A reasoning group needs {MIN_GROUP} to {MAX_GROUP} items; "
                f"one has {len(items)} (items {ids})."
            )
        for item in items:
            refusal = source.review_refusal(item)
            if refusal:
                raise ValidationError(refusal)
            if item.pk in seen:
                raise ValidationError(f"Reasoning item {item.pk} was chosen twice.")
            seen.add(item.pk)


def _group_creators(groups: list[ReviewGroup]) -> dict[int, set[int]]:
    """Per group, the users who helped create its problems: creators of the campaigns behind
    them. The groups' items must be prefetched; the coding groups' creators come from three
    queries whatever their number."""
    creators: dict[int, set[int]] = {group.pk: set() for group in groups}
    problem_groups: dict[int, list[int]] = {}
    for group in groups:
        if group.kind == GroupKind.REASONING:
            creators[group.pk] |= selectors.question_source().creator_ids(
                item_ids=[item.reasoning_item_id for item in group.items.all()]
            )
        if group.lineage_id:
            creators[group.pk].add(group.lineage.campaign.created_by_id)
        for item in group.items.all():
            if item.problem_id is not None:
                problem_groups.setdefault(item.problem_id, []).append(group.pk)
    by_problem: dict[int, set[int]] = {}
    for problem_id, creator in Candidate.objects.filter(
        accepted_problem_id__in=list(problem_groups)
    ).values_list("accepted_problem_id", "lineage__campaign__created_by_id"):
        by_problem.setdefault(problem_id, set()).add(creator)
    # Kinds without candidates (X-Coder, EvoSyn, FrontierSmith) record their campaign's id.
    campaign_of = {
        problem_id: campaign
        for problem_id, campaign in Problem.objects.filter(pk__in=list(problem_groups)).values_list(
            "pk", "metadata__campaign"
        )
        if isinstance(campaign, int)
    }
    campaign_creators = dict(
        Campaign.objects.filter(pk__in=set(campaign_of.values())).values_list("pk", "created_by_id")
    )
    for problem_id, campaign in campaign_of.items():
        by_problem.setdefault(problem_id, set()).add(campaign_creators.get(campaign))
    for problem_id, group_ids in problem_groups.items():
        for group_id in group_ids:
            creators[group_id] |= by_problem.get(problem_id, set())
    for found in creators.values():
        found.discard(None)
    return creators


@transaction.atomic
def round_assign(*, review_round: ReviewRound, rng: random.Random | None = None) -> int:
    """Top up every group of the round to ``reviewers_per_group`` assignments.

    Load balanced: each pick is the eligible reviewer with the fewest problems assigned in
    this round, ties broken at random. Never twice to the same reviewer; creators are skipped
    when the round excludes them. Idempotent: rerunning (e.g. after adding reviewers) only
    fills gaps. Returns the number of assignments created.
    """
    rng = rng or _system_random
    review_round = ReviewRound.objects.select_for_update().get(pk=review_round.pk)
    pool = list(review_round.reviewers.filter(is_active=True))
    load = {u.pk: 0 for u in pool}
    counted = (
        Review.objects.filter(assignment__group__round=review_round)
        .values("assignment__reviewer_id")
        .annotate(n=Count("id"))
    )
    for row in counted:
        if row["assignment__reviewer_id"] in load:
            load[row["assignment__reviewer_id"]] = row["n"]
    groups = list(
        review_round.groups.select_related("lineage__campaign").prefetch_related(
            "items", "assignments"
        )
    )
    # Visit groups in random order so early lineages do not always get the same reviewers.
    rng.shuffle(groups)
    excluded = _group_creators(groups) if review_round.exclude_creators else {}
    planned: list[tuple[Assignment, list[GroupItem]]] = []
    for group in groups:
        taken = {a.reviewer_id for a in group.assignments.all()}
        skip = excluded.get(group.pk, set())
        items = list(group.items.all())
        while len(taken) < review_round.reviewers_per_group:
            eligible = [u for u in pool if u.pk not in taken and u.pk not in skip]
            if not eligible:
                break  # "where possible": fewer reviewers than asked; the round page says so
            rng.shuffle(eligible)
            reviewer = min(eligible, key=lambda u: load[u.pk])
            order = list(items)
            rng.shuffle(order)  # per-reviewer order: position never reveals which one is the seed
            planned.append((Assignment(group=group, reviewer=reviewer), order))
            taken.add(reviewer.pk)
            load[reviewer.pk] += len(items)
    # The assignments, then their reviews, in one insert each.
    Assignment.objects.bulk_create(assignment for assignment, _ in planned)
    Review.objects.bulk_create(
        Review(assignment=assignment, item=item, position=i)
        for assignment, order in planned
        for i, item in enumerate(order)
    )
    return len(planned)


@transaction.atomic
def round_set_status(*, review_round: ReviewRound, status: str) -> ReviewRound:
    if status not in ("open", "closed"):
        raise ValidationError(f"Unknown round status {status!r}.")
    review_round.status = status
    review_round.save(update_fields=["status"])
    return review_round


# --- tags ---------------------------------------------------------------------------------


@transaction.atomic
def tag_vocabulary_load() -> int:
    """Add the starting vocabulary (review/vocabulary.py) where missing. Idempotent; returns
    the number of tags created. Migration 0002 loads the same list on a fresh database."""
    from .vocabulary import VOCABULARY

    created = 0
    for name, synonyms in VOCABULARY.items():
        tag, made = Tag.objects.get_or_create(name=name, defaults={"status": TagStatus.APPROVED})
        created += made
        for key in {normalize_tag_key(name), *(normalize_tag_key(s) for s in synonyms)}:
            TagSynonym.objects.get_or_create(key=key, defaults={"tag": tag})
    return created


def _canonical(tag: Tag) -> Tag:
    seen = set()
    while tag.status == TagStatus.MERGED and tag.merged_into_id and tag.pk not in seen:
        seen.add(tag.pk)
        tag = tag.merged_into
    return tag


def tag_resolve(*, text: str, proposed_by=None) -> Tag | None:
    """The canonical tag for ``text`` ("HLD" -> heavy-light decomposition).

    Unknown text becomes a proposed tag owned by ``proposed_by`` (a curator approves or merges
    it later). Returns None for blank text.
    """
    key = normalize_tag_key(text)[:80]
    if not key:
        return None
    synonym = TagSynonym.objects.select_related("tag").filter(key=key).first()
    if synonym:
        return _canonical(synonym.tag)
    name = " ".join(text.split())[:80]
    tag, _ = Tag.objects.get_or_create(
        name=name, defaults={"status": TagStatus.PROPOSED, "proposed_by": proposed_by}
    )
    TagSynonym.objects.get_or_create(key=key, defaults={"tag": tag})
    return _canonical(tag)


def tags_resolve(*, text: str, proposed_by=None) -> list[Tag]:
    tags: dict[int, Tag] = {}
    for part in text.split(","):
        tag = tag_resolve(text=part, proposed_by=proposed_by)
        if tag is not None:
            tags.setdefault(tag.pk, tag)
    return list(tags.values())


@transaction.atomic
def tag_approve(*, tag: Tag) -> Tag:
    if tag.status != TagStatus.PROPOSED:
        raise ValidationError(f"Only a proposed tag can be approved; {tag.name!r} is {tag.status}.")
    tag.status = TagStatus.APPROVED
    tag.save(update_fields=["status"])
    return tag


@transaction.atomic
def tag_merge(*, tag: Tag, into: Tag) -> Tag:
    """Fold ``tag`` into ``into``: its spellings become synonyms, its reviews point to ``into``."""
    into = _canonical(into)
    if tag.pk == into.pk:
        raise ValidationError("A tag cannot be merged into itself.")
    if tag.status == TagStatus.MERGED:
        raise ValidationError(f"{tag.name!r} is already merged.")
    TagSynonym.objects.filter(tag=tag).update(tag=into)
    TagSynonym.objects.get_or_create(key=normalize_tag_key(tag.name)[:80], defaults={"tag": into})
    through = Review.tags.through
    for review_id in through.objects.filter(tag=tag).values_list("review_id", flat=True):
        through.objects.get_or_create(review_id=review_id, tag=into)
    through.objects.filter(tag=tag).delete()
    tag.status = TagStatus.MERGED
    tag.merged_into = into
    tag.save(update_fields=["status", "merged_into"])
    Tag.objects.filter(merged_into=tag).update(merged_into=into)
    return into


# --- drafts and submission ------------------------------------------------------------------


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


# --- disagreements, adjudication, overrides -------------------------------------------------


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
