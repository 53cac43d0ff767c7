"""HTML views for reviewers (blinded) and curators. Thin: read a selector, call a service.

Reviewer views only ever touch ``selectors.reviewer_*`` output. Their 404 message is the same
for "not yours" and "does not exist", so probing ids reveals nothing.
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.roles import ADMIN, CURATOR, REVIEWER, role_required
from evolution.measurement.selectors import problem_difficulty
from evolution.models import ProblemSet

from . import selectors, services
from .forms import (
    AdjudicationResolveForm,
    AnswerOverrideForm,
    OverrideForm,
    ReasoningRoundCreateForm,
    RoundCreateForm,
    rating_fields,
    reasoning_rating_fields,
)
from .models import (
    CF_MAX,
    CF_MIN,
    CF_STEP,
    RATING_DIMENSIONS,
    Adjudication,
    Assignment,
    GroupItem,
    ReviewRound,
    Tag,
    TagStatus,
)

NOT_FOUND = "No such review group in your queue."

# --- reviewer -------------------------------------------------------------------------------


@role_required(REVIEWER)
@require_GET
def queue(request):
    entries = selectors.reviewer_queue(reviewer=request.user)
    return render(request, "review/queue.html", {"entries": entries})


def _own_assignment(request, opaque_id: str) -> Assignment:
    try:
        return selectors.reviewer_assignment(reviewer=request.user, opaque_id=opaque_id)
    except Assignment.DoesNotExist:
        raise Http404(NOT_FOUND)


def _labelled_errors(form) -> list[tuple[str, str]]:
    """A bound form's errors as (what the reviewer sees on the page, message): field labels,
    never the field names (``cf_rating``) the form posts."""
    if form is None:
        return []
    out = []
    for name, errors in form.errors.items():
        field = form.fields.get(name)
        if field is None:
            label = "This item"
        else:
            label = field.label or name.replace("_", " ").capitalize()
        out.extend((str(label), str(message)) for message in errors)
    return out


FIELD_LABELS = {
    "clarity": "Clarity",
    "novelty": "Novelty",
    "difficulty": "Difficulty",
    "quality": "Quality",
    "validity": "Validity",
    "validity_reason": "Validity reason",
    "cf_rating": "Codeforces rating estimate",
    "tags": "Algorithms and data structures",
    "justification": "Justification",
    "answer_verdict": "Is the given answer correct?",
}


# What each verdict means, as the review form words it (the scales' points carry their own).
VALIDITY_MEANINGS = {
    "valid": "solvable and well-posed as stated",
    "invalid": "wrong, unsolvable or ill-posed",
    "unsure": "",
}
VERDICT_MEANINGS = {
    "correct": "right, and for the right reasons",
    "incorrect": "wrong, incomplete or unjustified",
    "unsure": "",
}


def _worded(value, meaning: str = "") -> str:
    """One submitted answer as text ("4 — Clear; small polish possible"); "no answer" when
    the draft left it empty."""
    if value is None or value == "":
        return "no answer"
    return f"{value} — {meaning}" if meaning else str(value)


def _submitted_answers(draft: selectors.ReviewerDraft, scales: list[dict], verdict: tuple):
    """A submitted item's answers as read-only (label, text) rows: each scale with the meaning
    of its point, the verdict with its meaning, then the item's own text answers."""
    rows = []
    for scale in scales:
        value = getattr(draft, scale["name"])
        meaning = next((p["meaning"] for p in scale["points"] if p["value"] == value), "")
        rows.append((scale["label"], _worded(value, meaning)))
    name, label, meanings = verdict
    value = getattr(draft, name)
    rows.append((label, _worded(value, meanings.get(value, ""))))
    return rows


def _submitted_problem_answers(draft: selectors.ReviewerDraft, scales: list[dict]):
    rows = _submitted_answers(
        draft,
        [{**s, "label": FIELD_LABELS[s["name"]]} for s in scales],
        ("validity", FIELD_LABELS["validity"], VALIDITY_MEANINGS),
    )
    if draft.validity_reason.strip():
        rows.append((FIELD_LABELS["validity_reason"], draft.validity_reason))
    rows.append((FIELD_LABELS["cf_rating"], _worded(draft.cf_rating)))
    rows.append((FIELD_LABELS["tags"], _worded(draft.tags)))
    rows.append((FIELD_LABELS["justification"], _worded(draft.justification)))
    return rows


