"""The heatmap's rows as pure data: cells, labels, accepted path, gain, filters, sort, CSV."""

from __future__ import annotations

from evolution.benchevolver.analytics import heatmap


def _lineage(pk, position, *, difficulty="easy", state="done", passes=11, attempts=12, level=1):
    return {
        "id": pk,
        "position": position,
        "state": state,
        "stop_reason": "max_iters_per_seed reached (3)",
        "seed_passes": passes,
        "seed_attempts": attempts,
        "seed_level": level,
        "seed_pk": 100 + pk,
        "seed_public_id": f"p{pk}",
        "seed_title": f"Seed {pk}",
        "seed_difficulty": difficulty,
    }


def _cand(pk, lineage, rnd, decision, passes=None, attempts=None, level=None, family="f"):
    return {
        "id": pk,
        "lineage_id": lineage,
        "round": rnd,
        "decision": decision,
        "passes": passes,
        "attempts": attempts,
        "level": level,
        "family": family,
        "idea": "x" * 500,
        "reason": "level 1 < seed level 1 + required gain 1",
    }


def _rows():
    lineages = [
        _lineage(1, 0),
        _lineage(2, 1, difficulty="hard", passes=9, level=2),
        _lineage(3, 2, state="skipped", passes=3, level=4),
    ]
    candidates = [
        # Out of order on purpose: cells must come back in round order.
        _cand(12, 1, 2, "accepted", 3, 12, 4, family="online updates"),
        _cand(11, 1, 1, "not_harder", 10, 12, 1),
        _cand(13, 1, 3, "judge_rejected", 2, 12, 5),
        _cand(21, 2, 1, "invalid"),
        _cand(22, 2, 2, "", family="tree path queries"),
        _cand(99, 404, 1, "accepted", 0, 12, 5),  # unknown lineage: ignored
    ]
    return heatmap.build_rows(lineages, candidates)


def test_it_orders_cells_by_round_and_pools_passes_over_attempts():
    first = _rows()[0]
    assert [c["r"] for c in first["cells"]] == [1, 2, 3]
    assert first["seed"] == {"p": 11, "a": 12, "rate": round(11 / 12, 4), "lv": 1}
    assert first["cells"][1]["rate"] == 0.25
    assert first["cells"][1]["p"] == 3 and first["cells"][1]["a"] == 12


def test_it_draws_the_accepted_path_from_the_seed_through_accepted_rounds_only():
    rows = _rows()
    assert rows[0]["path"] == [0, 2]
    assert rows[1]["path"] == [0]


def test_it_labels_rejections_with_their_reason_and_in_flight_candidates():
    first, second, _ = _rows()
    assert [c["label"] for c in first["cells"]] == ["not harder", "accepted", "judge"]
    assert [c["label"] for c in second["cells"]] == ["invalid", "in flight"]
    assert second["cells"][0]["rate"] is None  # never measured: drawn flat, not coloured


def test_it_truncates_the_idea_for_the_hover():
    assert len(_rows()[0]["cells"][0]["idea"]) == heatmap.IDEA_CHARS


def test_final_gain_is_last_accepted_level_minus_seed_level():
    first, second, third = _rows()
    assert first["gain"] == 3
    assert first["rate_drop"] == round(11 / 12 - 0.25, 4)
    assert second["gain"] == 0 and third["gain"] == 0


def test_outcome_tells_accepted_running_skipped_and_none_accepted_apart():
    first, second, third = _rows()
    assert first["outcome"] == "accepted"
    assert second["outcome"] == "none accepted"
    assert third["outcome"] == "skipped"
    running = heatmap.build_rows([_lineage(4, 0, state="evolving")], [])
    assert running[0]["outcome"] == "running"


def test_it_sorts_by_final_difficulty_gain_with_seed_order_breaking_ties():
    rows = _rows()
    by_gain = heatmap.sort_rows(list(reversed(rows)), "gain")
    assert [r["lineage"] for r in by_gain] == [1, 2, 3]
    assert [r["lineage"] for r in heatmap.sort_rows(list(reversed(rows)))] == [1, 2, 3]


def test_filters_keep_rows_matching_difficulty_family_and_outcome():
    rows = _rows()
    assert [r["lineage"] for r in heatmap.filter_rows(rows, difficulty="hard")] == [2]
    assert [r["lineage"] for r in heatmap.filter_rows(rows, family="online updates")] == [1]
    assert [r["lineage"] for r in heatmap.filter_rows(rows, outcome="skipped")] == [3]
    assert heatmap.filter_rows(rows, difficulty="hard", outcome="skipped") == []
    assert len(heatmap.filter_rows(rows, difficulty="", family=None)) == 3


def test_filter_options_list_every_value_present():
    options = heatmap.filter_options(_rows())
    assert options["difficulties"] == ["easy", "hard"]
    assert options["families"] == ["f", "online updates", "tree path queries"]
    assert options["outcomes"] == ["accepted", "none accepted", "skipped"]


def test_max_round_is_the_widest_row():
    assert heatmap.max_round(_rows()) == 3
    assert heatmap.max_round([]) == 0


def test_csv_rows_hold_the_seed_and_every_cell_with_path_membership():
    rows = heatmap.csv_rows(_rows()[:1])
    assert [r["round"] for r in rows] == [0, 1, 2, 3]
    assert [r["on_accepted_path"] for r in rows] == [True, False, True, False]
    assert rows[2]["candidate_id"] == 12 and rows[2]["solve_rate"] == 0.25
