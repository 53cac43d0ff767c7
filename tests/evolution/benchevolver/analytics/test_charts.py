"""The campaign charts as pure data (Figures 2-4, 8, 9 and Table 1 of the BenchEvolver paper)."""

from __future__ import annotations

from decimal import Decimal

import pytest

from evolution.benchevolver.analytics import charts, tables


def _lin(pk, difficulty, state="done", passes=12, attempts=12, seed_pk=None):
    return {
        "id": pk,
        "position": pk,
        "state": state,
        "seed_pk": seed_pk or 100 + pk,
        "seed_title": f"Seed {pk}",
        "seed_difficulty": difficulty,
        "seed_passes": passes,
        "seed_attempts": attempts,
        "seed_level": 1,
    }


def _cand(pk, lineage, decision, **kw):
    row = {
        "id": pk,
        "lineage_id": lineage,
        "round": kw.pop("round", 1),
        "decision": decision,
        "reason": kw.pop("reason", ""),
        "family": kw.pop("family", "f"),
        "level": kw.pop("level", None),
        "passes": kw.pop("passes", None),
        "attempts": kw.pop("attempts", None),
        "valid": kw.pop("valid", None),
        "panel_results": kw.pop("panel_results", {}),
        "accepted_problem_id": kw.pop("accepted_problem_id", None),
    }
    assert not kw
    return row


def test_pass_rates_compare_seeds_and_evolved_per_model_and_difficulty():
    lineages = [_lin(1, "easy", passes=11), _lin(2, "Hard", passes=6), _lin(3, "", attempts=0)]
    accepted = [
        _cand(
            10,
            1,
            "accepted",
            passes=3,
            attempts=12,
            panel_results={"a": {"passes": 1, "attempts": 4}, "b": {"passes": 2, "attempts": 8}},
        ),
        _cand(
            11,
            2,
            "accepted",
            passes=0,
            attempts=12,
            panel_results={"a": {"passes": 0, "attempts": 4}},
        ),
    ]
    stats = [
        {"difficulty": "easy", "model": "a", "passes": 4, "attempts": 4, "seeds": 1},
        {"difficulty": "easy", "model": "b", "passes": 7, "attempts": 8, "seeds": 1},
    ]
    data = charts.pass_rates(lineages=lineages, accepted=accepted, seed_model_stats=stats)
    assert data["models"] == [charts.POOLED, "a", "b"]
    assert data["difficulties"] == ["easy", "hard"]
    by = {(r["model"], r["difficulty"]): r for r in data["rows"]}
    assert by[(charts.POOLED, "easy")]["seed_rate"] == round(11 / 12, 4)
    assert by[(charts.POOLED, "easy")]["seeds"] == 1 and by[("b", "easy")]["seeds"] == 1
    assert by[(charts.POOLED, "easy")]["evolved_rate"] == 0.25
    assert by[("a", "easy")]["seed_rate"] == 1.0 and by[("a", "easy")]["evolved_rate"] == 0.25
    assert by[("b", "easy")]["evolved_rate"] == 0.25
    # No seed attempts recorded per model for the hard seed: its seed side stays empty.
    assert by[("a", "hard")]["seed_rate"] is None and by[("a", "hard")]["evolved_rate"] == 0.0


def test_yield_counts_completed_seeds_with_an_accepted_problem_and_reviewed_validity():
    lineages = [
        _lin(1, "easy"),
        _lin(2, "easy"),
        _lin(3, "easy", state="skipped"),
        _lin(4, "medium", state="evolving"),
    ]
    candidates = [
        _cand(1, 1, "accepted", valid=True, accepted_problem_id=501),
        _cand(2, 1, "accepted", valid=True, accepted_problem_id=502),
        _cand(3, 2, "invalid", valid=False),
        _cand(4, 4, "accepted", valid=True, accepted_problem_id=503),
        _cand(5, 2, "error"),
    ]
    reviews = {501: {"validity": "valid"}, 502: {"validity": "invalid"}, 503: {"validity": None}}
    rows = {
        r["difficulty"]: r
        for r in charts.yield_table(lineages=lineages, candidates=candidates, reviews=reviews)[
            "rows"
        ]
    }
    easy = rows["easy"]
    assert (easy["seeds"], easy["skipped"], easy["completed"], easy["with_accepted"]) == (
        3,
        1,
        2,
        1,
    )
    assert easy["yield"] == 0.5
    assert easy["accepted"] == 2
    assert easy["validation_rate"] == round(2 / 3, 4)
    assert (easy["reviewed"], easy["validity"]) == (2, 0.5)
    # A running lineage's acceptance counts as a problem but not towards the yield.
    assert rows["medium"]["completed"] == 0 and rows["medium"]["yield"] is None
    assert rows["all"]["accepted"] == 3 and list(rows)[-1] == "all"


