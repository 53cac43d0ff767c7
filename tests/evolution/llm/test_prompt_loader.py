"""The one prompt loader every method uses."""

from __future__ import annotations

import pytest

from evolution.benchevolver.engine import prompts as benchevolver_prompts
from evolution.judging import prompts as platform_prompts
from evolution.llm.prompts import prompt_load
from evosyn.engine import prompts as evosyn_prompts
from frontiersmith.engine import prompts as frontiersmith_prompts
from reasoning.engine import prompts as reasoning_prompts
from xcoder.engine import prompts as xcoder_prompts


def test_it_reads_version_role_and_body_from_the_front_matter(tmp_path):
    (tmp_path / "ask.md").write_text("---\nversion: 3\nrole: solver\n---\n\nSolve $task\n\n")
    template = prompt_load(tmp_path, "ask", prefix="kind/")
    assert (template.name, template.version, template.role) == ("kind/ask", "3", "solver")
    assert template.render(task="it") == "Solve it\n"


def test_a_prompt_without_a_version_is_refused(tmp_path):
    (tmp_path / "bare.md").write_text("Solve $task\n")
    with pytest.raises(ValueError, match="bare has no version"):
        prompt_load(tmp_path, "bare")


@pytest.mark.parametrize(
    ("module", "name", "prefix"),
    [
        (benchevolver_prompts, "mutator", ""),
        (platform_prompts, "solver", ""),
        (reasoning_prompts, "generation", "reasoning/"),
        (xcoder_prompts, "extraction", "xcoder/"),
        (evosyn_prompts, "solution", "evosyn/"),
        (frontiersmith_prompts, "mutate", "frontiersmith/"),
    ],
)
def test_every_method_loads_its_own_prompts_through_the_one_loader(module, name, prefix):
    template = module.load(name)
    assert template == prompt_load(module.PROMPT_DIR, name, prefix=prefix)
    assert template.name == f"{prefix}{name}" and template.version
