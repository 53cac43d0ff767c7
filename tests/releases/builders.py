"""A crafted candidate set for the gate, shaped like a finished campaign: seeds with their
calibration, accepted evolved problems with panel measurements, and submitted reviews.

Every problem is "add the integers on the input line" with real tests, so leaderboard tests
can judge real programs; statements use disjoint vocabularies so only the planted
near-duplicates are similar. Hidden tests and reference solutions carry HIDDEN-MARKER so
public-page crawls can prove they never leak.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from django.utils import timezone

from evolution.models import Problem, TestCase
from review.models import (
    Assignment,
    GroupItem,
    Review,
    ReviewGroup,
    ReviewRound,
    ScoreOverride,
)
from tests.factories import (
    CampaignFactory,
    CandidateFactory,
    EvolvedProblemFactory,
    LineageFactory,
    ProblemFactory,
    ProblemSetFactory,
    UserFactory,
)

HIDDEN_MARKER = "HIDDEN-MARKER"
HIDDEN_DIGITS = "913377"
SUM_CODE = "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n"
WRONG_CODE = "print(0)\n"
_WORDS = [f"{a}{b}" for a in "bcdfghklmnprstvz" for b in ("ar", "el", "on", "ix", "um", "ep")]


def statement(key: str) -> str:
    """A statement with its own vocabulary: near-zero similarity to any other key's."""
    rng = random.Random(key)
    words = rng.sample(_WORDS, 40)
    return f"Task {key}. " + " ".join(words) + ". Print the sum of the integers given."


def add_tests(problem: Problem, *, seed: int = 0) -> None:
    """One public example and three hidden tests whose numbers all start with HIDDEN_DIGITS."""
    TestCase.objects.create(
        problem=problem,
        tier="public",
        ordinal=0,
        hidden=False,
        input_text="1 2\n",
        output_text="3\n",
    )
    for tier, ordinal in (("small", 0), ("small", 1), ("large", 0)):
        a = int(f"{HIDDEN_DIGITS}{seed:02d}{ordinal}")
        TestCase.objects.create(
            problem=problem,
            tier=tier,
            ordinal=ordinal,
            hidden=True,
            input_text=f"{a} 0\n",
            output_text=f"{a}\n",
            provenance={"note": HIDDEN_MARKER},
        )


@dataclass
class World:
    campaign: object
    seeds: dict[str, Problem]
    evolved: dict[str, Problem]
    reviewers: list = field(default_factory=list)
    curator: object | None = None

    def problem(self, key: str) -> Problem:
        return self.evolved.get(key) or self.seeds[key]


def seed_problem(
    campaign, key: str, passes: int | None, attempts: int | None, tag: str = ""
) -> Problem:
    problem = ProblemFactory(
        title=f"Seed {key}",
        statement=statement(key),
        reference_solution=SUM_CODE + f"# {HIDDEN_MARKER}\n",
        origin_dataset="livecodebench",
        origin_id=f"lcb-{key}{tag}",
        origin_difficulty="hard",
    )
    add_tests(problem, seed=len(key))
    campaign.seed_set.problems.add(problem)
    LineageFactory(
        campaign=campaign, seed=problem, seed_passes=passes, seed_attempts=attempts, seed_level=3
    )
    return problem


def evolved_problem(campaign, key: str, parent: Problem, passes: int, attempts: int, text=None):
    problem = EvolvedProblemFactory(
        parent=parent,
        title=f"Evolved {key}",
        statement=text or statement(key),
        reference_solution=SUM_CODE + f"# {HIDDEN_MARKER}\n",
    )
    add_tests(problem, seed=len(key) + 3)
    lineage = campaign.lineages.get(seed=parent.lineage_root or parent)
    CandidateFactory(
        lineage=lineage,
        parent=parent,
        decision="accepted",
        accepted_problem=problem,
        passes=passes,
        attempts=attempts,
        level=3,
        validation_ledger=[{"vote": "agree", "source": "triangulation"}],
        panel_results={"solver-a": {"passes": passes, "attempts": attempts}},
    )
    return problem


def review(world: World, problem: Problem, *ratings: tuple[int, str]) -> None:
    """Submitted reviews of ``problem``: one (quality, validity) per reviewer."""
    rnd, _ = ReviewRound.objects.get_or_create(name="gate round")
    root = problem.lineage_root or problem
    group, _ = ReviewGroup.objects.get_or_create(
        round=rnd, root_problem=root, defaults={"position": root.pk}
    )
    item, _ = GroupItem.objects.get_or_create(group=group, problem=problem)
    for index, (quality, validity) in enumerate(ratings):
        reviewer = world.reviewers[index]
        assignment, _ = Assignment.objects.get_or_create(
            group=group,
            reviewer=reviewer,
            defaults={"certified_no_ai": True, "submitted_at": timezone.now()},
        )
        Review.objects.create(
            assignment=assignment,
            item=item,
            position=assignment.reviews.count(),
            clarity=4,
            novelty=3,
            difficulty=4,
            quality=quality,
            validity=validity,
            submitted_at=timezone.now(),
        )


def crafted_world(tag: str = "") -> World:
    """Seeds S1 (pass 8/8: too easy to supplement), S2 (2/8: supplements), S3 (unmeasured);
    evolved E-OK (passes every rule), E-LOWQ (quality 2.5), E-INVALID (one invalid vote),
    E-UNSOLVED (0/8), E-EASY (7/8), E-UNREVIEWED, E-DUP (copy of E-OK's statement),
    E-RESKIN (copy of seed S1's statement), E-OVERRIDE (quality 2, overridden to 4)."""
    campaign = CampaignFactory(
        name=f"gate campaign{tag}", seed_set=ProblemSetFactory(name=f"seeds{tag}")
    )
    world = World(campaign=campaign, seeds={}, evolved={})
    world.reviewers = [UserFactory(username="rev-one"), UserFactory(username="rev-two")]
    s1 = world.seeds["S1"] = seed_problem(campaign, "S1", 8, 8, tag=tag)
    s2 = world.seeds["S2"] = seed_problem(campaign, "S2", 2, 8, tag=tag)
    world.seeds["S3"] = seed_problem(campaign, "S3", None, None, tag=tag)
    spec = {
        "E-OK": (s1, 3, 8, None),
        "E-LOWQ": (s1, 3, 8, None),
        "E-INVALID": (s2, 3, 8, None),
        "E-UNSOLVED": (s2, 0, 8, None),
        "E-EASY": (s2, 7, 8, None),
        "E-UNREVIEWED": (s2, 3, 8, None),
        "E-DUP": (s1, 3, 8, statement("E-OK")),
        "E-RESKIN": (s1, 3, 8, statement("S1")),
        "E-OVERRIDE": (s2, 4, 8, None),
    }
    for key, (parent, passes, attempts, text) in spec.items():
        world.evolved[key] = evolved_problem(campaign, key, parent, passes, attempts, text)
    ok = [(4, "valid"), (3, "valid")]
    for key in ("E-OK", "E-UNSOLVED", "E-EASY", "E-DUP", "E-RESKIN"):
        review(world, world.evolved[key], *ok)
    review(world, world.evolved["E-LOWQ"], (2, "valid"), (3, "valid"))
    review(world, world.evolved["E-INVALID"], (5, "valid"), (4, "invalid"))
    review(world, world.evolved["E-OVERRIDE"], (2, "valid"), (2, "valid"))
    item = GroupItem.objects.get(problem=world.evolved["E-OVERRIDE"])
    ScoreOverride.objects.create(
        item=item, dimension="quality", value="4", reason="adjudicated: reviewers misread it"
    )
    return world
