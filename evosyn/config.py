"""Settings of an EvoSyn campaign (seed 001, EvoSyn), validated.

Defaults are the document's where it gives one (``SETTING_SOURCES``): M = N = 16 solutions and
tests per problem, 20 evolutionary iterations, solutions sampled at temperature 1.0, one final
testing (sections 4.2, 4.3), Criterion-2 at K = 1 (Table 1's setting, ``consistency_k``). The
rest are the project's: 3 islands, exploitation ratio 0.7 and strategist temperature 0.7 as the
document's code release configures them (the document gives no number), migration and feature
bins for the MAP-Elites-with-islands search the document adopts (docs/evosyn.md, "Fidelity to
the paper"). ``EvoSynSettings.from_dict`` rejects unknown keys and bad values with a
ValidationError naming the key; evolution's ``EvolutionSettings`` is never used for this kind.
"""

from __future__ import annotations

from dataclasses import dataclass

from evolution.algorithm_settings import PROJECT, AlgorithmSettings

SETTING_HELP = {
    "solutions_per_problem": "M: candidate solutions generated per problem",
    "tests_per_problem": "N: candidate testings per problem, each one test-writer answer's "
    "unit-test list (the matrix is M x N)",
    "test_calls": "test-writer calls at most per testing (an answer with no usable unit test "
    "is asked again)",
    "max_iterations": "evolutionary iterations of the filtering strategy",
    "num_islands": "islands of the MAP-Elites search (each has its own archive)",
    "migration_interval": "every this many iterations each island's best moves to the next",
    "exploitation_ratio": "probability of mutating an island's best strategy (else a random elite)",
    "feature_bins": "bins per MAP-Elites feature dimension",
    "synth_problems": "new problems synthesized after the search, seeds as in-context examples",
    "selected_tests": "testings a kept problem takes (strategy order, passed by the top "
    "solution); the document keeps one",
    "consistency_k": "K of Criterion-2: the top-K and the bottom-K ranked solutions must each "
    "behave on the human testing as on the strategy's top testing (at most M / 2)",
    "tests_as_code": "section 4.3's variant: the test writer answers with a Python program "
    "that prints the unit-test list, run in the sandbox, instead of the list itself (off: the "
    "Figure 6 prompt, the one the document gives)",
    "solution_temperature": "sampling temperature of the solutions",
    "test_temperature": "sampling temperature of the test writer",
    "strategist_temperature": "sampling temperature of the strategy mutator",
    "synth_temperature": "sampling temperature of the problem synthesizer",
    "execution_time_s": "wall limit of one test execution (seconds)",
    "strategy_time_s": "wall limit of one strategy run on one matrix (seconds)",
    "memory_mb": "memory limit of one execution (MB)",
    "max_sandbox_executions": "sandbox cost budget: executions the campaign may spend in total",
    "duplicate_threshold": "a synthesized statement this similar to an earlier one is dropped",
    "measure_kept": "BenchForge: measure every kept problem with the campaign's panel "
    "(J models x K attempts, as BenchEvolver does), so the gate reads its pass@1",
    "measure_k": "BenchForge: K attempts per panel model when measuring kept problems, unless a "
    "panel member sets its own",
}


# Where each default comes from: the section of the EvoSyn paper (seed document 001) that gives
# the value, or PROJECT.
SETTING_SOURCES = {
    "solutions_per_problem": "§4.2: M = 16",
    "tests_per_problem": "§4.2: N = 16",
    "test_calls": PROJECT,
    "max_iterations": "§4.2",
    "num_islands": PROJECT,
    "migration_interval": PROJECT,
    "exploitation_ratio": PROJECT,
    "feature_bins": PROJECT,
    "synth_problems": PROJECT,
    "selected_tests": "§4.3: one final testing",
    "consistency_k": "§4.2, Table 1: K = 1 with Criterion-1",
    "tests_as_code": PROJECT,
    "solution_temperature": "§4.3",
    "test_temperature": PROJECT,
    "strategist_temperature": PROJECT,
    "synth_temperature": PROJECT,
    "execution_time_s": PROJECT,
    "strategy_time_s": PROJECT,
    "memory_mb": PROJECT,
    "max_sandbox_executions": PROJECT,
    "duplicate_threshold": PROJECT,
    "measure_kept": PROJECT,
    "measure_k": PROJECT,
}


@dataclass(frozen=True)
class EvoSynSettings(AlgorithmSettings):
    LABEL = "EvoSyn"
    HELP = SETTING_HELP
    SOURCES = SETTING_SOURCES

    solutions_per_problem: int = 16
    tests_per_problem: int = 16
    test_calls: int = 2
    max_iterations: int = 20
    num_islands: int = 3
    migration_interval: int = 5
    exploitation_ratio: float = 0.7
    feature_bins: int = 4
    synth_problems: int = 4
    selected_tests: int = 1
    consistency_k: int = 1
    tests_as_code: bool = False
    solution_temperature: float = 1.0
    test_temperature: float = 0.8
    strategist_temperature: float = 0.7
    synth_temperature: float = 1.0
    execution_time_s: float = 6.0
    strategy_time_s: float = 10.0
    memory_mb: int = 512
    max_sandbox_executions: int = 200_000
    duplicate_threshold: float = 0.8
    measure_kept: bool = True
    measure_k: int = 4

    _BOUNDS = {
        "solutions_per_problem": (2, 64),
        "tests_per_problem": (1, 64),
        "test_calls": (1, 10),
        "max_iterations": (0, 500),
        "num_islands": (1, 16),
        "migration_interval": (1, 500),
        "exploitation_ratio": (0.0, 1.0),
        "feature_bins": (1, 10),
        "synth_problems": (0, 1000),
        "selected_tests": (1, 64),
        "consistency_k": (1, 32),
        "solution_temperature": (0.0, 2.0),
        "test_temperature": (0.0, 2.0),
        "strategist_temperature": (0.0, 2.0),
        "synth_temperature": (0.0, 2.0),
        "execution_time_s": (0.5, 60.0),
        "strategy_time_s": (0.5, 120.0),
        "memory_mb": (64, 4096),
        "max_sandbox_executions": (1, 100_000_000),
        "duplicate_threshold": (0.0, 1.0),
        "measure_k": (1, 64),
    }

    def validate(self, errors: dict[str, list[str]]) -> None:
        # Table 1 goes up to K = M / 2: beyond it the top-K and bottom-K solutions overlap.
        if "consistency_k" in errors or "solutions_per_problem" in errors:
            return
        half = self.solutions_per_problem // 2
        if self.consistency_k > half:
            errors.setdefault("consistency_k", []).append(
                f"consistency_k (K = {self.consistency_k}) must be at most M / 2 = {half} "
                f"(solutions_per_problem = {self.solutions_per_problem}): Criterion-2 checks the "
                "top-K and the bottom-K ranked solutions, which would overlap"
            )


def settings_table(raw: dict) -> list[dict]:
    """Rows for the campaign page: name, value, default, changed, help."""
    return EvoSynSettings.table(raw)
