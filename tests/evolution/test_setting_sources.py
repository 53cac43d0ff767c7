"""Where every kind's setting defaults come from: each setting names the place in its kind's
source document that gives the value, or is the project's own choice (``PROJECT``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evolution.algorithm_settings import PROJECT
from evolution.benchevolver.engine.config import EvolutionSettings
from evosyn.config import EvoSynSettings
from frontiersmith.config import FrontierSettings
from reasoning.config import ReasoningSettings
from xcoder.config import XcoderSettings

SETTINGS = [EvolutionSettings, ReasoningSettings, XcoderSettings, EvoSynSettings, FrontierSettings]

# The config names of the BenchEvolver paper's Table 5 (Appendix E), as printed there.
TABLE_5_ROWS = {
    "target_eval_k",
    "temperature",
    "timeout",
    "allowed_seed_levels",
    "accept_min_level_gain",
    "accept_target_level",
    "max_iters_per_seed",
    "max_accepted_per_seed",
    "no_improve_patience",
    "max_candidate_repairs",
    "spec_retry_attempts",
    "enable_test_repair",
    "test_repair_attempts",
    "faithfulness_check_N",
    "faithfulness_min_pass_rate",
    "faithfulness_max_repair",
    "program_gen_small_inputs",
    "program_gen_medium_inputs",
    "program_gen_large_inputs",
    "program_gen_stress_inputs",
    "execution_timeout",
    "max_output_bytes",
    "memory_raw_window",
    "memory_digest_recent_k",
    "judge_near_duplicate_check",
    "global_memory_max_entries",
    "global_memory_max_chars",
}
# The project's settings that take a Table 5 row's SciCode-column value.
SCICODE_COLUMN_OF = {
    "function_gen_inputs_per_tier": "program_gen_small_inputs",
    "function_execution_timeout": "execution_timeout",
    "function_memory_raw_window": "memory_raw_window",
    "function_global_memory_max_entries": "global_memory_max_entries",
}


@pytest.mark.parametrize("settings_class", SETTINGS, ids=lambda c: c.__name__)
def test_every_setting_declares_where_its_default_comes_from(settings_class):
    sources = settings_class.SOURCES
    # No setting without a source, no source naming a setting that does not exist.
    assert set(sources) == set(settings_class.names())
    assert all(isinstance(where, str) and where.strip() for where in sources.values())
    for name in settings_class.names():
        mark = settings_class.source(name)
        if settings_class.from_paper(name):
            assert mark == f"{settings_class.SOURCE_NAME} ({sources[name]})"
        else:
            assert mark == PROJECT == "BenchForge"


def test_benchevolver_marks_table_5_and_only_table_5_as_the_papers():
    from_paper = {n for n in EvolutionSettings.names() if EvolutionSettings.from_paper(n)}
    assert from_paper == TABLE_5_ROWS | set(SCICODE_COLUMN_OF)
    assert all(EvolutionSettings.SOURCES[n].startswith("Table 5") for n in from_paper)
    for name in SCICODE_COLUMN_OF:
        assert EvolutionSettings.source(name) == "paper (Table 5, SciCode column)"
    # Values that differ between the columns name the column the default is taken from.
    assert EvolutionSettings.source("execution_timeout") == "paper (Table 5, LCB column)"
    assert EvolutionSettings.source("faithfulness_check_N") == "paper (Table 5, SciCode column)"
    assert EvolutionSettings.source("target_eval_k") == "paper (Table 5)"
    # phi's thresholds: the paper defines phi but gives no numbers; the reuse penalty, memory
    # limit and similarity threshold have none either; the rest are BenchForge additions.
    for name in (
        "level_thresholds",
        "reused_family_extra_gain",
        "memory_mb",
        "near_duplicate_threshold",
        "reference_from_calibration",
        "infra_retry_limit",
        "level_confidence",
        "max_panel_attempts",
        "require_parent_insufficient",
        "validate_inputs",
        "min_distinct_inputs_per_tier",
    ):
        assert EvolutionSettings.source(name) == "BenchForge", name


def test_frontiersmith_marks_only_the_synthesis_setup_and_n_as_the_papers():
    from_paper = {n for n in FrontierSettings.names() if FrontierSettings.from_paper(n)}
    assert from_paper == {
        "rounds",
        "budget_candidates",
        "n_div",
        "n_final",
        "solutions_per_candidate",
    }
    for name in ("tests_per_candidate", "max_build_attempts", "min_objective_spread"):
        assert FrontierSettings.source(name) == "BenchForge"


def test_the_other_kinds_mark_what_their_documents_give():
    assert XcoderSettings.source("min_statement_words") == "paper (C.1)"
    assert XcoderSettings.source("style_mix") == "BenchForge"  # the document gives no shares
    assert EvoSynSettings.source("max_iterations") == "paper (§4.2)"
    assert EvoSynSettings.source("num_islands") == "BenchForge"  # not in the document's text
    assert ReasoningSettings.source("alpha") == "design document (§4.1)"
    assert ReasoningSettings.source("similarity_threshold") == "BenchForge"


@pytest.mark.parametrize("settings_class", SETTINGS, ids=lambda c: c.__name__)
def test_the_page_table_carries_each_defaults_source(settings_class):
    for row in settings_class.table({}):
        assert row["source"] == settings_class.source(row["name"])
        assert row["from_paper"] is settings_class.from_paper(row["name"])


ROOT = Path(__file__).resolve().parents[2]
DOCS = {
    "benchevolver.md": EvolutionSettings,
    "xcoder.md": XcoderSettings,
    "evosyn.md": EvoSynSettings,
    "frontiersmith.md": FrontierSettings,
    "reasoning.md": ReasoningSettings,
}


def documented_column(text: str, column: str) -> dict[str, str]:
    """{setting: cell of ``column``} of the rows of every markdown table whose header has a
    "setting" column and that one (the setting's name in backticks)."""
    found: dict[str, str] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if "setting" not in header or column not in header or set(cells[0]) <= {"-", " "}:
            continue
        name = cells[header.index("setting")].strip("`")
        assert name not in found, f"{name} has two rows"
        found[name] = cells[header.index(column)]
    return found


def documented_sources(text: str) -> dict[str, str]:
    return documented_column(text, "source")


@pytest.mark.parametrize("doc, settings_class", DOCS.items(), ids=list(DOCS))
def test_the_docs_settings_table_marks_each_default_as_the_code_does(doc, settings_class):
    documented = documented_sources((ROOT / "docs" / doc).read_text(encoding="utf-8"))
    assert documented == {name: settings_class.source(name) for name in settings_class.names()}


@pytest.mark.parametrize("doc, settings_class", DOCS.items(), ids=list(DOCS))
def test_the_docs_settings_table_states_each_default_as_the_code_has_it(doc, settings_class):
    import ast

    defaults = settings_class()
    documented = documented_column((ROOT / "docs" / doc).read_text(encoding="utf-8"), "default")
    assert documented, f"{doc} has no settings table with a default column"
    wrong = {}
    for name, cell in documented.items():
        value = getattr(defaults, name)
        if isinstance(value, list) and value and isinstance(value[0], dict):
            value = ", ".join(item["name"] for item in value)  # named entries: their names
        text = cell.strip("`")
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = text.replace(",", "")  # 1,000,000
        try:
            parsed = json.loads(text)
        except ValueError:
            try:
                parsed = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                parsed = text
        if isinstance(value, float | int) and not isinstance(value, bool):
            ok = isinstance(parsed, int | float) and float(parsed) == float(value)
        else:
            ok = parsed == value or str(parsed) == str(value)
        if not ok:
            wrong[name] = (cell, value)
    assert not wrong, wrong