def _submitted_question_answers(draft: selectors.ReviewerDraft, scales: list[dict]):
    rows = _submitted_answers(
        draft,
        [{**s, "label": f"{FIELD_LABELS[s['name']]} of the question"} for s in scales],
        ("answer_verdict", FIELD_LABELS["answer_verdict"], VERDICT_MEANINGS),
    )
    rows.append((FIELD_LABELS["justification"], _worded(draft.justification)))
    return rows


def _draft_labels(group: selectors.ReviewerGroup) -> dict[str, str]:
    """What the reviewer calls each input of the form ("Problem B · Clarity")."""
    labels = {}
    for problem in group.problems:
        for name in selectors.CODING_DRAFT_FIELDS:
            labels[f"{problem.opaque_id}-{name}"] = (
                f"Problem {problem.label} · {FIELD_LABELS[name]}"
            )
    for question in group.questions:
        for name in selectors.REASONING_DRAFT_FIELDS:
            labels[f"{question.opaque_id}-{name}"] = (
                f"Question {question.label} · {FIELD_LABELS[name]}"
            )
    labels["certify_no_ai"] = "No generative AI certification"
    return labels


def _same_text(a: str, b: str) -> bool:
    return str(a).replace("\r\n", "\n").strip() == str(b).replace("\r\n", "\n").strip()


def _as_posted(group: selectors.ReviewerGroup, data) -> selectors.ReviewerGroup:
    """``group`` showing the answers as ``data`` posted them instead of the stored draft."""

    def text(opaque: str, name: str) -> str:
        return str(data.get(f"{opaque}-{name}", ""))

    def number(opaque: str, name: str) -> int | None:
        try:
            return int(data.get(f"{opaque}-{name}", ""))
        except (TypeError, ValueError):
            return None

    def posted(item):
        o = item.opaque_id
        draft = replace(
            item.draft,
            **{n: number(o, n) for n in ("clarity", "novelty", "difficulty", "quality")},
            cf_rating=number(o, "cf_rating"),
            **{
                n: text(o, n)
                for n in ("validity", "validity_reason", "tags", "justification", "answer_verdict")
            },
        )
        return replace(item, draft=draft)

    return replace(
        group,
        certified_no_ai=bool(data.get("certify_no_ai")),
        problems=[posted(p) for p in group.problems],
        questions=[posted(q) for q in group.questions],
    )


def _group_context(
    request, assignment: Assignment, *, forms=None, certify_error="", posted=None, conflict=None
) -> dict:
    """Template rows per problem: the blinded problem, its scales with the current draft
    value, and (after a failed submit) its field errors. ``posted`` with ``conflict`` (a
    submit based on an older draft version): the answers as posted, next to the saved ones
    where they differ."""
    group = selectors.reviewer_group(reviewer=request.user, opaque_id=assignment.opaque_id)
    assignment.refresh_from_db()  # a refused submit has just saved a draft (a new version)
    state = conflict or selectors.reviewer_draft_state(assignment=assignment)
    labels = _draft_labels(group)
    conflict_rows = []
    if conflict is not None:
        group = _as_posted(group, posted)
        for name, theirs in conflict.fields.items():
            mine = posted.get(name, "")
            if not _same_text(mine, theirs):
                if name == "certify_no_ai":
                    mine, theirs = (("certified" if v else "not certified") for v in (mine, theirs))
                conflict_rows.append((labels.get(name, name), mine, theirs))
    forms = forms or {}
    rows = []
    for problem in group.problems:
        form = forms.get(problem.opaque_id)
        scales = [
            {**scale, "current": getattr(problem.draft, scale["name"])} for scale in rating_fields()
        ]
        rows.append(
            {
                "p": problem,
                "scales": scales,
                "errors": _labelled_errors(form),
                "answers": (
                    _submitted_problem_answers(problem.draft, scales) if group.submitted else []
                ),
            }
        )
    question_rows = []
    for question in group.questions:
        form = forms.get(question.opaque_id)
        scales = [
            {**scale, "current": getattr(question.draft, scale["name"])}
            for scale in reasoning_rating_fields()
        ]
        question_rows.append(
            {
                "q": question,
                "scales": scales,
                "errors": _labelled_errors(form),
                "answers": (
                    _submitted_question_answers(question.draft, scales) if group.submitted else []
                ),
            }
        )
    queue = selectors.reviewer_queue(reviewer=request.user)
    return {
        "group": group,
        "rows": rows,
        "queue_total": len(queue),
        "queue_submitted": sum(1 for e in queue if e.submitted),
        "question_rows": question_rows,
        "certify_error": certify_error,
        "cf_choices": list(range(CF_MIN, CF_MAX + 1, CF_STEP)),
        "draft_version": state.version,
        "draft_state": {"version": state.version, "fields": state.fields, "labels": labels},
        "conflict_rows": conflict_rows,
        # When the reviewer submitted the group (their own act, shown to them alone).
        "submitted_on": assignment.submitted_at,
    }


