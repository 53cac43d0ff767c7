"""Review test data: lineages with accepted problems carrying distinctive provenance."""

from __future__ import annotations

from evolution.models import TestCase
from tests.factories import (
    CampaignFactory,
    CandidateFactory,
    EvolvedProblemFactory,
    LineageFactory,
    ProblemFactory,
)


def lineage_with_problems(*, n_evolved: int = 2, campaign=None, tag: str = "x"):
    """A lineage whose seed has ``n_evolved`` accepted descendants, each with a public example.

    Titles, datasets, methods and campaign names carry the marker ``tag`` so blinding tests
    can look for them in everything a reviewer receives.
    """
    campaign = campaign or CampaignFactory(name=f"campaign-SECRET-{tag}")
    seed = ProblemFactory(
        title=f"Seed title SECRET {tag}",
        origin_dataset=f"dataset-SECRET-{tag}",
        statement=f"# Seed title SECRET {tag}\n\nGiven $n$ integers $a_i$, print their sum.",
    )
    TestCase.objects.create(
        problem=seed,
        tier="public",
        ordinal=0,
        hidden=False,
        input_text="2\n1 2\n",
        output_text="3\n",
    )
    lineage = LineageFactory(campaign=campaign, seed=seed)
    parent = seed
    problems = [seed]
    for i in range(n_evolved):
        evolved = EvolvedProblemFactory(
            parent=parent,
            title=f"Evolved title SECRET {tag} {i}",
            method=f"method-SECRET-{tag}",
            statement=f"Given $n$ segments, answer $q$ queries (variant {i}).\n\n```\nfor x in a: pass\n```",
        )
        TestCase.objects.create(
            problem=evolved,
            tier="public",
            ordinal=0,
            hidden=False,
            input_text=f"{i}\n",
            output_text=f"{i * 2}\n",
        )
        CandidateFactory(
            lineage=lineage, parent=parent, decision="accepted", accepted_problem=evolved
        )
        problems.append(evolved)
        parent = evolved
    return lineage, problems
