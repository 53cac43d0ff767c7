"""Settings of a FrontierSmith campaign, validated.

The paper's defaults (as seed document 002 reports them) are 4 synthesis rounds, B = 1000
candidates per round, N_div = 100 kept after the model-judged idea divergence, N_final = 50 kept
after execution re-ranking and n = 10 sampled solutions per candidate; every other default is
the project's (``SETTING_SOURCES``). ``FrontierSettings.from_dict`` rejects unknown keys and bad
values with a ValidationError naming the key. BenchEvolver's settings never apply here.
"""

from __future__ import annotations

from dataclasses import dataclass

from evolution.algorithm_settings import PROJECT, AlgorithmSettings

SETTING_HELP = {
    "rounds": "synthesis rounds; accepted problems join the seed pool for the next round",
    "budget_candidates": "B: mutated candidates proposed per round",
    "n_div": "N_div: candidates kept per round after the model-judged idea divergence",
    "n_final": "N_final: problems accepted per round after execution re-ranking",
    "solutions_per_candidate": "n: sampled solutions per candidate (divergence estimates)",
    "tests_per_candidate": "m: test inputs the test-case generator produces per candidate",
    "agent_rounds": "rounds of the test-case agent and the verifier agent (write or revise, run "
    "each other's programs with tools, accept or name a defect) before a candidate is dropped",
    "max_build_attempts": "times the environment both agents agreed on may fail the fixed-rule "
    "checks (their findings go back to the blamed agent) before a candidate is dropped",
    "min_objective_spread": "verifier check: relative spread of objectives across solutions",
    "execution_timeout": "seconds per test for solutions, baselines and generators",
    "memory_mb": "memory limit per test process (MB)",
    "mutation_temperature": "temperature of formulation extraction and mutation",
    "solver_temperature": "temperature of the sampled solutions",
    "judge_temperature": "temperature of the coarse filter and the pairwise judge",
    "bundled_calibration": "without a labelled calibration set of a kind, measure the coarse "
    "filter on the bundled authored one (a few problems written for BenchForge)",
}


# Where each default comes from: the place in seed document 002 (a reading of the FrontierSmith
# paper) that gives the value, or PROJECT. It gives no number of tests, build attempts, spread,
# limits or temperatures; it has the two agents agree without a number of rounds.
SETTING_SOURCES = {
    "rounds": "experiment design, Synthesis",
    "budget_candidates": "experiment design, Synthesis",
    "n_div": "experiment design, Synthesis",
    "n_final": "experiment design, Synthesis",
    "solutions_per_candidate": "method, step 4",
    "tests_per_candidate": PROJECT,
    "agent_rounds": PROJECT,
    "max_build_attempts": PROJECT,
    "min_objective_spread": PROJECT,
    "execution_timeout": PROJECT,
    "memory_mb": PROJECT,
    "mutation_temperature": PROJECT,
    "solver_temperature": PROJECT,
    "judge_temperature": PROJECT,
    "bundled_calibration": PROJECT,
}


@dataclass(frozen=True)
class FrontierSettings(AlgorithmSettings):
    LABEL = "FrontierSmith"
    HELP = SETTING_HELP
    SOURCES = SETTING_SOURCES

    rounds: int = 4
    budget_candidates: int = 1000
    n_div: int = 100
    n_final: int = 50
    solutions_per_candidate: int = 10
    tests_per_candidate: int = 8
    agent_rounds: int = 4
    max_build_attempts: int = 3
    min_objective_spread: float = 0.05
    execution_timeout: float = 6.0
    memory_mb: int = 512
    mutation_temperature: float = 0.8
    solver_temperature: float = 0.8
    judge_temperature: float = 0.0
    bundled_calibration: bool = True

    _BOUNDS = {
        "rounds": (1, 100),
        "budget_candidates": (1, 100000),
        "n_div": (1, 100000),
        "n_final": (1, 100000),
        "solutions_per_candidate": (2, 50),
        "tests_per_candidate": (1, 200),
        "agent_rounds": (1, 20),
        "max_build_attempts": (1, 10),
        "min_objective_spread": (0.0, 1.0),
        "execution_timeout": (0.5, 600.0),
        "memory_mb": (64, 16384),
        "mutation_temperature": (0.0, 2.0),
        "solver_temperature": (0.0, 2.0),
        "judge_temperature": (0.0, 2.0),
    }

    def validate(self, errors: dict[str, list[str]]) -> None:
        if self.n_div > self.budget_candidates:
            errors.setdefault("n_div", []).append("n_div must not exceed budget_candidates")
        if self.n_final > self.n_div:
            errors.setdefault("n_final", []).append("n_final must not exceed n_div")


def settings_table(raw: dict) -> list[dict]:
    """Rows for the campaign page: name, value, default, changed, help."""
    return FrontierSettings.table(raw)
