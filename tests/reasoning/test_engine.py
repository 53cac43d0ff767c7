"""Pure parts of the reasoning loop: EMA, round-robin order, planning, similarity, judging,
settings validation."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from reasoning.config import ReasoningSettings, difficulty_descriptor
from reasoning.engine import ema, judging, plan, prompts, similarity


def test_ema_follows_the_documents_worked_example():
    first = ema.ema_update(None, 0.8, 0.3)
    second = ema.ema_update(first, 0.6, 0.3)
    third = ema.ema_update(second, 0.9, 0.3)
    assert first == 0.8
    assert second == pytest.approx(0.74)
    assert third == pytest.approx(0.788)


def test_state_json_round_trips_and_names_a_bad_field():
    state = ema.RunState(
        ema=0.74,
        run_count=2,
        current_difficulty=5,
        ema_by_reasoning_type={"logical_deduction": 0.74},
        ema_by_difficulty={"1": 1.0},
    )
    assert ema.RunState.from_json(state.to_json()) == state
    assert list(state.to_json()) == [
        "ema",
        "run_count",
        "current_difficulty",
        "ema_by_reasoning_type",
        "ema_by_difficulty",
    ]
    with pytest.raises(ValueError, match="current_difficulty must be 1-10"):
        ema.RunState.from_json({"current_difficulty": 0})
    with pytest.raises(ValueError, match="ema_by_difficulty must map names to numbers"):
        ema.RunState.from_json({"ema_by_difficulty": {"1": "high"}})


def test_fold_runs_continues_from_a_given_state_with_each_runs_alpha():
    """A series' state is folded from the state it was given (an imported state.json: run 1 of
    section 4.1's example, EMA 0.8), each run with its own campaign's alpha."""
    start = ema.RunState(ema=0.8, run_count=1)
    runs = [
        ema.RunScores([(1, 0.6)], finished=True, run_score=0.6, alpha=0.3),
        ema.RunScores([(1, 0.9)], finished=True, run_score=0.9, alpha=0.5),
    ]
    state, snapshots = ema.fold_runs(runs, 0.9, start=start)
    assert snapshots[0].ema == pytest.approx(0.74)
    assert state.ema == pytest.approx(0.5 * 0.9 + 0.5 * 0.74)
    assert state.run_count == 3
    assert start.ema == 0.8 and start.run_count == 1  # the given state is not changed


def test_fold_runs_replays_the_worked_example_and_keeps_a_snapshot_per_run():
    runs = [
        ema.RunScores([(1, s)], finished=True, run_score=s, type_scores={"t": s})
        for s in (0.8, 0.6, 0.9)
    ]
    state, snapshots = ema.fold_runs(runs, 0.3)
    assert [round(s.ema, 6) for s in snapshots] == [0.8, 0.74, 0.788]
    assert state.run_count == 3
    assert state.ema_by_reasoning_type["t"] == pytest.approx(0.788)
    assert state.ema_by_difficulty["1"] == pytest.approx(0.788)


def test_an_unscored_level_leaves_the_ema_unchanged():
    assert ema.ema_update(0.5, None, 0.3) == 0.5


def test_round_robin_is_difficulty_then_type_then_index():
    order = list(
        plan.round_robin([1, 2], [{"name": "a", "questions": 2}, {"name": "b", "questions": 1}])
    )
    assert [(c.difficulty, c.reasoning_type, c.question_index) for c in order] == [
        (1, "a", 0),
        (1, "a", 1),
        (1, "b", 0),
        (2, "a", 0),
        (2, "a", 1),
        (2, "b", 0),
    ]


@pytest.mark.parametrize(("num_questions", "total"), [(1, 80), (3, 240)])
def test_the_round_robin_matrix_has_the_documents_80_and_240_questions(num_questions, total):
    """Section 7: 8 reasoning types x 10 difficulties x 1 question = 80 by default; with
    --num-questions 3, 8 x 10 x 3 = 240."""
    s = ReasoningSettings.from_dict({"num_questions": num_questions})
    run_plan = plan.run_plan(
        type_names=s.type_names,
        num_questions=s.num_questions,
        ema_by_type={},
        weak_area_focus=s.weak_area_focus,
        weak_area_types=s.weak_area_types,
        weak_area_extra=s.weak_area_extra,
    )
    cells = list(plan.round_robin(s.difficulties, run_plan))
    assert len(cells) == total
    assert len(set(cells)) == total  # every cell and index once
    assert {c.difficulty for c in cells[: 8 * num_questions]} == {1}  # difficulty is outermost


def test_weak_area_focus_gives_the_lowest_ema_types_extra_questions():
    result = plan.run_plan(
        type_names=["a", "b", "c", "d"],
        num_questions=1,
        ema_by_type={"a": 0.9, "b": 0.2, "c": 0.5, "d": 0.1},
        weak_area_focus=True,
        weak_area_types=2,
        weak_area_extra=2,
    )
    assert {r["name"]: r["questions"] for r in result} == {"a": 1, "b": 3, "c": 1, "d": 3}


def test_weak_area_focus_does_nothing_before_any_type_has_an_ema():
    result = plan.run_plan(
        type_names=["a", "b"],
        num_questions=1,
        ema_by_type={},
        weak_area_focus=True,
        weak_area_types=1,
        weak_area_extra=1,
    )
    assert [r["questions"] for r in result] == [1, 1]


def test_adaptive_difficulty_skips_a_mastered_level_and_stops_after_repeated_failure():
    common = dict(end=10, adaptive=True, mastery=0.8, floor=0.2, patience=2)
    assert plan.next_difficulty(current=3, level_emas=[0.9], **common).difficulty == 5
    assert plan.next_difficulty(current=3, level_emas=[0.5], **common).difficulty == 4
    assert plan.next_difficulty(current=4, level_emas=[0.5, 0.1], **common).difficulty == 5
    stop = plan.next_difficulty(current=5, level_emas=[0.1, 0.1], **common)
    assert stop.difficulty is None and "stopped early" in stop.reason
    assert plan.next_difficulty(current=9, level_emas=[0.95], **common).difficulty == 10
    assert plan.next_difficulty(current=10, level_emas=[0.5], **common).difficulty is None


def test_without_adaptive_difficulty_every_level_is_visited():
    nxt = plan.next_difficulty(
        current=3, end=10, adaptive=False, level_emas=[1.0], mastery=0.8, floor=0.2, patience=1
    )
    assert nxt.difficulty == 4


def test_similarity_flags_a_reworded_copy_but_not_a_different_question():
    a = "A train leaves Lisbon at 9:00 and travels 120 km at 60 km/h. When does it arrive?"
    b = "A train leaves Lisbon at 9:00 and travels 180 km at 60 km/h. When does it arrive?"
    c = "Which planet in the solar system has the shortest day, and how long is it?"
    assert similarity.similarity(a, a) == 1.0
    assert similarity.similarity(a, b) > 0.6
    assert similarity.similarity(a, c) < 0.1
    near = similarity.nearest(b, [(1, c), (2, a)])
    assert near.key == 2 and near.score > 0.6


def test_judge_verdicts_map_correct_to_one_and_incorrect_to_zero():
    assert judging.parse_verdict('{"score": "correct", "rationale": "ok"}').score == 1.0
    wrong = judging.parse_verdict('```json\n{"score": "Incorrect", "rationale": "no"}\n```')
    assert wrong.score == 0.0 and not wrong.parse_failure and wrong.rationale == "no"


@pytest.mark.parametrize(
    "content",
    ["Looks right to me.", '{"score": "mostly", "rationale": "?"}', '{"rationale": "x"}', ""],
)
def test_an_unparsable_judge_answer_scores_zero_and_is_marked_as_a_parse_failure(content):
    result = judging.parse_verdict(content)
    assert result.score == 0.0
    assert result.parse_failure
    assert result.reason


def test_ensemble_majority_mean_and_disagreement():
    votes = [judging.Verdict(1.0, "a"), judging.Verdict(1.0, "b"), judging.Verdict(0.0, "c")]
    majority = judging.aggregate(votes, "majority")
    assert majority.score == 1.0 and majority.disagreement
    assert judging.aggregate(votes, "mean").score == pytest.approx(2 / 3)
    tie = [judging.Verdict(1.0, "a"), judging.Verdict(0.0, "b")]
    assert judging.aggregate(tie, "majority").score == 0.0
    same = [judging.Verdict(1.0, "a"), judging.Verdict(1.0, "b")]
    assert not judging.aggregate(same, "mean").disagreement


def test_settings_have_the_documents_defaults():
    s = ReasoningSettings()
    assert (s.generation_temperature, s.generation_max_tokens) == (0.8, 500)
    assert (s.answering_temperature, s.answering_max_tokens) == (0.5, 700)
    assert (s.evaluation_temperature, s.evaluation_max_tokens) == (0.3, 250)
    assert s.alpha == 0.3 and s.history_window == 10 and s.num_questions == 1
    assert s.type_names == [
        "logical_deduction",
        "mathematical_reasoning",
        "commonsense_reasoning",
        "reading_comprehension",
        "abstraction_analogy",
        "scientific_reasoning",
        "data_interpretation",
        "computer_programming",
    ]
    assert s.difficulties == list(range(1, 11))
    assert difficulty_descriptor(9) == "Very hard, expert-level complexity"


def test_settings_accept_custom_types_and_reject_bad_values_by_name():
    s = ReasoningSettings.from_dict(
        {
            "reasoning_types": [
                "logical_deduction",
                {"name": "legal_reasoning", "description": "Law"},
            ]
        }
    )
    assert s.type_names == ["logical_deduction", "legal_reasoning"]
    with pytest.raises(ValidationError) as exc:
        ReasoningSettings.from_dict(
            {"alpha": 1.5, "difficulty_start": 7, "difficulty_end": 3, "bogus": 1}
        )
    errors = exc.value.message_dict
    assert {"alpha", "difficulty_end", "bogus"} <= set(errors)
    with pytest.raises(ValidationError) as exc:
        ReasoningSettings.from_dict({"reasoning_types": [{"name": "Bad Name", "description": ""}]})
    assert "reasoning_types" in exc.value.message_dict


def test_the_novelty_focus_has_the_three_levels_of_section_4_2():
    focus = prompts.select_focus(
        reasoning_type="logical_deduction",
        difficulty=3,
        prior_questions_for_type=[
            (d, f"question at {d} number {i}") for i in range(8) for d in (1, 2, 3)
        ],
        prior_questions_in_cell=["the earlier level-3 question"],
        history_window=10,
    )
    assert "MUST be ENTIRELY NOVEL" in focus
    assert "the earlier level-3 question" in focus
    assert "Avoid repetition" in focus
    assert "MORE DIFFICULT" in focus
    # Only the last 10 questions of other difficulties are shown.
    quoted = [line for line in focus.splitlines() if line.startswith("- question at")]
    assert len(quoted) == 10
    assert "question at 2 number 7" in focus and "question at 1 number 0" not in focus
