"""The reasoning loop's stages, database side (document 004, section 11): one module per stage the
kind declares in ``reasoning/kind.py`` (``start_run``, ``generate``, ``answer``, ``judge``,
``close_level``), pure logic in ``reasoning/engine/``; ``common`` holds the step's context and
the helpers several stages share.

The loop is one sequential stream per campaign (every question is conditioned on the questions
before it), advanced one action at a time by ``evolution.streams.runner.advance``: the
caller claims the campaign row with a conditional UPDATE (a lease), the next action is worked
out from the rows alone (``reasoning.kind.action_for``), and its result is stored. A worker
killed at any instant loses at most the action in flight; the unique (run, type, difficulty,
index) constraint means a rerun never duplicates an item, and the run state is saved after each
difficulty level.
"""
