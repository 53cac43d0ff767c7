"""BenchEvolver's stages, database side: Algorithm 1 as durable state transitions.

One module per stage, named as the pure logic it drives in ``engine/`` is: ``calibrate``
(the seed's level), ``propose``, ``materialize``, ``validate`` (votes, hidden check,
faithfulness, repair), ``difficulty`` (the panel's attempts), ``judge`` and ``accept`` (the
decision); ``common`` holds the step's context and the helpers they share. Which stage runs
next, and on which queue, is declared in ``evolution/benchevolver/kind.py``.

Every step (``evolution.benchevolver.services.lineage_advance``) claims one lineage with a
conditional UPDATE (a lease), works out the next action from the rows alone, performs it, and
stores the result. A worker killed at any instant loses at most the action in flight: model
answers and verdicts are written as they arrive, and unique constraints make a rerun skip what
exists, so no candidate, solver attempt or accepted problem is ever duplicated.

Actions are either model-bound (queue ``default``) or execution-bound (queue ``sandbox``), so the
judge capacity scales on separate workers: a mixed stage is split into a model phase that stores
the answers and an execution phase that judges them.
"""
