"""Public release pages while reviewers rate released problems blind.

A problem is under blind review while it is in a group of an open round with an assignment
not yet submitted (``review.selectors.items_under_blind_review``). Reviewers see each group
with one presentation of limits and without origin, so a public page showing a problem's
origin, difficulty (and what it rests on), real time and memory limits, reviewer tags or
measured pass@1 would tell them which problem of the group is the seed. While any problem of
a release is under review, its pages also withhold what splits the release by origin or
difficulty: the evolved / original counts (from which a withheld origin follows by
subtraction), the leaderboard's breakdowns, and what rests on the problems' dates (an
original's date is its contest's, an evolution's the day it was made): the date window and
the count of problems older than a model with the pass@1 over the others.

A signed-in user who is rating blind right now (``review.selectors.rates_blind_now``) gets
no public release page at all: that a statement is published, and where, separates accepted
evolutions from the seed. They get a page saying so (403, never cached).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from django.shortcuts import render
from ninja.errors import HttpError

from review.selectors import items_under_blind_review, rates_blind_now

OFF_LIMITS = (
    "Public release pages are off limits while you rate problems blind: submit your open "
    "review assignments first."
)
COUNTS_WITHHELD = "origin counts withheld during blind review"


@dataclass(frozen=True)
class Blind:
    """Which items of one release are under blind review now, by public id."""

    problems: frozenset[str] = frozenset()
    questions: frozenset[str] = frozenset()
    # The reviewed problems' ids (any release's items: a changelog names the previous one's).
    problem_ids: frozenset[int] = frozenset()

    def __contains__(self, public_id: str) -> bool:
        return public_id in self.problems or public_id in self.questions

    @property
    def counts_withheld(self) -> bool:
        """Origin counts and the leaderboard's breakdowns wait until no problem is reviewed."""
        return bool(self.problems)


def _blind_problem_ids():
    return items_under_blind_review().filter(problem__isnull=False).values("problem_id")


def _blind_reasoning_ids():
    return (
        items_under_blind_review().filter(reasoning_item__isnull=False).values("reasoning_item_id")
    )


def release_blind(release) -> Blind:
    """The items (problems and reasoning questions) of ``release`` under blind review."""
    problem_ids = frozenset(_blind_problem_ids().values_list("problem_id", flat=True))
    problems = frozenset(
        release.items.filter(problem_id__in=problem_ids).values_list("public_id", flat=True)
    )
    questions = frozenset(
        release.questions.filter(reasoning_item_id__in=_blind_reasoning_ids()).values_list(
            "public_id", flat=True
        )
    )
    return Blind(problems=problems, questions=questions, problem_ids=problem_ids)


def cache_key_part(release) -> str:
    """The public ids of ``release``'s items under blind review, in one query: part of the
    public page cache's key, so a page cached before a round opened (or closed) is not
    served after."""
    items = release.items.filter(problem_id__in=_blind_problem_ids()).values_list("public_id")
    questions = release.questions.filter(reasoning_item_id__in=_blind_reasoning_ids()).values_list(
        "public_id"
    )
    return ",".join(sorted(pid for (pid,) in items.union(questions)))


def release_has_blind_problem_q(outer_ref):
    """An ``Exists`` for annotating releases (``outer_ref``: the release's pk) that have a
    problem under blind review."""
    from django.db.models import Exists

    from .models import ReleaseItem

    return Exists(
        ReleaseItem.objects.filter(release=outer_ref, problem_id__in=_blind_problem_ids())
    )


def withhold_changelog_reasons(reasons: dict, *, changelog, blind: Blind) -> dict:
    """Why items joined or left, without the reasons about problems under blind review
    ("re-evolved from saturated <seed> (<campaign>)" names where a problem came from; a
    retirement names the pass@1 that made it saturated)."""
    removed_blind = {
        i.public_id
        for i in changelog.removed
        if getattr(i, "problem_id", None) in blind.problem_ids
    }
    # A removal's reason may name what replaced it ("re-evolved into <id>"): an evolution.
    added_blind = {
        i.public_id for i in changelog.added if getattr(i, "problem_id", None) in blind.problem_ids
    }
    withheld = "withheld during blind review"
    return {
        "retired": {
            pid: (
                withheld if pid in removed_blind or any(new in why for new in added_blind) else why
            )
            for pid, why in reasons.get("retired", {}).items()
        },
        "replacing": {
            pid: (withheld if pid in blind else why)
            for pid, why in reasons.get("replacing", {}).items()
        },
    }


def withhold_living(data: dict) -> dict:
    """The living-benchmark page's data without the saturation flags (a measured pass@1 and
    so a difficulty) and pending retirements of problems under blind review."""
    latest = data.get("latest")
    blind = release_blind(latest) if latest is not None else Blind()
    reviewed = blind.problems | blind.questions
    out = dict(data)
    out["flags"] = [f for f in data.get("flags", []) if f.public_id not in reviewed]
    out["withdrawn_flags"] = [
        f for f in data.get("withdrawn_flags", []) if f.public_id not in reviewed
    ]
    out["flags_withheld"] = (
        len(data.get("flags", []))
        - len(out["flags"])
        + len(data.get("withdrawn_flags", []))
        - len(out["withdrawn_flags"])
    )
    pending = []
    for reevolution in data.get("pending", []):
        blind_before = release_blind(reevolution.release)
        pending.append(
            {
                "campaign": reevolution.campaign,
                "release": reevolution.release,
                "retired": [pid for pid in reevolution.retired if pid not in blind_before],
                "withheld": sum(1 for pid in reevolution.retired if pid in blind_before),
            }
        )
    out["pending"] = pending
    return out


# --- reviewers rating blind ----------------------------------------------------------------


def off_limits_page(request):
    response = render(request, "releases/public_off_limits.html", status=403)
    # Never kept by a browser or a proxy, nor by the public page cache (which never stores a
    # signed-in user's page).
    response["Cache-Control"] = "private, no-store"
    return response


def closed_while_rating_blind(view):
    """A public release view that a user rating problems blind right now is refused (the
    off-limits page instead). Outside ``cached_public_page``: anonymous visitors cost nothing."""

    @functools.wraps(view)
    def wrapper(request, *args, **kwargs):
        if rates_blind_now(user=request.user):
            return off_limits_page(request)
        return view(request, *args, **kwargs)

    return wrapper


def refuse_api_while_rating_blind(request) -> None:
    """The public API's reads, for a user rating problems blind right now: 403 saying why."""
    if rates_blind_now(user=request.user):
        raise HttpError(403, OFF_LIMITS)
