import pytest

from accounts.services import user_create
from review import services

from .factories import lineage_with_problems


def answers(opaque_id: str, **overrides) -> dict[str, str]:
    """A complete, valid form submission for one problem, as the HTML page posts it."""
    values = {
        "clarity": "4",
        "novelty": "3",
        "difficulty": "3",
        "quality": "4",
        "validity": "valid",
        "validity_reason": "",
        "cf_rating": "1900",
        "tags": "dp, HLD",
        "justification": "Clean reduction to a known technique.",
        "elapsed": "30",
    }
    values.update({k: str(v) for k, v in overrides.items()})
    return {f"{opaque_id}-{k}": v for k, v in values.items()}


@pytest.fixture(autouse=True)
def _tag_vocabulary(request):
    """The vocabulary comes from a data migration, which a transactional test (the browser
    test) truncates; reload it for every database test so test order never matters."""
    names = set(request.fixturenames)
    if "transactional_db" in names or "live_server" in names:
        request.getfixturevalue("transactional_db")
    elif "db" in names or request.node.get_closest_marker("django_db"):
        request.getfixturevalue("db")
    else:
        return
    services.tag_vocabulary_load()


@pytest.fixture
def make_reviewer(db):
    def make(username: str):
        return user_create(username=username, password="pw-123456", role="reviewer")

    return make


@pytest.fixture
def review_round(personas):
    """One round, one lineage of three problems, reviewed by reviewer A and reviewer B."""
    lineage, problems = lineage_with_problems(n_evolved=2, tag="r1")
    review_round = services.round_create(
        name="Round SECRET-round-name",
        created_by=personas.curator.user,
        reviewers=[personas.reviewer_a.user, personas.reviewer_b.user],
        lineages=[lineage],
        instructions="Rate each problem on its own merits.",
    )
    review_round.problems = problems
    return review_round
