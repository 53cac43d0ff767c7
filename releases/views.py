"""Release pages. Public views (no login) read only ``selectors.public_*``: published releases,
public statements and examples, completed leaderboard runs. Curator views are thin: read a
selector, call one service, report its ValidationError as a message."""

from __future__ import annotations

import json
from datetime import date

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from accounts.roles import ADMIN, CURATOR, role_required
from evolution import jobs as job_machinery
from evolution.models import Campaign, ModelEndpoint, Problem, ProblemSet

from . import blinding, exports, independent, jobs, leaderboard, living, selectors, services
from .blinding import COUNTS_WITHHELD, closed_while_rating_blind
from .gate.form import GateRulesForm, RulesJSONError, parse_rules_json
from .leaderboard import board as leaderboard_board
from .models import Benchmark, ErratumKind, LeaderboardRun, Release, ReleaseItem
from .page_cache import cached_public_page
from .tasks import enqueue_leaderboard_run

NOT_PUBLISHED = "No such published release."


def _errors(request, exc: ValidationError) -> None:
    for message in exc.messages:
        messages.error(request, message)


# --- public ------------------------------------------------------------------------------------


@require_GET
@closed_while_rating_blind
def public_list(request):
    return render(
        request,
        "releases/public_list.html",
        {"releases": selectors.public_release_list(), "counts_withheld": COUNTS_WITHHELD},
    )


def published_release_or_404(slug: str, version: str) -> Release:
    try:
        return selectors.public_release_get(slug=slug, version=version)
    except Release.DoesNotExist:
        raise Http404(NOT_PUBLISHED)


@require_GET
@closed_while_rating_blind
@cached_public_page
def public_detail(request, slug: str, version: str):
    release = published_release_or_404(slug, version)
    blind = blinding.release_blind(release)
    changelog = selectors.release_changelog(release=release)
    reasons = living.changelog_reasons(release=release, changelog=changelog)
    return render(
        request,
        "releases/public_detail.html",
        {
            "release": release,
            "counts": selectors.public_release_counts(
                release=release, withhold_origin=blind.counts_withheld
            ),
            "counts_withheld": COUNTS_WITHHELD,
            "changelog": changelog,
            "changelog_reasons": blinding.withhold_changelog_reasons(
                reasons, changelog=changelog, blind=blind
            ),
            "errata": selectors.release_errata(release=release),
            "items": selectors.public_release_items(release=release),
            "questions": selectors.public_release_questions(release=release, blind=blind),
            "card": exports.card_markdown(
                release, yaml_header=False, withhold_origin=blind.counts_withheld
            ),
            "saturation": living.saturation_share(release=release),
        },
    )


@require_GET
@closed_while_rating_blind
@cached_public_page
def public_item(request, slug: str, version: str, public_id: str):
    release = published_release_or_404(slug, version)
    try:
        item = selectors.public_release_item(release=release, public_id=public_id)
    except ReleaseItem.DoesNotExist:
        raise Http404("No such problem in this release.")
    # A measured pass@1 over time is a difficulty: withheld with the label.
    history = (
        {"history_withheld": True}
        if item.withheld
        else living.item_context(release=release, public_id=public_id)
    )
    return render(
        request,
        "releases/public_item.html",
        {"release": release, "item": item, **history},
    )


LEADERBOARD_CONTROLS = ("after", "model", "sort", "dir")


@require_GET
@closed_while_rating_blind
@cached_public_page(controls=LEADERBOARD_CONTROLS)
def public_leaderboard(request, slug: str, version: str):
    release = published_release_or_404(slug, version)
    # While a problem is rated blind, pass@1 by difficulty and by origin, and anything resting
    # on the problems' dates, would split the release by origin (releases.leaderboard.board.build).
    blind = blinding.release_blind(release).counts_withheld
    board = leaderboard_board.build(
        release=release,
        sort=request.GET.get("sort", "pass1"),
        descending=request.GET.get("dir", "desc") != "asc",
        after=leaderboard_board.parse_after(request.GET.get("after")),
        model=request.GET.get("model", "")[:200],
        blind=blind,
    )
    chart = [
        {
            "model": r["model"],
            "value": r["pass1"]["value"],
            "low": r["pass1"].get("low", r["pass1"]["value"]),
            "high": r["pass1"].get("high", r["pass1"]["value"]),
            "n": r["pass1"].get("n"),
        }
        for r in board.rows
        if r.get("pass1") and r["pass1"].get("value") is not None
    ]
    cols = leaderboard_board.columns(board)
    return render(
        request,
        "releases/leaderboard.html",
        {
            "release": release,
            "board": board,
            "cols": cols,
            "difficulty_columns": [cols[f"d:{d}"] for d in board.difficulties],
            "origin_columns": [cols[f"o:{o}"] for o in board.origins],
            "rows": board.rows,
            "chart": chart,
            "dates": [d.isoformat() for d in board.dates],
            # The slider: 0 is "every problem", i the i-th problem date (the first not before
            # the chosen date).
            "after_index": 0
            if board.after is None
            else next(
                (i + 1 for i, d in enumerate(board.dates) if d >= board.after), len(board.dates)
            ),
            "saturation": living.saturation_share(release=release),
        },
    )


