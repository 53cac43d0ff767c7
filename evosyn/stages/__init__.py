"""EvoSyn's stages, database side (seed document 001): one module per stage the kind declares in
``evosyn/kind.py`` (``solve``, ``write_tests``, ``execute``, ``evolve``, ``synthesize``,
``filter``), pure logic in ``evosyn/engine/``; ``common`` holds the step's context, the sandbox
budget and the helpers several stages share.

The pipeline is one sequential stream per campaign, advanced one action at a time by
``evolution.streams.runner.advance``: the caller claims the campaign row with a conditional UPDATE
(a lease), the next action is worked out from the rows alone (``evosyn.kind.action_for``), and
its result is stored as it arrives. An action asks its independent model calls side by side
(``evolution.llm.fanout``, bounded by ``ENGINE_FANOUT_THREADS`` and the endpoint's limit): an
instance's M solutions, filled up to whole waves with the next pending instances'; the next
test-writer call of every instance waiting for tests; the synthesized problems of the empty
slots, judged for near-duplicates in slot order. The strategy search stays one iteration per
action: each iteration's parent comes from the archive the previous one updated.

1. Seed instances (human-verified): M solutions, N testings (a testing is one test-writer
   answer's unit-test list), the M x N pass matrix of solutions x testings and each solution's
   verdict on the human testing (the seed's own suite).
2. Strategy search: iteration 0 scores the document's initial strategy; iterations
   1..max_iterations mutate an island's elite (MAP-Elites over islands), run the program in the
   sandbox on every seed matrix and score it by Criterion-1 and Criterion-2. A strategy that
   crashes, times out or prints garbage scores as failing, is recorded, and the search goes on.
3. Synthesis: new problems with seeds as in-context examples (near-duplicates dropped), each
   with M solutions, N testings and its matrix; the best strategy ranks them; identical-solution
   and zero-variance pruning record their reasons; a kept problem becomes
   ``Problem(kind="synthesized", method="evosyn")`` with the selected testing and the strongest
   solution, so it enters review rounds, the gate and releases like evolved problems.

A worker killed at any instant loses at most the action in flight; unique (instance, index),
(campaign, iteration) and (campaign, role, slot) constraints mean a rerun never duplicates.
"""