def _wants_json(request) -> bool:
    """The review page's script asks for JSON; a plain form post (no JavaScript) does not."""
    return "application/json" in request.headers.get("Accept", "")


def _state_json(draft: selectors.ReviewerDraftState, **extra) -> dict:
    return {"version": draft.version, "submitted": draft.submitted, "fields": draft.fields, **extra}


def _after_submit(request, opaque_id: str) -> str:
    """Where a submitted group leads: straight on to the next group to rate, as a queue tool
    does; the queue when done. The message shows on that page."""
    waiting = [
        e
        for e in selectors.reviewer_queue(reviewer=request.user)
        if not e.submitted and e.opaque_id != opaque_id
    ]
    if waiting:
        messages.success(
            request, f"Submitted. Next group: {len(waiting)} still to rate in your queue."
        )
        return reverse("review:group", args=[waiting[0].opaque_id])
    messages.success(request, "Thank you: your reviews of this group are submitted.")
    return reverse("review:queue")


@role_required(REVIEWER)
def group(request, opaque_id: str):
    """GET shows the group; POST submits the whole group: the page's script asks for JSON
    (and stays on the page whatever the answer), a plain form post gets pages."""
    assignment = _own_assignment(request, opaque_id)
    if request.method == "POST":
        return _submit(request, assignment)
    services.assignment_open(assignment=assignment)
    return render(request, "review/group.html", _group_context(request, assignment))


def _submit(request, assignment: Assignment):
    as_json = _wants_json(request)
    try:
        result = services.assignment_submit(assignment=assignment, data=request.POST)
    except services.DraftConflict as exc:
        if as_json:
            return JsonResponse(
                _state_json(exc.state, state="conflict", message=exc.message), status=409
            )
        context = _group_context(request, assignment, posted=request.POST, conflict=exc.state)
        return render(request, "review/group.html", context, status=409)
    except services.AlreadySubmitted as exc:
        if as_json:
            return JsonResponse({"state": "submitted", "message": exc.message}, status=409)
        messages.error(request, exc.message)
        return redirect("review:group", opaque_id=assignment.opaque_id)
    except ValidationError as exc:
        if as_json:
            return JsonResponse({"state": "closed", "message": "; ".join(exc.messages)}, status=409)
        messages.error(request, "; ".join(exc.messages))
        return redirect("review:queue")
    if result.ok:
        url = _after_submit(request, assignment.opaque_id)
        if as_json:
            return JsonResponse({"state": "submitted", "next": url})
        return redirect(url)
    if as_json:
        return JsonResponse(
            _state_json(
                result.state,
                state="invalid",
                message="Some answers need attention; they are marked below. "
                "Nothing was submitted; your draft is kept.",
                errors={
                    item: _labelled_errors(form)
                    for item, form in result.forms.items()
                    if form.errors
                },
                certify_error=result.certify_error,
            ),
            status=400,
        )
    context = _group_context(
        request, assignment, forms=result.forms, certify_error=result.certify_error
    )
    context["has_errors"] = True
    return render(request, "review/group.html", context, status=400)