@require_GET
@closed_while_rating_blind
@cached_public_page
def public_card(request, slug: str, version: str):
    release = published_release_or_404(slug, version)
    withhold = blinding.release_blind(release).counts_withheld
    return HttpResponse(
        exports.card_markdown(release, withhold_origin=withhold),
        content_type="text/markdown; charset=utf-8",
    )


# --- curator -----------------------------------------------------------------------------------

CURATORS = (ADMIN, CURATOR)


@role_required(*CURATORS)
@require_GET
def curate_list(request):
    return render(
        request,
        "releases/curate_list.html",
        {
            "benchmarks": [
                (b, selectors.next_free_version(benchmark=b)) for b in selectors.benchmark_list()
            ],
            "releases": selectors.release_list(),
            "campaigns": Campaign.objects.order_by("-created_at"),
            "problem_sets": ProblemSet.objects.order_by("name"),
        },
    )


@role_required(*CURATORS)
@require_POST
def benchmark_new(request):
    try:
        services.benchmark_create(
            name=request.POST.get("name", ""),
            slug=request.POST.get("slug", ""),
            description=request.POST.get("description", ""),
            license=request.POST.get("license", "cc-by-4.0"),
        )
        messages.success(request, "Benchmark created.")
    except ValidationError as exc:
        _errors(request, exc)
    return redirect("releases:curate_list")


@role_required(*CURATORS)
@require_POST
def release_new(request):
    benchmark = get_object_or_404(Benchmark, pk=request.POST.get("benchmark") or 0)
    try:
        release = services.release_create(
            benchmark=benchmark,
            version=request.POST.get("version", "").strip()
            or selectors.next_free_version(benchmark=benchmark),
            campaigns=Campaign.objects.filter(pk__in=request.POST.getlist("campaigns")),
            problem_sets=ProblemSet.objects.filter(pk__in=request.POST.getlist("problem_sets")),
            notes=request.POST.get("notes", ""),
            created_by=request.user,
        )
    except ValidationError as exc:
        _errors(request, exc)
        return redirect("releases:curate_list")
    return redirect("releases:curate_detail", pk=release.pk)


def _curate_context(release: Release, **overrides) -> dict:
    run = selectors.release_latest_gate_run(release=release)
    question_source = services.question_source()
    selection = services.release_selection(release=release)
    context = {
        "release": release,
        "gate_run": run,
        "selection": selection,
        "rules_form": GateRulesForm.for_rules(release.gate_rules),
        "rules_json": json.dumps(release.gate_rules, indent=2),
        "rules_json_error": None,
        "rules_notes": release.notes,
        "counts": selectors.release_counts(release=release),
        "changelog": selectors.release_changelog(release=release) if not release.is_draft else None,
        "errata": selectors.release_errata(release=release),
        "erratum_kinds": ErratumKind.choices,
        "items": release.items.order_by("position"),
        "questions": release.questions.order_by("position"),
        "reasoning_campaigns": [
            (rc.pk, question_source.campaign_label(rc)) for rc in question_source.campaigns()
        ],
        "runs": selectors.release_runs(release=release),
        "question_runs": release.question_runs.select_related("endpoint").order_by("-created_at"),
        "endpoints": ModelEndpoint.objects.order_by("name"),
        "formats": exports.FORMATS,
        "manifest": exports.export_manifest(release) if not release.is_draft else None,
        # The dataset card as a frozen release publishes it (its contamination screen included).
        "card": exports.card_markdown(release, yaml_header=False) if not release.is_draft else None,
        "freeze_preview": selectors.freeze_preview(release=release, selection=selection)
        if release.is_draft
        else None,
        "next_versions": selectors.release_next_versions(release=release)
        if not release.is_draft
        else None,
        "independent": independent.release_context(release=release),
    }
    context.update(overrides)
    return context


