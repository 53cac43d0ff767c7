"""BenchEvolver's stages, database side: Algorithm 1 as durable state transitions.

One module per declared stage, named for it: stage S is ``stages/S.py`` and its ``act_S`` does
the work (``calibrate_solve``, ``calibrate_judge``, ``calibrate_finish``, ``skip_scored_seed``,
``skip_without_reference``, ``propose``, ``write_tests``, ``materialize``,
``validate_witnesses``, ``validate_execute``, ``repair``, ``faithfulness_solve``,
``faithfulness_execute``, ``measure_solve``, ``measure_judge``, ``judge``, ``decide``). What
stages of one step share is in ``calibration``, ``validation``, ``difficulty`` and ``accept``
(recording a decision); ``common`` holds the step's context and the helpers every stage uses.
Which stage runs next, and on which queue, is declared in ``evolution/benchevolver/kind.py``.

Every step (``evolution.benchevolver.services.lineage_advance``) claims one lineage with a
conditional UPDATE (a lease), works out the next action from the rows alone, performs it, and
stores the result. A worker killed at any instant loses at most the action in flight: model
answers and verdicts are written as they arrive, and unique constraints make a rerun skip what
exists, so no candidate, solver attempt or accepted problem is ever duplicated.

Actions are either model-bound (queue ``default``) or execution-bound (queue ``sandbox``), so the
judge capacity scales on separate workers: a mixed stage is split into a model phase that stores
the answers and an execution phase that judges them.
"""