@role_required(REVIEWER)
@require_http_methods(["GET", "POST"])
def autosave(request, opaque_id: str):
    """The review page's drafts. POST saves the whole form, based on the draft version the
    page last saw (``draft_version``); GET answers what the server holds now, with its version
    (JSON), so a page can catch up with another tab's saves.

    The page's script asks for JSON: ``state`` (saved, refused, conflict, submitted, closed),
    ``message``, and where known ``version`` and ``fields``. Other callers get the status
    fragment."""
    assignment = _own_assignment(request, opaque_id)
    if request.method == "GET":
        state = selectors.reviewer_draft_state(assignment=assignment)
        return JsonResponse(_state_json(state, state="current"))
    as_json = _wants_json(request)

    def answer(save_state: str, message: str, status: int, state=None, fragment=""):
        if as_json:
            body = _state_json(state) if state is not None else {}
            return JsonResponse({**body, "state": save_state, "message": message}, status=status)
        return render(
            request,
            "review/group.html#save-status",
            {"save_state": "saved" if status == 200 else "error", "save_message": fragment},
            status=status,
        )

    try:
        result = services.assignment_save_draft(assignment=assignment, data=request.POST)
    except services.DraftConflict as exc:
        return answer("conflict", exc.message, 409, exc.state, exc.message)
    except services.AlreadySubmitted as exc:
        return answer("submitted", f"Not saved: {exc.message}", 409, fragment=exc.message)
    except ValidationError as exc:
        text = "; ".join(exc.messages)
        return answer("closed", f"Not saved: {text}", 409, fragment=text)
    if result.rejected:
        text = f"invalid values refused: {result.message}"
        return answer("refused", f"Not saved: {text}", 422, result.state, text)
    return answer("saved", "Draft saved", 200, result.state)


@role_required(REVIEWER)
@require_GET
def tag_suggest(request):
    """htmx typeahead: suggestions for the last comma-separated token of the tags field."""
    text = request.GET.get("q", "")
    if not text:
        # htmx sends the input under its own (prefixed) name.
        text = next((v for k, v in request.GET.items() if k.endswith("-tags")), "")
    last = text.split(",")[-1]
    suggestions = selectors.reviewer_tag_suggestions(reviewer=request.user, query=last)
    return render(
        request,
        "review/tag_suggestions.html",
        {"suggestions": suggestions, "field": request.GET.get("field", "")},
    )


# --- curator --------------------------------------------------------------------------------


@role_required(ADMIN, CURATOR)
@require_GET
def round_list(request):
    return render(request, "review/round_list.html", {"rounds": selectors.round_list()})


def _coding_plan(form) -> tuple[list, list, list]:
    """(groups, problems left out, problems chosen) from the form's campaigns and sets."""
    data = form.cleaned_data
    if not form.has_filtered_sources:
        return [], [], []
    chosen = selectors.coding_problem_choice(
        campaigns=data["campaigns"],
        problem_sets=data["problem_sets"],
        filters=selectors.ProblemFilter(
            levels=tuple(data["levels"] or ()),
            tag=data["tag"] or "",
            min_pass_at_1=data["min_pass_at_1"],
            max_pass_at_1=data["max_pass_at_1"],
            review_status=data["review_status"] or "any",
        ),
    )
    # Lineages picked as they are keep their seeds; the filtered problems do not repeat them.
    taken = {selectors.lineage_problem_list(lineage=lin)[0].pk for lin in data["lineages"]}
    chosen = [p for p in chosen if (p.lineage_root_id or p.pk) not in taken]
    groups, left_out = selectors.coding_group_plan(
        problems=chosen, include_seeds=data["include_seeds"], max_groups=data["max_groups"]
    )
    return groups, left_out, chosen