@role_required(*CURATORS)
@require_GET
def curate_detail(request, pk: int):
    release = get_object_or_404(Release.objects.select_related("benchmark"), pk=pk)
    return render(request, "releases/curate_detail.html", _curate_context(release))


def _draft_action(request, pk: int, action) -> HttpResponse:
    release = get_object_or_404(Release, pk=pk)
    try:
        note = action(release)
        if note:
            messages.success(request, note)
    except ValidationError as exc:
        _errors(request, exc)
    return redirect("releases:curate_detail", pk=pk)


@role_required(*CURATORS)
@require_POST
def release_rules(request, pk: int):
    """Save the rules from the form, or from the JSON view (``mode=json``). A refused rule set
    comes back on the same page with the curator's text and values as sent, status 400."""
    release = get_object_or_404(Release.objects.select_related("benchmark"), pk=pk)
    notes = request.POST.get("notes")
    if request.POST.get("mode") == "json":
        text = request.POST.get("rules", "")
        try:
            rules = parse_rules_json(text)
        except RulesJSONError as exc:
            # The form shows what was sent with the text too (the page keeps the two in step),
            # so neither view loses the curator's edits.
            context = _curate_context(
                release,
                rules_form=GateRulesForm(request.POST),
                rules_json=text,
                rules_json_error=exc,
                rules_notes=notes,
            )
            return render(request, "releases/curate_detail.html", context, status=400)
    else:
        form = GateRulesForm(request.POST)
        if not form.is_valid():
            context = _curate_context(release, rules_form=form, rules_notes=notes)
            return render(request, "releases/curate_detail.html", context, status=400)
        rules = form.rules()
    try:
        services.release_update(release=release, rules=rules, notes=notes)
        messages.success(request, "Rules saved. Run the gate again to apply them.")
    except ValidationError as exc:
        _errors(request, exc)
    return redirect("releases:curate_detail", pk=pk)


@role_required(*CURATORS)
@require_POST
def release_gate(request, pk: int):
    def act(release):
        run = services.gate_run_create(release=release, by=request.user)
        return f"Gate: {run.passed} of {run.candidates} candidates pass."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_decide(request, pk: int):
    def act(release):
        problem = get_object_or_404(Problem, pk=request.POST.get("problem") or 0)
        include = request.POST.get("include") == "1"
        services.curation_decide(
            release=release,
            problem=problem,
            include=include,
            justification=request.POST.get("justification", ""),
            by=request.user,
        )
        return f"{'Included' if include else 'Excluded'} {problem.public_id}."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_freeze(request, pk: int):
    def act(release):
        if request.POST.get("confirm") != "freeze":
            raise ValidationError(
                "Freezing cannot be undone: confirm it in the dialog the Freeze button opens."
            )
        frozen = services.release_freeze(release=release, by=request.user)
        return f"Frozen: {frozen.item_count} items, hash {frozen.content_hash[:12]}."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_questions_add(request, pk: int):
    """Add reasoning questions to a draft: the chosen item ids, or every judged item of a
    campaign (optionally one type) whose answer counts as correct."""

    def act(release):
        raw_ids = request.POST.get("item_ids", "").replace(",", " ").split()
        if raw_ids:
            if not all(part.isdigit() for part in raw_ids):
                raise ValidationError("Item ids must be whole numbers.")
            found = services.question_source().items_by_id([int(p) for p in raw_ids])
            missing = sorted({int(p) for p in raw_ids} - set(found))
            if missing:
                raise ValidationError(f"Unknown reasoning item(s): {missing}.")
            items = [found[int(p)] for p in raw_ids]
        else:
            reasoning = get_object_or_404(
                services.question_source().campaigns(), pk=request.POST.get("reasoning") or 0
            )
            items = services.question_candidates(
                release=release,
                reasoning=reasoning,
                reasoning_type=request.POST.get("reasoning_type", "").strip(),
            )
        added = services.release_questions_add(
            release=release, items=items, note=request.POST.get("note", "")
        )
        return f"{added} question(s) added."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_question_remove(request, pk: int):
    def act(release):
        public_id = request.POST.get("public_id", "")
        services.release_question_remove(release=release, public_id=public_id)
        return f"Removed {public_id}."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_publish(request, pk: int):
    def act(release):
        if request.POST.get("confirm") != "publish":
            raise ValidationError(
                "Publishing cannot be undone: confirm it in the dialog the Publish button opens."
            )
        services.release_publish(release=release)
        return "Published."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_next(request, pk: int):
    release = get_object_or_404(Release, pk=pk)
    try:
        draft = services.release_next(
            release=release, bump=request.POST.get("bump", "patch"), created_by=request.user
        )
    except ValidationError as exc:
        _errors(request, exc)
        return redirect("releases:curate_detail", pk=pk)
    return redirect("releases:curate_detail", pk=draft.pk)


