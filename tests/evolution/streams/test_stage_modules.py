"""A newcomer finds stage S of method M from folder names: every declared stage of every
registered kind runs from ``<method>/stages/<S>.py`` (BenchEvolver's from
``evolution/benchevolver/stages/<S>.py``), through that module's ``act_<S>``. The one exception
is the platform's panel measurement, a stage X-Coder and EvoSyn declare from
``evolution.measurement.stage`` instead of a copy of their own (docs/layers.md)."""

from __future__ import annotations

from evolution.streams import kinds

SHARED_STAGES = {"measure_solve", "measure_judge"}
SHARED_MODULE = "evolution.measurement.stage"


def test_every_declared_stage_runs_from_the_module_named_for_it():
    registered = {kind.name: kind for kind in kinds.registered()}
    assert {"benchevolver", "reasoning", "xcoder", "evosyn", "frontiersmith"} <= set(registered)
    listing, misplaced = [], []
    for kind in registered.values():
        for stage in kind.stages:
            module = stage.run.__module__
            listing.append(f"{kind.name}: {stage.name} -> {module}.{stage.run.__name__}")
            if module == SHARED_MODULE and stage.name in SHARED_STAGES:
                continue
            if not (
                module.endswith(f".stages.{stage.name}") and stage.run.__name__.endswith(stage.name)
            ):
                misplaced.append(f"{kind.name}: {stage.name} runs {module}.{stage.run.__name__}")
    print("\n".join(listing))
    assert misplaced == []
    # BenchEvolver declares Algorithm 1's seventeen stages, each in its own file.
    assert len(registered["benchevolver"].stages) == 17