@role_required(ADMIN, CURATOR)
def round_create(request):
    """A coding round: lineages as they are, and the problems of campaigns of any kind and of
    problem sets, filtered, grouped by shared seed. "Preview" shows the groups first."""
    form = RoundCreateForm(
        request.POST or None,
        lineage_queryset=selectors.lineage_choice_list(),
        lineage_label=selectors.lineage_source().label,
        campaign_queryset=selectors.coding_campaign_choice_list(),
        problem_set_queryset=ProblemSet.objects.order_by("name"),
    )
    plan = None
    if request.method == "POST" and form.is_valid():
        groups, left_out, chosen = _coding_plan(form)
        measured = problem_difficulty([p.pk for g in groups for p in g])
        plan = {
            "groups": [[(p, measured.get(p.pk)) for p in g] for g in groups],
            "left_out": left_out,
            "chosen": len(chosen),
            "lineages": list(form.cleaned_data["lineages"]),
        }
        if "preview" not in request.POST:
            try:
                if form.has_filtered_sources and not groups and not form.cleaned_data["lineages"]:
                    raise ValidationError(
                        f"No review group can be formed: {len(chosen)} problem(s) pass the "
                        "filters; a group needs at least 2."
                    )
                review_round = services.round_create(
                    name=form.cleaned_data["name"],
                    instructions=form.cleaned_data["instructions"],
                    created_by=request.user,
                    reviewers=form.cleaned_data["reviewers"],
                    lineages=form.cleaned_data["lineages"],
                    problem_groups=groups,
                    reviewers_per_group=form.cleaned_data["reviewers_per_group"],
                    exclude_creators=form.cleaned_data["exclude_creators"],
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                count = review_round.groups.count()
                messages.success(
                    request, f"Round {review_round.name!r} created with {count} group(s)."
                )
                return redirect("review:round_detail", pk=review_round.pk)
    return render(request, "review/round_create.html", {"form": form, "plan": plan})


@role_required(ADMIN, CURATOR)
def round_create_reasoning(request):
    """A round of reasoning items: a campaign's judged items (or chosen ids) in groups of one
    type across difficulties."""
    form = ReasoningRoundCreateForm(
        request.POST or None,
        reasoning_queryset=selectors.reasoning_choice_list(),
        reasoning_label=selectors.question_source().campaign_label,
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        groups = selectors.reasoning_group_plan(
            reasoning=data["reasoning"],
            item_ids=data["item_ids"] or None,
            group_size=data["group_size"],
            max_groups=data["max_groups"],
        )
        try:
            if not groups:
                raise ValidationError(
                    "No review group can be formed: each needs 2 judged items of one type."
                )
            review_round = services.round_create(
                name=data["name"],
                instructions=data["instructions"],
                created_by=request.user,
                reviewers=data["reviewers"],
                reasoning_groups=groups,
                reviewers_per_group=data["reviewers_per_group"],
                exclude_creators=data["exclude_creators"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(
                request, f"Round {review_round.name!r} created with {len(groups)} group(s)."
            )
            return redirect("review:round_detail", pk=review_round.pk)
    return render(request, "review/round_create_reasoning.html", {"form": form})


@role_required(ADMIN, CURATOR)
@require_GET
def round_detail(request, pk: int):
    review_round = get_object_or_404(ReviewRound, pk=pk)
    aggregates = selectors.round_item_aggregates(review_round=review_round)
    adjudications = list(selectors.round_adjudications(review_round=review_round))
    screens = selectors.adjudication_screens(adjudications=adjudications)
    return render(
        request,
        "review/round_detail.html",
        {
            "round": review_round,
            "progress": selectors.round_progress(review_round=review_round),
            "understaffed": selectors.round_understaffed_groups(review_round=review_round),
            "agreement": selectors.round_agreement(review_round=review_round),
            "aggregates": aggregates,
            "answer_rows": [a for a in aggregates if a.reasoning_item is not None],
            "adjudications": [
                (a, selectors.adjudication_reviews(adjudication=a), screens[a.item_id])
                for a in adjudications
            ],
            "dimensions": RATING_DIMENSIONS,
            "override_form": OverrideForm(),
            "answer_override_form": AnswerOverrideForm(),
        },
    )


@role_required(ADMIN, CURATOR)
@require_POST
def round_status(request, pk: int):
    review_round = get_object_or_404(ReviewRound, pk=pk)
    try:
        services.round_set_status(review_round=review_round, status=request.POST.get("status", ""))
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect("review:round_detail", pk=pk)


@role_required(ADMIN, CURATOR)
@require_POST
def round_reassign(request, pk: int):
    review_round = get_object_or_404(ReviewRound, pk=pk)
    created = services.round_assign(review_round=review_round)
    messages.success(request, f"{created} new assignment(s).")
    return redirect("review:round_detail", pk=pk)


@role_required(ADMIN, CURATOR)
@require_GET
def round_export(request, pk: int, fmt: str):
    if fmt not in ("csv", "jsonl"):
        raise Http404("Export as .csv or .jsonl.")
    review_round = get_object_or_404(ReviewRound, pk=pk)
    rows = selectors.round_export_rows(review_round=review_round)
    filename = f"review-round-{review_round.pk}.{fmt}"
    if fmt == "jsonl":
        response = StreamingHttpResponse(
            (json.dumps(row, ensure_ascii=False) + "\n" for row in rows),
            content_type="application/x-ndjson; charset=utf-8",
        )
    else:
        response = HttpResponse(content_type="text/csv; charset=utf-8")
        writer = None
        for row in rows:
            flat = {**row, "tags": "|".join(row["tags"])}
            if writer is None:
                writer = csv.DictWriter(response, fieldnames=list(flat))
                writer.writeheader()
            writer.writerow(flat)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@role_required(ADMIN, CURATOR)
@require_POST
def adjudication_resolve(request, pk: int):
    adjudication = get_object_or_404(Adjudication.objects.select_related("item__group"), pk=pk)
    form = AdjudicationResolveForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("Write down how the disagreement was resolved.")
        services.adjudication_resolve(
            adjudication=adjudication,
            by=request.user,
            resolution=form.cleaned_data["resolution"],
            value=form.cleaned_data["value"],
        )
        messages.success(request, "Disagreement resolved.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect(
        reverse("review:round_detail", args=[adjudication.item.group.round_id]) + "#adjudication"
    )


@role_required(ADMIN, CURATOR)
@require_POST
def score_override(request, pk: int):
    review_round = get_object_or_404(ReviewRound, pk=pk)
    item = get_object_or_404(
        GroupItem, group__round=review_round, opaque_id=request.POST.get("item", "")
    )
    form = OverrideForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("An override needs a dimension, a value and a reason.")
        services.score_override_create(item=item, by=request.user, **form.cleaned_data)
        messages.success(request, "Override recorded.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect(reverse("review:round_detail", args=[pk]) + "#aggregates")


@role_required(ADMIN, CURATOR)
@require_POST
def answer_override(request, pk: int):
    """The curator settles a reasoning item's answer: the judges' score is replaced and the
    campaign's EMA recomputed."""
    review_round = get_object_or_404(ReviewRound, pk=pk)
    item = get_object_or_404(
        GroupItem.objects.select_related("group__round"),
        group__round=review_round,
        opaque_id=request.POST.get("item", ""),
    )
    form = AnswerOverrideForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("An answer override needs a verdict and a reason.")
        services.reasoning_answer_override(
            item=item,
            verdict=form.cleaned_data["verdict"],
            reason=form.cleaned_data["reason"],
            by=request.user,
        )
        messages.success(request, "Answer verdict recorded; the campaign's EMA is recomputed.")
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    return redirect(reverse("review:round_detail", args=[pk]) + "#answers")


@role_required(ADMIN, CURATOR)
def tag_list(request):
    if request.method == "POST":
        tag = get_object_or_404(Tag, pk=request.POST.get("tag"))
        try:
            if request.POST.get("action") == "approve":
                services.tag_approve(tag=tag)
                messages.success(request, f"{tag.name!r} approved.")
            elif request.POST.get("action") == "merge":
                into = get_object_or_404(Tag, pk=request.POST.get("into"))
                services.tag_merge(tag=tag, into=into)
                messages.success(request, f"{tag.name!r} merged into {into.name!r}.")
            else:
                raise ValidationError("Unknown action.")
        except ValidationError as exc:
            messages.error(request, "; ".join(exc.messages))
        return redirect("review:tag_list")
    return render(
        request,
        "review/tag_list.html",
        {
            "proposed": selectors.tag_list(status=TagStatus.PROPOSED),
            "approved": selectors.tag_list(status=TagStatus.APPROVED),
        },
    )