@role_required(*CURATORS)
@require_POST
def release_erratum(request, pk: int):
    def act(release):
        services.erratum_create(
            release=release,
            item_public_id=request.POST.get("item", ""),
            kind=request.POST.get("kind", ""),
            description=request.POST.get("description", ""),
            by=request.user,
        )
        return "Erratum recorded; fix the problem, then freeze the next patch version."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_run(request, pk: int):
    def act(release):
        endpoint = get_object_or_404(ModelEndpoint, pk=request.POST.get("endpoint") or 0)
        try:
            samples = int(request.POST.get("samples") or 4)
        except ValueError:
            raise ValidationError("Samples per problem must be a whole number.")
        run = leaderboard.run_create(
            release=release, endpoint=endpoint, samples=samples, by=request.user
        )
        enqueue_leaderboard_run(run.pk)
        return f"Evaluation of {run.label} queued."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_POST
def release_upload(request, pk: int):
    def act(release):
        upload = request.FILES.get("file")
        if upload is None:
            raise ValidationError("Choose a JSONL file of solutions.")
        if upload.size > settings.MAX_UPLOAD_BYTES:
            raise ValidationError(
                f"The file is larger than {settings.MAX_UPLOAD_BYTES} bytes (MAX_UPLOAD_BYTES)."
            )
        try:
            text = upload.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError("The file is not UTF-8 text.")
        released = request.POST.get("model_release_date") or None
        try:
            released = date.fromisoformat(released) if released else None
        except ValueError:
            raise ValidationError("The model's release date must be YYYY-MM-DD.")
        run = leaderboard.run_create_from_upload(
            release=release,
            label=request.POST.get("label", ""),
            content=text,
            model_release_date=released,
            by=request.user,
        )
        enqueue_leaderboard_run(run.pk)
        return f"Judging the uploaded solutions of {run.label}."

    return _draft_action(request, pk, act)


@role_required(*CURATORS)
@require_GET
def release_export(request, pk: int, fmt: str):
    release = get_object_or_404(Release.objects.select_related("benchmark"), pk=pk)
    if release.is_draft:
        raise Http404("A draft has no exports; freeze it first.")
    if fmt not in exports.FORMATS:
        raise Http404("Unknown export format.")
    content_type, suffix = exports.FORMATS[fmt]
    response = HttpResponse(exports.export_bytes(release, fmt), content_type=content_type)
    name = f"{release.benchmark.slug}-v{release.version}-{suffix}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@role_required(*CURATORS)
@require_GET
def run_detail(request, pk: int):
    run = get_object_or_404(LeaderboardRun.objects.select_related("release__benchmark"), pk=pk)
    summary = run.summary
    # A run summarised before open-ended (scored) problems were set apart counted them as
    # failed passes: shown recomputed from its samples (the stored summary is left as it is).
    resummarised = bool(
        summary
        and "pass_fail_problems" not in summary
        and leaderboard.scored_public_ids(run.release)
    )
    if resummarised:
        summary = leaderboard.run_summary(run=run)
    return render(
        request,
        "releases/run_detail.html",
        {"run": run, "summary": summary, "resummarised": resummarised},
    )


# The kinds of background job a curator may run again once it failed, by their URL slug.
RUN_AGAIN = {job.label.replace(" ", "-"): job for job in jobs.JOBS}


@role_required(*CURATORS)
@require_POST
def job_run_again(request, kind: str, pk: int):
    job = RUN_AGAIN.get(kind)
    if job is None:
        raise Http404("No such kind of job.")
    row = get_object_or_404(job.model.objects.select_related("release__benchmark"), pk=pk)
    if job_machinery.job_run_again(job=job, pk=pk, by=request.user):
        messages.success(request, f"The {job.label} is queued again.")
    else:
        messages.error(request, f"Only a failed {job.label} can be run again (it is {row.state}).")
    if job is jobs.LEADERBOARD_RUN:
        return redirect("releases:run_detail", pk=pk)
    if job is jobs.REMEASUREMENT:
        return redirect("releases:living", slug=row.release.benchmark.slug)
    return redirect("releases:curate_detail", pk=row.release_id)