@pytest.mark.parametrize(
    "raw, grouped",
    [
        ("level 2 < seed level 1 + required gain 1", "level # < seed level # + required gain #"),
        ("judge: false difficulty — misleading sample; edge case", "judge: false difficulty"),
        (
            "statement underspecified: best-of-N pass rate 0.33 < 0.5",
            "statement underspecified: best-of-N pass rate # < #",
        ),
        ("", "(no reason recorded)"),
    ],
)
def test_reasons_are_grouped_without_their_numbers(raw, grouped):
    assert charts.normalize_reason(raw) == grouped


def test_funnel_removes_each_stage_rejections_in_pipeline_order():
    candidates = [
        _cand(1, 1, "accepted"),
        _cand(2, 1, "invalid", reason="reference timed out on stress 1"),
        _cand(3, 1, "invalid", reason="reference timed out on stress 2"),
        _cand(4, 1, "not_harder", reason="level 1 < seed level 1 + required gain 1"),
        _cand(5, 1, "duplicate", reason="near-duplicate"),
        _cand(6, 1, "error", reason="model call failed"),
        _cand(7, 1, ""),
    ]
    data = charts.rejection_funnel(candidates=candidates)
    assert [(s["stage"], s["count"]) for s in data["stages"]] == [
        ("proposed", 6),
        ("ran", 5),
        ("valid", 3),
        ("harder", 2),
        ("judged", 1),
        ("accepted", 1),
    ]
    assert data["in_flight"] == 1
    top = data["reasons"][0]
    assert (top["decision"], top["reason"], top["count"], top["example"]) == (
        "invalid",
        "reference timed out on stress #",
        2,
        2,
    )


def test_cost_is_divided_by_accepted_problems_overall_and_per_role():
    data = charts.cost_summary(
        totals={"calls": 10, "tokens_in": 800, "tokens_out": 200, "cost": Decimal("0.5")},
        by_role=[
            {
                "role": "writer",
                "calls": 4,
                "cost": Decimal("0.1"),
                "tokens_in": 100,
                "tokens_out": 100,
            },
            {
                "role": "mutator",
                "calls": 6,
                "cost": Decimal("0.4"),
                "tokens_in": 500,
                "tokens_out": 100,
            },
        ],
        accepted=2,
    )
    assert (data["cost_per_accepted"], data["calls_per_accepted"], data["tokens_per_accepted"]) == (
        0.25,
        5.0,
        500.0,
    )
    assert [r["role"] for r in data["roles"]] == ["mutator", "writer"]
    assert data["roles"][0]["cost_per_accepted"] == 0.2
    assert charts.cost_summary(totals={}, by_role=[], accepted=0)["cost_per_accepted"] is None


def test_families_over_rounds_fold_rare_families_into_other():
    candidates = [
        _cand(1, 1, "accepted", round=1, family="a"),
        _cand(2, 1, "invalid", round=2, family="a"),
        _cand(3, 2, "invalid", round=1, family="b"),
        _cand(4, 2, "accepted", round=3, family="c"),
    ]
    data = charts.families_over_time(candidates=candidates, top=2)
    assert data["rounds"] == [1, 2, 3]
    assert data["families"] == ["a", "b", "other"]
    assert data["proposed"]["a"] == [1, 1, 0]
    assert data["accepted"]["other"] == [0, 0, 1]
    assert data["table"][0] == {"family": "a", "proposed": 2, "accepted": 1, "acceptance_rate": 0.5}


