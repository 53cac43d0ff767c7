"""The pipeline's pure functions: phi, settings validation, vote, hidden check, acceptance,
stopping rules, memory, near-duplicates, answer parsing."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError

from evolution.benchevolver.engine import accept, judge, memory, propose, validate
from evolution.benchevolver.engine.config import EvolutionSettings, column_for
from evolution.benchevolver.engine.types import StageError
from evolution.judging.difficulty import phi


def same(a, b, given=None):
    return a.strip() == b.strip()


class TestPhiAndSettings:
    def test_phi_maps_pass_rates_to_levels_with_the_documented_thresholds(self):
        assert [phi(a) for a in (1.0, 0.9, 0.89, 0.7, 0.5, 0.4, 0.39, 0.1, 0.09, 0.0)] == [
            1,
            1,
            2,
            2,
            3,
            3,
            4,
            4,
            5,
            5,
        ]

    def test_phi_rejects_rates_outside_zero_one(self):
        with pytest.raises(ValueError):
            phi(1.5)

    def test_defaults_are_table_5(self):
        s = EvolutionSettings()
        assert (s.target_eval_k, s.temperature, s.timeout) == (4, 0.8, 600.0)
        assert (s.allowed_seed_levels, s.accept_min_level_gain, s.accept_target_level) == (
            [1, 2],
            1,
            5,
        )
        assert (s.max_iters_per_seed, s.max_accepted_per_seed, s.no_improve_patience) == (10, 3, 4)
        assert (s.max_candidate_repairs, s.spec_retry_attempts, s.test_repair_attempts) == (3, 2, 2)
        assert (s.faithfulness_check_N, s.faithfulness_min_pass_rate) == (3, 0.5)
        assert s.tier_counts("livecodebench") == {"small": 5, "medium": 5, "large": 5, "stress": 3}
        assert s.tier_counts("scicode") == {"small": 2, "medium": 2, "large": 2}
        assert (s.execution_timeout, s.max_output_bytes) == (6.0, 1_000_000)
        assert (s.memory_raw_window, s.memory_digest_recent_k) == (10, 3)
        assert (s.global_memory_max_entries, s.global_memory_max_chars) == (50, 6000)

    def test_bad_settings_are_rejected_naming_each_key(self):
        with pytest.raises(ValidationError) as info:
            EvolutionSettings.from_dict(
                {
                    "target_eval_k": 0,
                    "temperature": "hot",
                    "typo_setting": 1,
                    "level_thresholds": [0.1, 0.5, 0.7, 0.9],
                }
            )
        errors = info.value.message_dict
        assert set(errors) == {"target_eval_k", "temperature", "typo_setting", "level_thresholds"}
        assert errors["typo_setting"] == ["unknown setting"]

    def test_partial_settings_keep_defaults_and_coerce_form_strings(self):
        s = EvolutionSettings.from_dict(
            {"allowed_seed_levels": "1, 2, 3", "enable_test_repair": "false", "timeout": "30"}
        )
        assert (
            s.allowed_seed_levels == [1, 2, 3]
            and s.enable_test_repair is False
            and s.timeout == 30.0
        )
        assert s.max_iters_per_seed == 10


class TestVote:
    def test_agreement_passes(self):
        v = validate.vote(["3\n", "5\n"], ["3", "5"], ["3", "5"], same)
        assert v.agree and v.target is None

    def test_brute_force_alone_disagreeing_names_the_brute_force(self):
        v = validate.vote(["3"], ["4"], ["3"], same)
        assert (v.agree, v.target) == (False, "brute_force")

    def test_reference_alone_disagreeing_names_the_reference(self):
        v = validate.vote(["3"], ["4"], ["4"], same)
        assert v.target == "reference"

    def test_oracle_alone_disagreeing_is_overruled_when_reference_and_brute_force_agree(self):
        v = validate.vote(["3", "5"], ["3", "5"], ["9", "5"], same)
        assert (v.agree, v.target, v.oracle_overruled) == (True, None, 1)
        assert v.per_example[0]["verdict"] == "oracle overruled (reference and brute force agree)"

    def test_all_three_differing_names_the_statement(self):
        v = validate.vote(["3"], ["4"], ["9"], same)
        assert (v.agree, v.target) == (False, "statement")

    def test_a_missing_witness_output_counts_as_disagreement(self):
        v = validate.vote(["3"], [None], ["3"], same)
        assert v.target == "brute_force"


class TestHiddenCheck:
    def outcome(self, status, stdout=""):
        return SimpleNamespace(status=status, stdout=stdout)

    def test_brute_force_timeouts_are_infeasible_not_wrong(self):
        tests = [
            {"tier": "small", "input": "1", "output": "1"},
            {"tier": "large", "input": "9", "output": "81"},
        ]
        check = validate.hidden_check(tests, [self.outcome("OK", "1"), self.outcome("TLE")], same)
        assert (check.agree, check.checked, check.infeasible) == (True, 1, 1)

    def test_a_concrete_disagreement_is_a_counterexample(self):
        tests = [{"tier": "small", "input": "2", "output": "4"}]
        check = validate.hidden_check(tests, [self.outcome("OK", "5")], same)
        assert not check.agree
        assert check.counterexample["brute_force_output"] == "5"
        assert check.counterexample["reference_output"] == "4"


class TestAcceptance:
    s = EvolutionSettings()

    def test_it_accepts_a_gain_over_seed_and_parent(self):
        assert (
            accept.decide(
                level=3, parent_level=2, seed_level=1, settings=self.s, family_used_elsewhere=False
            ).decision
            == "accepted"
        )

    def test_it_rejects_a_level_below_the_parent(self):
        out = accept.decide(
            level=3, parent_level=4, seed_level=1, settings=self.s, family_used_elsewhere=False
        )
        assert out.decision == "not_harder" and "below the parent" in out.reason

    def test_it_rejects_too_small_a_gain_over_the_seed(self):
        assert (
            accept.decide(
                level=1, parent_level=1, seed_level=1, settings=self.s, family_used_elsewhere=False
            ).decision
            == "not_harder"
        )

    def test_a_reused_family_needs_the_extra_gain(self):
        assert (
            accept.decide(
                level=2, parent_level=1, seed_level=1, settings=self.s, family_used_elsewhere=True
            ).decision
            == "not_harder"
        )
        assert (
            accept.decide(
                level=3, parent_level=1, seed_level=1, settings=self.s, family_used_elsewhere=True
            ).decision
            == "accepted"
        )

    @pytest.mark.parametrize(
        ("state", "expected"),
        [
            (
                {"iterations": 2, "accepted": 1, "no_improve": 0, "best_level": 5},
                "accept_target_level",
            ),
            (
                {"iterations": 3, "accepted": 3, "no_improve": 0, "best_level": 3},
                "max_accepted_per_seed",
            ),
            (
                {"iterations": 6, "accepted": 1, "no_improve": 4, "best_level": 3},
                "no_improve_patience",
            ),
            (
                {"iterations": 10, "accepted": 1, "no_improve": 2, "best_level": 3},
                "max_iters_per_seed",
            ),
            ({"iterations": 9, "accepted": 2, "no_improve": 3, "best_level": 4}, None),
        ],
    )
    def test_each_stopping_rule(self, state, expected):
        reason = accept.stop_reason(settings=self.s, **state)
        assert (reason.split(" ")[0] if reason else None) == expected


class TestMemory:
    def test_the_raw_window_keeps_the_newest_and_folds_the_rest_into_the_digest(self):
        mem: list = []
        for r in range(1, 6):
            mem = memory.remember(
                mem,
                {"round": r, "decision": "invalid" if r % 2 else "accepted", "family": f"f{r}"},
                window=3,
            )
        raw = [m for m in mem if m.get("kind") != "digest"]
        assert [m["round"] for m in raw] == [3, 4, 5]
        digest = mem[0]
        assert digest["counts"] == {"invalid": 1, "accepted": 1}

    def test_the_digest_text_shows_totals_accepted_and_recent_records(self):
        mem: list = []
        for r, d in enumerate(["accepted", "not_harder", "invalid", "duplicate"], start=1):
            mem = memory.remember(
                mem,
                {
                    "round": r,
                    "decision": d,
                    "family": "dp",
                    "idea": f"idea {r}",
                    "level": 3,
                    "pass_rate": 0.5,
                    "errors": {"TLE": 2},
                },
                window=10,
            )
        text = memory.digest_text(mem, recent_k=2)
        assert "Digest: accepted 1, duplicate 1, invalid 1, not_harder 1" in text
        assert "accepted round 1: dp -> level 3" in text
        assert (
            "round 3; invalid" in text
            and "round 4; duplicate" in text
            and "round 2; not_harder" not in text
        )
        assert "target errors TLE=2" in text

    def test_the_mutator_sees_each_target_model_s_errors_not_one_pooled_histogram(self):
        mem = memory.remember(
            [],
            {
                "round": 1,
                "decision": "not_harder",
                "errors": {"WA": 3, "TLE": 4},
                "errors_by_model": {"solver-b": {"TLE": 4}, "solver-a": {"WA": 3}},
                "parent_check": "parent too slow: right on small; TLE on large",
            },
            window=10,
        )
        text = memory.digest_text(mem, recent_k=1)
        assert "target errors solver-a: WA=3; solver-b: TLE=4" in text
        assert "parent too slow: right on small; TLE on large" in text

    def test_global_memory_respects_entry_and_character_caps(self):
        entries = [(f"family {i}", "x" * 50, 1) for i in range(10)]
        text = memory.global_text(entries, max_entries=4, max_chars=10_000)
        assert text.count("\n") == 3 and "family 9" in text and "family 5" not in text
        short = memory.global_text(entries, max_entries=50, max_chars=150)
        assert len(short) <= 150 and "family 9" in short


class TestNearDuplicate:
    def test_identical_statements_are_duplicates_and_unrelated_ones_are_not(self):
        a = "Count the pairs of items whose total price is at most k."
        assert judge.near_duplicate(a, {"r1": a}, 0.85).duplicate
        other = "Given a tree, find the diameter using two breadth-first searches."
        check = judge.near_duplicate(a, {"r1": other}, 0.85)
        assert not check.duplicate and check.score < 0.1

    def test_an_unparsable_judge_answer_is_flagged_not_accepted(self):
        verdict = judge.parse_judge("looks fine to me")
        assert verdict.parsed is False


class TestParsing:
    def test_mutation_needs_json_meta_and_code(self):
        text = '```json\n{"idea": "x", "family": "DP-On_Trees", "parent_weakness": "y"}\n```\n```python\nprint(1)\n```'
        m = propose.parse_mutation(text)
        # "dp on trees" is a synonym of the review vocabulary's "tree dp".
        assert (m.family, m.code) == ("tree dp", "print(1)\n")
        with pytest.raises(StageError, match="mutator answer unparsable"):
            propose.parse_mutation("just prose")

    def test_written_needs_examples(self):
        with pytest.raises(StageError, match="examples"):
            propose.parse_written('```json\n{"title": "t", "statement": "s", "examples": []}\n```')
        # The entry point is the parent's harness's, never the writer's: a name it gives is
        # not read.
        w = propose.parse_written(
            '```json\n{"title": "t", "statement": "s", "examples": ["1"], "entry_point": "x y"}\n```'
        )
        assert w.examples == ["1\n"] and not hasattr(w, "entry_point")

    def test_oracle_answers_are_padded_and_unparsable_ones_are_empty_votes(self):
        assert validate.parse_oracle('```json\n{"outputs": ["1"]}\n```', 2) == ["1", None]
        assert validate.parse_oracle("no idea", 2) == [None, None]

    def test_the_rendered_statement_carries_the_executed_example_outputs(self):
        text = propose.render_statement("# T\n\nbody", [("1 2\n", "3\n")])
        assert "### Example 1" in text and "```\n3\n```" in text


class TestLevelEvidence:
    def test_the_wilson_interval_matches_the_closed_form(self):
        low, high = accept.wilson_interval(7, 8, 0.95)
        assert (round(low, 3), round(high, 3)) == (0.529, 0.978)
        assert accept.wilson_interval(0, 0, 0.95) == (0.0, 1.0)
        low, high = accept.wilson_interval(8, 8, 0.95)
        assert high == 1.0 and round(low, 3) == 0.676

    def test_one_failure_in_eight_supports_only_level_one(self):
        with_evidence = EvolutionSettings(level_confidence=0.95)
        ev = accept.level_evidence(passes=7, attempts=8, settings=with_evidence)
        assert ev.level == 1
        verdict = accept.evidence_verdict(
            evidence=ev, needed=2, attempts_per_model=4, panel_size=2, settings=with_evidence
        )
        assert verdict == "more"
        capped = EvolutionSettings(level_confidence=0.95, max_panel_attempts=4)
        assert (
            accept.evidence_verdict(
                evidence=ev, needed=2, attempts_per_model=4, panel_size=2, settings=capped
            )
            == "insufficient"
        )

    def test_the_default_is_algorithm_one_on_the_point_estimate(self):
        s = EvolutionSettings()
        assert (s.target_eval_k, s.level_confidence) == (4, 0.0)
        assert accept.level_evidence(passes=7, attempts=8, settings=s) is None
        assert (
            accept.evidence_verdict(
                evidence=None, needed=2, attempts_per_model=4, panel_size=2, settings=s
            )
            == "enough"
        )

    def test_a_fixed_cap_of_eight_per_model_cannot_prove_level_five(self):
        """The finding: 0/16 proves only level 4 and 6/8 or 7/8 only level 1 at 95%."""
        s = EvolutionSettings(level_confidence=0.95)
        assert accept.level_evidence(passes=0, attempts=16, settings=s).level == 4
        assert accept.level_evidence(passes=6, attempts=8, settings=s).level == 1
        assert [accept.attempts_to_prove(lv, 0.95, s.level_thresholds) for lv in range(1, 6)] == [
            1,
            14,
            14,
            14,
            35,
        ]

    @pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99])
    @pytest.mark.parametrize("panel_size", [1, 2, 3, 5])
    def test_every_level_is_reachable_within_its_own_cap(self, confidence, panel_size):
        s = EvolutionSettings(level_confidence=confidence)
        for level in range(2, 6):
            per_model = accept.attempt_cap(needed=level, panel_size=panel_size, settings=s)
            pooled = per_model * panel_size
            proven = {
                accept.level_evidence(passes=x, attempts=pooled, settings=s).level
                for x in range(pooled + 1)
                if s.level(x / pooled) == level
            }
            assert level in proven, (level, pooled)

    @pytest.mark.parametrize("confidence", [0.5, 0.8, 0.9, 0.95, 0.99])
    def test_from_its_cap_on_a_level_is_provable_at_every_count(self, confidence):
        s = EvolutionSettings(level_confidence=confidence)

        def provable(level, n):
            return any(
                s.level(x / n) == level
                and accept.level_evidence(passes=x, attempts=n, settings=s).level == level
                for x in range(n + 1)
            )

        for level in range(2, 6):
            first = accept.attempts_to_prove(level, confidence, s.level_thresholds)
            assert not provable(level, first - 1)
            assert all(provable(level, n) for n in range(first, first + 300))

    def test_thresholds_too_close_to_prove_a_level_are_refused(self):
        with pytest.raises(Exception, match="level_confidence"):
            EvolutionSettings.from_dict(
                {"level_confidence": 0.99, "level_thresholds": [0.9, 0.89999, 0.4, 0.1]}
            )

    def test_level_confidence_zero_turns_evidence_off(self):
        s = EvolutionSettings(level_confidence=0.0)
        assert accept.level_evidence(passes=7, attempts=8, settings=s) is None
        assert (
            accept.evidence_verdict(
                evidence=None, needed=2, attempts_per_model=4, panel_size=2, settings=s
            )
            == "enough"
        )


class TestFamilies:
    @pytest.mark.parametrize(
        ("given", "canonical"),
        [
            ("two pointers", "two pointers"),
            ("two-pointer technique", "two pointers"),
            ("Sliding window", "two pointers"),
            ("DP-based approach", "dynamic programming"),
            ("Offline queries with BIT", "fenwick tree"),
            ("counting with hash maps", "hash tables"),
            ("input format twist", "input format twist"),
            # Found folding into the wrong family: "search" was backtracking's synonym, "dag"
            # topological sort's, and filler words were dropped from the family but not from
            # the vocabulary's phrases.
            ("graph search", "graphs"),
            ("DP on DAG", "dynamic programming"),
            ("memoized recursion", "dynamic programming"),
            ("DP with bitmask", "bitmask dp"),
            ("meet in the middle search", "meet in the middle"),
            ("binary search on the answer", "binary search"),
            ("recursive backtracking search", "backtracking"),
            ("shortest path on DAG", "shortest paths"),
        ],
    )
    def test_families_fold_into_the_review_vocabulary(self, given, canonical):
        assert propose.normalize_family(given) == canonical

    def test_global_memory_lists_attempted_families_after_accepted_ones(self):
        text = memory.global_text(
            [("two pointers", "idea", 2)],
            max_entries=50,
            max_chars=6000,
            attempted=[("dynamic programming", "not_harder"), ("dynamic programming", "invalid")],
        )
        assert text.splitlines() == [
            "- two pointers (+2 levels): idea",
            "Attempted in other lineages without acceptance: dynamic programming x2",
        ]


class TestPerColumnDefaults:
    def test_the_scicode_column_takes_its_own_time_out_and_memory_sizes(self):
        s = EvolutionSettings()
        scicode = s.for_column("scicode")
        assert (
            scicode.execution_timeout,
            scicode.memory_raw_window,
            scicode.global_memory_max_entries,
        ) == (30.0, 5, 20)
        lcb = s.for_column("livecodebench")
        assert (lcb.execution_timeout, lcb.memory_raw_window) == (6.0, 10)
        assert lcb.global_memory_max_entries == 50
        with pytest.raises(ValueError, match="unknown Table 5 column"):
            s.for_column("stdio")

    def test_each_column_is_its_own_setting(self):
        s = EvolutionSettings.from_dict(
            {"execution_timeout": 2.0, "function_execution_timeout": 45.0}
        )
        assert s.for_column("livecodebench").execution_timeout == 2.0
        assert s.for_column("scicode").execution_timeout == 45.0

    @pytest.mark.parametrize(
        "dataset, harness, column",
        [
            # The column follows the benchmark, whatever the harness.
            ("livecodebench", "stdio", "livecodebench"),
            ("livecodebench", "function", "livecodebench"),
            ("scicode", "assert", "scicode"),
            # Declared: HumanEval takes the SciCode column.
            ("humaneval", "assert", "scicode"),
            ("codecontests", "stdio", "livecodebench"),
            # A source the table does not name: assertion programs are SciCode's kind of task.
            ("my-jsonl", "assert", "scicode"),
            ("my-jsonl", "function", "livecodebench"),
            ("", "stdio", "livecodebench"),
        ],
    )
    def test_each_benchmark_has_its_column(self, dataset, harness, column):
        assert column_for(dataset, harness) == column
