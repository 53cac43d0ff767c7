"""Algorithm settings of a BenchEvolver campaign (Table 5 of the BenchEvolver paper: both its
LiveCodeBench and SciCode columns), validated, and the column each benchmark's lineages run
with. The difficulty map phi is the platform's (``evolution.judging.difficulty``).

Every field is a campaign setting; its default is Table 5's where the paper gives the value and
the project's own otherwise (``SETTING_SOURCES``). ``EvolutionSettings.from_dict`` rejects
unknown keys and out-of-range values with a message naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from evolution.algorithm_settings import PROJECT, AlgorithmSettings
from evolution.judging.difficulty import PANEL_DEFAULTS, phi

from .evidence import attempts_to_prove

# Table 5's two columns. The column is the benchmark's, not the harness's: the paper evolves
# LiveCodeBench (competitive programming, stdin and call-based alike) with one column and SciCode
# (scientific function-level tasks, assertion tests) with the other.
LIVECODEBENCH = "livecodebench"
SCICODE = "scicode"
COLUMNS = (LIVECODEBENCH, SCICODE)

# The column of each benchmark a seed comes from (``Problem.origin_dataset``; an evolved problem
# carries its root's, so a lineage seeded from one keeps the column).
BENCHMARK_COLUMNS = {
    "livecodebench": LIVECODEBENCH,
    # Competitive programming, like LiveCodeBench.
    "codecontests": LIVECODEBENCH,
    "apps": LIVECODEBENCH,
    "taco": LIVECODEBENCH,
    "scicode": SCICODE,
    # HumanEval is not in the paper, so its column is declared here: SciCode's. A HumanEval task
    # is a function specified by a docstring and graded by assertion programs (its
    # check(candidate)), like a SciCode step; the paper validates such tasks by statement
    # faithfulness on assertion tests with 2/2/2 generated inputs, while its brute-force
    # triangulation is written for competition statements, with an input format and constraints
    # an exhaustive search can work within.
    "humaneval": SCICODE,
}


def column_for(origin_dataset: str, harness: str) -> str:
    """The Table 5 column a seed's lineage runs with: its benchmark's (``BENCHMARK_COLUMNS``);
    for a source the table does not name, SciCode's when its tests are assertion programs
    (function-level tasks graded like SciCode's), else LiveCodeBench's (stdin or call-based
    programming problems)."""
    declared = BENCHMARK_COLUMNS.get(origin_dataset or "")
    if declared:
        return declared
    return SCICODE if harness == "assert" else LIVECODEBENCH


@dataclass(frozen=True)
class EvolutionSettings(AlgorithmSettings):
    UNKNOWN_MESSAGE = "unknown setting"
    BOUNDS_MESSAGE = "must be between {low} and {high}"

    # Model and evaluation
    # The platform's panel defaults (evolution.judging.difficulty.PANEL_DEFAULTS, Table 5).
    target_eval_k: int = PANEL_DEFAULTS.target_eval_k
    temperature: float = PANEL_DEFAULTS.temperature
    timeout: float = PANEL_DEFAULTS.timeout
    # Difficulty and acceptance
    allowed_seed_levels: list[int] = field(default_factory=lambda: [1, 2])
    accept_min_level_gain: int = 1
    accept_target_level: int = 5
    max_iters_per_seed: int = 10
    max_accepted_per_seed: int = 3
    no_improve_patience: int = 4
    # A mutation family that already succeeded in another lineage must gain this much more.
    reused_family_extra_gain: int = 1
    level_thresholds: list[float] = field(
        default_factory=lambda: list(PANEL_DEFAULTS.level_thresholds)
    )
    # Mutation and repair
    max_candidate_repairs: int = 3
    spec_retry_attempts: int = 2
    enable_test_repair: bool = True
    test_repair_attempts: int = 2
    # Statement-faithfulness checks (the SciCode column's validation)
    faithfulness_check_N: int = 3
    faithfulness_min_pass_rate: float = 0.5
    faithfulness_max_repair: int = 2
    # Test generation and execution (program_gen_*: the LiveCodeBench column's tiers)
    program_gen_small_inputs: int = 5
    program_gen_medium_inputs: int = 5
    program_gen_large_inputs: int = 5
    program_gen_stress_inputs: int = 3
    function_gen_inputs_per_tier: int = 2
    execution_timeout: float = 6.0
    max_output_bytes: int = PANEL_DEFAULTS.max_output_bytes
    memory_mb: int = 512
    # Memory and diversity
    memory_raw_window: int = 10
    memory_digest_recent_k: int = 3
    judge_near_duplicate_check: bool = True
    near_duplicate_threshold: float = 0.85
    global_memory_max_entries: int = 50
    global_memory_max_chars: int = 6000
    # --- BenchForge's additions to the paper (docs/benchevolver.md, "What BenchForge adds") ---
    # A seed without a reference takes the first calibration attempt that passes all its tests.
    reference_from_calibration: bool = True
    # Failed model calls (transport/provider) for one panel attempt before the campaign pauses.
    infra_retry_limit: int = PANEL_DEFAULTS.infra_retry_limit
    # Off by default (0: Algorithm 1, line 22, on the point estimate over K attempts per model,
    # as the paper runs it). Above 0, a level gain needs evidence: the Wilson upper bound of the
    # pass rate at this confidence must map to the level needed. The paper gives none.
    level_confidence: float = 0.0
    # With evidence on: attempts per panel model a candidate may reach while its gain is
    # unproven. 0: each level's own cap (``evidence.attempts_to_prove``), so every level can be
    # reached; a positive number is one fixed cap for every level.
    max_panel_attempts: int = 0
    # The parent's reference runs on the new tests, tier by tier; on (the paper's "each accepted
    # mutation must make the parent algorithm insufficient"): one that still passes them all is
    # not_harder. Whether a parent that is merely wrong was made insufficient is the judge's call.
    require_parent_insufficient: bool = True
    # An input validator written from the statement checks every generated stdin input.
    validate_inputs: bool = True
    # A tier asking for several inputs must get at least this many distinct ones.
    min_distinct_inputs_per_tier: int = 2
    # Table 5's SciCode column, for the lineages of the campaign whose benchmark takes it
    # (``column_for``); the fields above are its LiveCodeBench column.
    function_execution_timeout: float = 30.0
    function_memory_raw_window: int = 5
    function_global_memory_max_entries: int = 20

    # (min, max) for numbers; None = unbounded on that side.
    _BOUNDS = {
        "target_eval_k": (1, 64),
        "temperature": (0.0, 2.0),
        "timeout": (1.0, 7200.0),
        "accept_min_level_gain": (0, 4),
        "accept_target_level": (1, 5),
        "max_iters_per_seed": (1, 1000),
        "max_accepted_per_seed": (1, 100),
        "no_improve_patience": (1, 1000),
        "reused_family_extra_gain": (0, 4),
        "max_candidate_repairs": (0, 20),
        "spec_retry_attempts": (0, 10),
        "test_repair_attempts": (0, 10),
        "faithfulness_check_N": (1, 32),
        "faithfulness_min_pass_rate": (0.0, 1.0),
        "faithfulness_max_repair": (0, 10),
        "program_gen_small_inputs": (0, 100),
        "program_gen_medium_inputs": (0, 100),
        "program_gen_large_inputs": (0, 100),
        "program_gen_stress_inputs": (0, 100),
        "function_gen_inputs_per_tier": (0, 100),
        "execution_timeout": (0.1, 600.0),
        "max_output_bytes": (1024, 64_000_000),
        "memory_mb": (32, 16384),
        "memory_raw_window": (1, 1000),
        "memory_digest_recent_k": (0, 100),
        "near_duplicate_threshold": (0.0, 1.0),
        "global_memory_max_entries": (0, 10_000),
        "global_memory_max_chars": (0, 1_000_000),
        "infra_retry_limit": (1, 100),
        "level_confidence": (0.0, 0.999),
        "max_panel_attempts": (0, 256),
        "min_distinct_inputs_per_tier": (0, 100),
        "function_execution_timeout": (0.1, 600.0),
        "function_memory_raw_window": (1, 1000),
        "function_global_memory_max_entries": (0, 10_000),
    }

    @classmethod
    def coerce(cls, name: str, raw, default):
        return _coerce(raw, default)

    def validate(self, errors: dict[str, list[str]]) -> None:
        levels = self.allowed_seed_levels
        if "allowed_seed_levels" not in errors and (
            not levels or any(not 1 <= lv <= 5 for lv in levels)
        ):
            errors["allowed_seed_levels"] = ["must be a non-empty list of levels between 1 and 5"]
        thresholds = self.level_thresholds
        if "level_thresholds" not in errors and (
            len(thresholds) != 4
            or any(not 0.0 < t <= 1.0 for t in thresholds)
            or any(a <= b for a, b in zip(thresholds, thresholds[1:], strict=False))
        ):
            errors["level_thresholds"] = ["must be 4 strictly decreasing pass rates in (0, 1]"]
        if self.level_confidence > 0 and not {"level_confidence", "level_thresholds"} & set(errors):
            for level in range(2, len(thresholds) + 2):
                try:
                    attempts_to_prove(level, self.level_confidence, thresholds)
                except ValueError as exc:
                    errors["level_confidence"] = [str(exc)]
                    break

    def for_column(self, column: str) -> EvolutionSettings:
        """The settings a lineage of this Table 5 column runs with (``column_for``): the
        LiveCodeBench column as set; the SciCode column takes its execution time-out, raw
        memory window and global-memory size from the ``function_*`` settings."""
        if column == LIVECODEBENCH:
            return self
        if column != SCICODE:
            raise ValueError(f"unknown Table 5 column {column!r}")
        return replace(
            self,
            execution_timeout=self.function_execution_timeout,
            memory_raw_window=self.function_memory_raw_window,
            global_memory_max_entries=self.function_global_memory_max_entries,
        )

    def level(self, pass_rate: float) -> int:
        return phi(pass_rate, self.level_thresholds)

    def tier_counts(self, column: str) -> dict[str, int]:
        """Generated inputs per tier: small/medium/large/stress 5/5/5/3 in the LiveCodeBench
        column, 2/2/2 (no stress tier) in the SciCode column."""
        if column == LIVECODEBENCH:
            return {
                "small": self.program_gen_small_inputs,
                "medium": self.program_gen_medium_inputs,
                "large": self.program_gen_large_inputs,
                "stress": self.program_gen_stress_inputs,
            }
        n = self.function_gen_inputs_per_tier
        return {"small": n, "medium": n, "large": n}


def _coerce(raw, default):
    if isinstance(default, bool):
        if isinstance(raw, bool):
            return raw
        if isinstance(raw, str) and raw.lower() in ("true", "false", "1", "0"):
            return raw.lower() in ("true", "1")
        raise TypeError("must be true or false")
    if isinstance(default, int):
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise TypeError("must be a whole number")
        return int(raw)
    if isinstance(default, float):
        if isinstance(raw, bool):
            raise TypeError("must be a number")
        return float(raw)
    if isinstance(default, list):
        if isinstance(raw, str):
            raw = [part.strip() for part in raw.split(",") if part.strip()]
        if not isinstance(raw, list | tuple):
            raise TypeError("must be a list")
        kind = type(default[0]) if default else int
        return [kind(item) for item in raw]
    return raw


# Human-readable meaning of each setting, shown on the campaign page and in docs/benchevolver.md.
SETTING_HELP = {
    "target_eval_k": "Attempts per target model (K), unless a panel member sets its own.",
    "temperature": "Sampling temperature, for every endpoint that sets none of its own.",
    "timeout": "LLM request timeout in seconds: caps each endpoint's own timeout for this campaign's calls.",
    "allowed_seed_levels": "Seed difficulty levels allowed as starting points.",
    "accept_min_level_gain": "Minimum difficulty-level gain over the seed (Δ).",
    "accept_target_level": "Stop once an accepted candidate reaches this level.",
    "max_iters_per_seed": "Maximum evolution iterations per seed.",
    "max_accepted_per_seed": "Maximum accepted evolved items per seed.",
    "no_improve_patience": "Stop after this many consecutive non-accepted iterations.",
    "reused_family_extra_gain": "Extra level gain required from a mutation family already accepted elsewhere.",
    "level_thresholds": "φ: pass-rate thresholds for levels 1-4 (below the last is level 5).",
    "max_candidate_repairs": "Shared repair budget per candidate.",
    "spec_retry_attempts": "Statement/spec revision attempts.",
    "enable_test_repair": "Allow regenerating weak or malformed tests.",
    "test_repair_attempts": "Test repair attempts.",
    "faithfulness_check_N": "Alt-solver attempts for the statement-faithfulness check (SciCode column).",
    "faithfulness_min_pass_rate": "Best-of-N pass-rate floor for a faithful statement.",
    "faithfulness_max_repair": "Statement revisions on faithfulness failure.",
    "program_gen_small_inputs": "Generated small inputs (LiveCodeBench column).",
    "program_gen_medium_inputs": "Generated medium inputs (LiveCodeBench column).",
    "program_gen_large_inputs": "Generated large inputs (LiveCodeBench column).",
    "program_gen_stress_inputs": "Generated stress inputs (LiveCodeBench column).",
    "function_gen_inputs_per_tier": "Generated inputs per tier (small, medium, large) in the SciCode column.",
    "execution_timeout": "Per-test reference/target execution timeout (s), LiveCodeBench column.",
    "max_output_bytes": "Maximum captured stdout bytes.",
    "memory_mb": "Memory limit per execution (MB).",
    "memory_raw_window": "Raw recent iteration records kept in lineage memory.",
    "memory_digest_recent_k": "Recent raw records shown alongside the digest.",
    "judge_near_duplicate_check": "Reject near-duplicates within a seed lineage.",
    "near_duplicate_threshold": "Lexical similarity at or above which a candidate is a near-duplicate.",
    "global_memory_max_entries": "Max global accepted entries shown to the mutator.",
    "global_memory_max_chars": "Character cap for the global memory block.",
    "reference_from_calibration": "BenchForge: a seed without a reference solution takes the first calibration attempt that passes every public and private test.",
    "level_confidence": "BenchForge option, off by default (0: Algorithm 1, line 22, on the point estimate, as the paper runs it). Above 0 (the paper gives no threshold), a level gain is declared only when the pass rate's Wilson upper bound at this confidence maps to the level needed; an unproven gain gets K more attempts per model up to its attempt cap.",
    "max_panel_attempts": "BenchForge option, with level_confidence above 0: attempts per panel model a candidate may reach while its gain is unproven. 0 (default): each level's own cap, the fewest attempts that can prove it (95%: levels 2-5 need 14, 14, 14 and 35 over the panel), so every level is reachable; a positive number is one fixed cap for every level.",
    "require_parent_insufficient": "BenchForge's executable check of the paper's rule that each accepted mutation makes the parent algorithm insufficient: the parent's reference runs on the new tests tier by tier (recorded as still right, too slow from some tier on, or wrong); on (default), a candidate the parent still solves is not_harder. The judge decides whether a parent that is merely wrong was made insufficient (its lift verdict).",
    "validate_inputs": "BenchForge: an input validator written from the statement alone checks every generated stdin input; refused inputs are dropped and the generator is repaired (counts in the ledger).",
    "min_distinct_inputs_per_tier": "BenchForge: a generator giving fewer distinct inputs than this in a tier (it ignores its seed) is repaired like a failing one.",
    "function_execution_timeout": "Table 5, SciCode column: per-test time-out (s) for lineages of SciCode-column benchmarks (SciCode, HumanEval; execution_timeout is the LiveCodeBench column's, for LiveCodeBench seeds of either harness).",
    "function_memory_raw_window": "Table 5, SciCode column: memory_raw_window for lineages of SciCode-column benchmarks.",
    "function_global_memory_max_entries": "Table 5, SciCode column: global_memory_max_entries for lineages of SciCode-column benchmarks.",
    "infra_retry_limit": "BenchForge: failed model calls (transport or provider errors) allowed for one panel attempt before the campaign pauses naming the endpoint; such attempts never count in a pass rate.",
}

EvolutionSettings.HELP = SETTING_HELP

# Where each default comes from. Table 5 gives both columns (LCB: LiveCodeBench); a setting equal
# in both is "Table 5". The paper defines phi (Appendix B) and says a reused mutation family must
# gain more (section 3.4) without giving numbers; it gives no memory limit or similarity threshold;
# the rest of PROJECT are BenchForge's additions ("What BenchForge adds").
TABLE_5, LCB, SCICODE_COLUMN = "Table 5", "Table 5, LCB column", "Table 5, SciCode column"
SETTING_SOURCES = {
    "target_eval_k": TABLE_5,
    "temperature": TABLE_5,
    "timeout": TABLE_5,
    "allowed_seed_levels": TABLE_5,
    "accept_min_level_gain": TABLE_5,
    "accept_target_level": TABLE_5,
    "max_iters_per_seed": TABLE_5,
    "max_accepted_per_seed": TABLE_5,
    "no_improve_patience": TABLE_5,
    "reused_family_extra_gain": PROJECT,
    "level_thresholds": PROJECT,
    "max_candidate_repairs": TABLE_5,
    "spec_retry_attempts": TABLE_5,
    "enable_test_repair": TABLE_5,
    "test_repair_attempts": TABLE_5,
    "faithfulness_check_N": SCICODE_COLUMN,
    "faithfulness_min_pass_rate": SCICODE_COLUMN,
    "faithfulness_max_repair": SCICODE_COLUMN,
    "program_gen_small_inputs": LCB,
    "program_gen_medium_inputs": LCB,
    "program_gen_large_inputs": LCB,
    "program_gen_stress_inputs": LCB,
    # The SciCode column's program_gen_small/medium/large_inputs (2 each, no stress tier).
    "function_gen_inputs_per_tier": SCICODE_COLUMN,
    "execution_timeout": LCB,
    "max_output_bytes": TABLE_5,
    "memory_mb": PROJECT,
    "memory_raw_window": LCB,
    "memory_digest_recent_k": TABLE_5,
    "judge_near_duplicate_check": TABLE_5,
    "near_duplicate_threshold": PROJECT,
    "global_memory_max_entries": LCB,
    "global_memory_max_chars": TABLE_5,
    "reference_from_calibration": PROJECT,
    "infra_retry_limit": PROJECT,
    "level_confidence": PROJECT,
    "max_panel_attempts": PROJECT,
    "require_parent_insufficient": PROJECT,
    "validate_inputs": PROJECT,
    "min_distinct_inputs_per_tier": PROJECT,
    "function_execution_timeout": SCICODE_COLUMN,
    "function_memory_raw_window": SCICODE_COLUMN,
    "function_global_memory_max_entries": SCICODE_COLUMN,
}

EvolutionSettings.SOURCES = SETTING_SOURCES
