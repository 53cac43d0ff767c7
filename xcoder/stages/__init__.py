"""X-Coder's stages, database side (SynthSmith, seed document 003): one module per stage the kind
declares in ``xcoder/kind.py`` (``extract``, ``evolve_seed``, ``merge``, ``evolve``,
``close_tree``, ``plan``, ``select``, ``write``, ``tests``, ``solve``, ``verify``,
``difficulty``), pure logic in
``xcoder/engine/``; ``common`` holds the step's context and the helpers several stages share,
``generate`` runs a CYaRon test generator in the sandbox and ``testfiles`` keeps large test
inputs and voted outputs in files.

One sequential stream per campaign, advanced one action at a time by
``evolution.streams.runner.advance``: the caller claims the campaign row with a conditional UPDATE
(a lease), the next action is worked out from the rows alone (``xcoder.kind.action_for``), and
its result is stored as it arrives. A worker killed at any instant loses at most the action in
flight; unique constraints (extraction per seed, node per path, evolution per round and
category, task per index, solution per endpoint and sample, problem per origin id) mean a rerun
never duplicates anything.

One action asks its independent model calls side by side (``evolution.llm.fanout``: at most
``ENGINE_FANOUT_THREADS`` at once, and no more than the endpoints' concurrency limits): the
seeds still to extract, the round's categories still to evolve, and, for the tasks, a group of
consecutive tasks that fills a few waves of generator calls (``Ctx.task_group``) passes each
stage together, so stage 1, stage 2, the test calls and every candidate of the group go out in one
step. Answers are applied in task order, never in the order they arrive, so a run with any
fan-out decides what a run asking one call at a time decides (``ENGINE_FANOUT_THREADS=1`` is
that run).

The stream: extract features from each seed -> evolve each seed's features in breadth and
depth -> merge them into the tree (or, ``evolution_scope`` "tree": merge, then evolve the tree
category by category) -> per task: sample a subtree, stage 1 (roles, selection, integration
strategy), stage 2 (stylised statement, then the statement gates and the near-duplicate check),
test inputs (prompted and/or a generator program run sandboxed), candidate solutions from every
solver endpoint (static gates), dual verification (vote, weights, hold-out) -> an accepted
``Problem(kind="synthesized", method="xcoder")`` or a discarded task with its reason -> with
``difficulty_estimate`` on, a judge model's Codeforces-style rating of every accepted task (B.3
done differently) -> the panel's measurement of the accepted problems.
"""
