"""Settings of an X-Coder campaign (seed document 003), validated.

Every field is a campaign setting; its default is the document's where the document gives the
value, the project's own otherwise (``SETTING_SOURCES``);
``XcoderSettings.from_dict`` rejects unknown keys and bad values with a ValidationError naming the
key. BenchEvolver's ``EvolutionSettings`` is never used for this kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evolution.algorithm_settings import PROJECT, AlgorithmSettings

STYLES = ("codeforces", "atcoder", "leetcode")
TEST_MODES = ("prompt", "generator", "both")
WEIGHTINGS = ("semantic", "size")
EVOLUTION_SCOPES = ("seed", "tree")
THINK_TAGS = ("required", "off")
# A generator run's output is streamed to a file (see stages/generate.py); its files must fit
# the sandbox's /tmp together (256 MiB per submission on bwrap, the run's memory on docker).
GENERATOR_OUTPUT_MAX_MB = 1024


def default_style_mix() -> dict:
    # Section 2 (i) / B.2: Codeforces, AtCoder and LeetCode styles. The shares are the
    # project's: the document gives none (section 4, Q3: Codeforces style predominant).
    return {"codeforces": 70, "atcoder": 15, "leetcode": 15}


SETTING_HELP = {
    "evolution_rounds": "rounds of breadth + depth evolution of the feature tree (B.1)",
    "evolution_scope": "seed: evolve each seed's extracted features, then merge them into the "
    "tree (B.1, evolve-then-merge: each call sees one seed's features); tree: evolve the merged "
    "tree category by category",
    "num_tasks": "tasks to generate from the evolved tree",
    "subtree_leaves": "leaf features sampled per task before stage-1 selection (B.2)",
    "subtree_categories": "categories the sampled subtree draws from",
    "min_selected_features": "stage 1 must keep at least this many features",
    "style_mix": "percentages of Codeforces / AtCoder / LeetCode tasks",
    "min_statement_words": (
        "statements with fewer words and punctuation marks than this are discarded (C.1 asks "
        "for 200 tokens; counted as words, since no tokenizer ships in an installable package "
        "without a download)"
    ),
    "min_samples": "sample I/O pairs, each with an explanation, a statement must show",
    "test_mode": "generator (D.2, BenchForge's default: the paper's Table 5 favours the tool-based "
    "method; a CYaRon program run sandboxed with --seed), prompt (D.1) or both",
    "prompt_test_count": "test inputs the prompting-based method asks for (D.1: 15)",
    "generator_seed": "--seed passed to the generator program (D.2: default 42)",
    "candidates": "candidate solutions per task, spread over the solver endpoints (n = 8, "
    "Tables 13 and 17)",
    "candidates_per_endpoint": "candidate solutions from each solver endpoint; 0: spread "
    "`candidates` over them",
    "think_tags": "required: an answer without a complete <think>...</think> reasoning block "
    "followed by the answer is refused, and the code is taken from the answer part (C.1 (i)); "
    "off: no tag filter",
    "min_candidates": "candidates that must pass the static gates for voting to run",
    "max_solution_tokens": "answers longer than this are rejected (C.1: 25k tokens)",
    "weighting": "test weights: semantic (nominal 1 .. stress 4) or size quartiles (E.2)",
    "holdout_fraction": "share of voted tests held out to confirm the golden solution (section 2 "
    "(iv): 50%)",
    "split_seed": "seed of the random golden / hold-out partition",
    "near_duplicate_threshold": "word-shingle similarity above which a statement is a duplicate",
    "temperature": "sampling temperature of generation calls",
    "solver_temperature": "sampling temperature of candidate solutions",
    "execution_timeout": "seconds per test execution in the sandbox",
    "max_test_mb": "largest test input a generator may write, and largest output a candidate may "
    "print on one test (MB); generated inputs are kept in files, not in the task row",
    "generator_output_mb": "everything one generator run may write, all test files together "
    "(MB; the default holds D.2's largest suites, 27 tests, at the document's stress sizes with "
    "room to spare). The run's output is streamed to a file, not held in memory here; in the "
    "sandbox its files and its stdout (a memory file) count as memory, so the run's memory "
    "limit is max(memory_mb, 1024) + this + max_test_mb. The files must fit the sandbox's /tmp "
    "together (256 MiB per submission on bwrap; docker's is the run's memory limit)",
    "memory_mb": "memory limit per execution",
    "sample_seed": "seed of the subtree sampling and the style draw",
    "measure_kept": "BenchForge: measure every accepted problem with the campaign's panel "
    "(J models x K attempts, as BenchEvolver does), so the gate reads its pass@1",
    "measure_k": "BenchForge: K attempts per panel model when measuring accepted problems, "
    "unless a panel member sets its own",
    "difficulty_estimate": "B.3 done differently: ask a judge model for a Codeforces-style rating "
    "of every accepted task (one call per task; a model-judged rating, not the document's "
    "fine-tuned classifier), calibrated on the campaign page against the panel's pass@1",
    "difficulty_judge": "name of the model endpoint that rates difficulty; empty: the generator "
    "endpoint",
}


# Where each default comes from: the section, appendix or table of the X-Coder paper (seed
# document 003) that gives the value, or PROJECT. The document gives no number of rounds, tasks
# or sampled features, no style shares (only "Codeforces-style as the predominant format"), no
# temperatures, limits or seeds besides the generator's; it compares both test methods (its
# Table 5) and both weightings (E.2) without making one the default.
SETTING_SOURCES = {
    "evolution_rounds": PROJECT,
    "evolution_scope": "Figure 2, B.1: evolve, then merge",
    "num_tasks": PROJECT,
    "subtree_leaves": PROJECT,
    "subtree_categories": PROJECT,
    "min_selected_features": PROJECT,
    "style_mix": PROJECT,
    "min_statement_words": "C.1",
    "min_samples": "B.2.2 prompt",
    "test_mode": PROJECT,
    "prompt_test_count": "D.1",
    "generator_seed": "D.2",
    "candidates": "E.3, E.4: n = 8",
    "candidates_per_endpoint": PROJECT,
    "think_tags": "C.1 (i)",
    "min_candidates": PROJECT,
    "max_solution_tokens": "C.1 (iv)",
    "weighting": PROJECT,
    "holdout_fraction": "§2 (iv), step 2",
    "split_seed": PROJECT,
    "near_duplicate_threshold": PROJECT,
    "temperature": PROJECT,
    "solver_temperature": PROJECT,
    "execution_timeout": PROJECT,
    "max_test_mb": PROJECT,
    "generator_output_mb": PROJECT,
    "memory_mb": PROJECT,
    "sample_seed": PROJECT,
    "measure_kept": PROJECT,
    "measure_k": PROJECT,
    "difficulty_estimate": PROJECT,
    "difficulty_judge": PROJECT,
}


@dataclass(frozen=True)
class XcoderSettings(AlgorithmSettings):
    UNKNOWN_MESSAGE = "unknown setting {key!r}"
    HELP = SETTING_HELP
    SOURCES = SETTING_SOURCES
    # It counts words and punctuation marks, not tokens (C.1's unit).
    RENAMED = {"min_statement_tokens": "min_statement_words"}

    evolution_rounds: int = 1
    evolution_scope: str = "seed"
    num_tasks: int = 4
    subtree_leaves: int = 8
    subtree_categories: int = 3
    min_selected_features: int = 2
    style_mix: dict = field(default_factory=default_style_mix)
    min_statement_words: int = 200
    min_samples: int = 2
    test_mode: str = "generator"
    prompt_test_count: int = 15
    generator_seed: int = 42
    candidates: int = 8
    candidates_per_endpoint: int = 0
    think_tags: str = "required"
    min_candidates: int = 3
    max_solution_tokens: int = 25000
    weighting: str = "semantic"
    holdout_fraction: float = 0.5
    split_seed: int = 42
    near_duplicate_threshold: float = 0.6
    temperature: float = 0.8
    solver_temperature: float = 0.8
    execution_timeout: float = 6.0
    max_test_mb: int = 16
    generator_output_mb: int = 256
    memory_mb: int = 512
    sample_seed: int = 42
    measure_kept: bool = True
    measure_k: int = 4
    # Off by default: one more model call per accepted task, and the rating is a model's
    # judgement, not the document's classifier (engine/difficulty.py).
    difficulty_estimate: bool = False
    difficulty_judge: str = ""

    _BOUNDS = {
        "evolution_rounds": (0, 5),
        "num_tasks": (1, 10000),
        "subtree_leaves": (2, 64),
        "subtree_categories": (1, 6),
        "min_statement_words": (1, 5000),
        "min_samples": (0, 10),
        "prompt_test_count": (1, 100),
        "candidates": (2, 128),
        "candidates_per_endpoint": (0, 32),
        "max_test_mb": (1, 256),
        "min_candidates": (2, 128),
        "max_solution_tokens": (100, 200000),
        "temperature": (0.0, 2.0),
        "solver_temperature": (0.0, 2.0),
        "memory_mb": (16, 8192),
        "measure_k": (1, 64),
    }

    def validate(self, errors: dict[str, list[str]]) -> None:
        """The rules bounds cannot say: open intervals, choices, the style mix, selected
        features within the sampled leaves, and the generator's output above one test's."""

        found: dict[str, list[str]] = {}

        def need(ok: bool, key: str, message: str) -> None:
            if not ok:
                found.setdefault(key, []).append(message)

        need(
            1 <= self.min_selected_features <= self.subtree_leaves,
            "min_selected_features",
            "must be between 1 and subtree_leaves",
        )
        mix = self.style_mix
        if not isinstance(mix, dict) or set(mix) - set(STYLES):
            need(False, "style_mix", f"keys must be among {', '.join(STYLES)}")
        else:
            bad = [k for k, v in mix.items() if not isinstance(v, int | float) or v < 0]
            need(not bad, "style_mix", "percentages must be non-negative numbers")
            need(sum(mix.values()) > 0, "style_mix", "at least one style needs a positive share")
        need(self.test_mode in TEST_MODES, "test_mode", f"one of {', '.join(TEST_MODES)}")
        need(self.weighting in WEIGHTINGS, "weighting", f"one of {', '.join(WEIGHTINGS)}")
        need(
            self.evolution_scope in EVOLUTION_SCOPES,
            "evolution_scope",
            f"one of {', '.join(EVOLUTION_SCOPES)}",
        )
        need(self.think_tags in THINK_TAGS, "think_tags", f"one of {', '.join(THINK_TAGS)}")
        need(
            self.max_test_mb <= self.generator_output_mb <= GENERATOR_OUTPUT_MAX_MB,
            "generator_output_mb",
            f"between max_test_mb and {GENERATOR_OUTPUT_MAX_MB}",
        )
        need(0 < self.holdout_fraction < 1, "holdout_fraction", "must be strictly between 0 and 1")
        need(0 < self.near_duplicate_threshold <= 1, "near_duplicate_threshold", "in (0, 1]")
        need(0 < self.execution_timeout <= 60, "execution_timeout", "in (0, 60] seconds")
        # A key that did not parse keeps its default meanwhile: its own error says enough.
        for key, messages in found.items():
            if key not in errors:
                errors[key] = messages

    def samples_per_endpoint(self, endpoints: int) -> list[int]:
        """Candidates asked of each of ``endpoints`` solver endpoints (in their order):
        ``candidates_per_endpoint`` each when set, else ``candidates`` (n) spread as evenly as
        possible, the first endpoints taking one more when n does not divide."""
        if endpoints <= 0:
            return []
        if self.candidates_per_endpoint:
            return [self.candidates_per_endpoint] * endpoints
        base, extra = divmod(self.candidates, endpoints)
        return [base + (i < extra) for i in range(endpoints)]
