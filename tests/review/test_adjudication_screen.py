"""A curator adjudicating a disagreement sees the item's nearest public problems (the
contamination screen, docs/screening.md) beside the ratings; a reviewer rating the same
problems never does."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from evolution.importers import import_seeds
from evolution.models import Problem
from evolution.screening import services as screening
from evolution.screening.describe import RECOMMENDED_MAX_SIMILARITY, shown_neighbours
from review import services
from review.models import Adjudication, Assignment

from .conftest import answers
from .factories import lineage_with_problems

pytestmark = pytest.mark.django_db


def _submit(assignment, **overrides):
    data = {"certify_no_ai": "on"}
    for review in assignment.reviews.select_related("item"):
        data.update(answers(review.item.opaque_id, **overrides))
    assert services.assignment_submit(assignment=assignment, data=data).ok


@pytest.fixture
def disputed(personas):
    """A round whose every problem is disputed (quality 1 against 4); its first evolved
    problem recalls HumanEval/12's program and is screened against HumanEval."""
    import_seeds(source="humaneval")
    recalled = Problem.objects.get(origin_id="HumanEval/12")
    lineage, problems = lineage_with_problems(n_evolved=2, tag="screen")
    seed, evolved, unscreened = problems
    evolved.reference_solution = recalled.reference_solution
    evolved.save(update_fields=["reference_solution"])
    screen = screening.screen_problem(evolved, context="measurement")
    review_round = services.round_create(
        name="screened round",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=[lineage],
    )
    _submit(Assignment.objects.get(reviewer=personas.reviewer_b.user), quality=4)
    return review_round, evolved, unscreened, seed, screen


def _panel(body: str, item_opaque_id: str) -> str:
    match = re.search(
        rf'<details class="screen-panel" data-item="{item_opaque_id}".*?</details>', body, re.S
    )
    assert match, f"no screen panel for item {item_opaque_id}"
    return match.group(0)


def test_the_curator_sees_the_nearest_public_problems_of_each_disputed_item(personas, disputed):
    review_round, evolved, unscreened, seed, screen = disputed
    _submit(Assignment.objects.get(reviewer=personas.reviewer_a.user), quality=1)
    items = {
        a.item.problem_id: a.item.opaque_id
        for a in Adjudication.objects.filter(item__group__round=review_round, dimension="quality")
    }
    assert set(items) == {seed.pk, evolved.pk, unscreened.pk}
    body = personas.curator.client.get(
        reverse("review:round_detail", args=[review_round.pk])
    ).content.decode()

    panel = _panel(body, items[evolved.pk])
    nearest = screen.record["neighbours"][0]
    assert nearest["origin_id"] == "HumanEval/12" and nearest["code"] == 1.0
    row = re.search(r'<tr class="screen-neighbour" data-origin-id="HumanEval/12">.*?</tr>', panel)
    assert row, panel
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(0))
    # public id / title, corpus, date, statement, code, similarity, above the threshold
    assert "HumanEval/12" in cells[0] and cells[1] == "humaneval" and cells[2] == "undated"
    assert cells[3] == f"{nearest['statement']:.2f}" and cells[4] == "1.00"
    assert "1.00" in cells[5] and "above" in cells[6]
    assert f"≥ {RECOMMENDED_MAX_SIMILARITY}?" in panel
    assert "164 public problems: humaneval 164" in panel
    shown = shown_neighbours(screen.record, RECOMMENDED_MAX_SIMILARITY)
    assert panel.count('class="screen-neighbour"') == len(shown) >= 1
    assert "at or above 0.3" in panel

    assert "Not screened: no screen stored yet" in _panel(body, items[unscreened.pk])
    assert "Not screened: a seed: a public problem itself" in _panel(body, items[seed.pk])


def test_a_reviewer_rating_the_same_problems_never_sees_the_screen(personas, disputed):
    review_round, *_ = disputed
    a = Assignment.objects.get(reviewer=personas.reviewer_a.user)
    client = personas.reviewer_a.client
    page = client.get(reverse("review:group", args=[a.opaque_id])).content.decode()
    assert "<form" in page  # the rating page itself
    for leak in ("HumanEval/12", "humaneval", "screen-panel", "Nearest public", "similarity"):
        assert leak not in page, leak
    assert client.get(reverse("review:round_detail", args=[review_round.pk])).status_code == 403
    _submit(a, quality=1)  # the disagreement opens; the submitted record stays blind too
    record = client.get(reverse("review:group", args=[a.opaque_id])).content.decode()
    assert "HumanEval/12" not in record and "screen-panel" not in record


def test_shown_neighbours_keep_the_nearest_five_and_every_one_above_the_threshold():
    record = {
        "neighbours": [
            {"origin_id": str(i), "similarity": s}
            for i, s in enumerate([0.9, 0.5, 0.31, 0.3, 0.25, 0.22, 0.21, 0.2])
        ]
    }
    shown = shown_neighbours(record, 0.3, nearest=2)
    assert [(n["origin_id"], n["above"]) for n in shown] == [
        ("0", True),
        ("1", True),
        ("2", True),
        ("3", True),
    ]
    assert [n["above"] for n in shown_neighbours(record, 0.3)] == [True] * 4 + [False]
    assert shown_neighbours(None, 0.3) == []