def _reviewed():
    lineages = [_lin(1, "easy", seed_pk=1), _lin(2, "easy", seed_pk=2), _lin(3, "easy", seed_pk=3)]
    accepted = [
        _cand(10, 1, "accepted", accepted_problem_id=11),
        _cand(11, 1, "accepted", accepted_problem_id=12),
        _cand(12, 2, "accepted", accepted_problem_id=21),
    ]
    reviews = {
        1: {"tags": ["search"], "clarity": 4.5, "novelty": 2, "difficulty": 1.5, "cf_rating": 1150},
        2: {
            "tags": ["search", "greedy"],
            "clarity": 5,
            "novelty": 2,
            "difficulty": 2,
            "cf_rating": 1000,
        },
        11: {
            "tags": ["search", "segment tree"],
            "clarity": 4.75,
            "novelty": 3.5,
            "difficulty": 3,
            "cf_rating": 2100,
        },
        12: {"tags": ["hld"], "clarity": 5, "novelty": 3, "difficulty": 4, "cf_rating": 2400},
        21: {
            "tags": ["greedy", "search"],
            "clarity": 4,
            "novelty": None,
            "difficulty": 3,
            "cf_rating": None,
        },
    }
    return {"lineages": lineages, "accepted": accepted, "reviews": reviews}


def test_category_shift_compares_tag_shares_and_orders_by_absolute_shift():
    data = charts.category_shift(**_reviewed())
    assert (data["seeds_reviewed"], data["evolved_reviewed"]) == (2, 3)
    assert (data["seed_categories"], data["evolved_categories"]) == (2, 4)
    by = {r["tag"]: r for r in data["rows"]}
    assert by["search"]["seed_share"] == round(2 / 3, 4)
    assert by["search"]["evolved_share"] == 0.4  # 2 of 5 evolved mentions
    assert data["rows"][0]["tag"] == "search"  # the largest absolute shift
    assert by["hld"]["seed_mentions"] == 0 and by["hld"]["evolved_mentions"] == 1


def test_rating_distributions_bin_per_problem_means_seed_vs_evolved():
    data = charts.rating_distributions(**_reviewed())["dimensions"]
    difficulty = data["difficulty"]
    assert difficulty["bins"][0] == 1.0 and difficulty["bins"][-1] == 5.0
    assert sum(difficulty["seed"]) == 2 and sum(difficulty["evolved"]) == 3
    assert difficulty["seed"][difficulty["bins"].index(1.5)] == 1
    assert difficulty["evolved_summary"]["mean"] == round((3 + 4 + 3) / 3, 3)
    cf = data["cf_rating"]
    assert cf["seed"][cf["bins"].index(1000)] == 2
    assert cf["evolved_summary"] == {"n": 2, "mean": 2250.0, "median": 2250.0}
    assert data["novelty"]["evolved_summary"]["n"] == 2


def test_new_categories_count_tags_the_evolved_problems_add_to_their_seed():
    data = charts.new_categories(**_reviewed())
    by = {r["lineage"]: r for r in data["rows"]}
    assert by[1]["new_tags"] == ["hld", "segment tree"]
    assert by[2]["new"] == 0
    assert 3 not in by  # nothing accepted and reviewed
    assert data["mean_new"] == 1.0 and data["share_with_new"] == 0.5
    assert data["histogram"] == [{"new": 0, "lineages": 1}, {"new": 2, "lineages": 1}]


def test_review_charts_are_empty_without_reviews():
    inputs = {**_reviewed(), "reviews": {}}
    assert charts.category_shift(**inputs)["rows"] == []
    assert charts.new_categories(**inputs)["lineages"] == 0
    assert charts.rating_distributions(**inputs)["dimensions"]["clarity"]["seed_summary"]["n"] == 0


def test_csv_neutralises_formulas_in_free_text_but_keeps_numbers():
    text = tables.to_csv([{"reason": "=HYPERLINK(1)", "count": -3}, {"extra": None}])
    assert text.splitlines() == ["reason,count,extra", "'=HYPERLINK(1),-3,", ",,"]


def test_every_chart_has_a_csv_table():
    from evolution.benchevolver.analytics.selectors import CHARTS

    assert set(tables.ROWS) == set(CHARTS)
