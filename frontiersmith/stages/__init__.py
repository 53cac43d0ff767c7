"""FrontierSmith's stages, database side: one module per stage the kind declares in
``frontiersmith/kind.py`` (``calibrate``, ``start_round``, ``extract``, ``mutate``, ``filter``,
``sample``, ``pair``, ``judged``, ``select_div``, ``build``, ``select_final``), pure logic in
``frontiersmith/engine/``; ``common`` holds the step's context and the helpers several stages
share.

One campaign is one stream of work advanced one action at a time by
``evolution.streams.runner.advance``: the caller claims the campaign row with a
conditional UPDATE (a lease), the next action is worked out from the rows alone
(``frontiersmith.kind.action_for``), and its result is stored before the lease is released.
An action asks the independent model calls of its stage side by side (``evolution.llm.fanout``,
bounded by ``ENGINE_FANOUT_THREADS`` and the endpoints' limits, up to ``fanout.STEP_WAVES``
waves): the calibration probes, the seed formulations and mutations the round's proposals need,
the filter verdicts of the proposed candidates, the missing sampled solutions and pair
judgements of the filtered ones, and a build round's test-case agent and verifier agent. Each
item's answers are stored for that item in input order (a candidate's solutions in sample
order), and unique keys (round, index), (campaign, problem) make a rerun after a crash continue
instead of duplicating.

A round: propose B candidates (seed x operator, round-robin over the pool) -> coarse filter ->
n sampled solutions -> pairwise judge (model-judged divergence) -> keep the top N_div ->
the test-case agent (generator) and the verifier agent (verifier, baseline, weak solution) run
each other's programs with tools until both accept, then the fixed-rule checks as final gate;
dropped after ``agent_rounds`` rounds or ``max_build_attempts`` failed gates ->
score vectors (execution divergence) -> keep the top N_final, which become Problems and join
the seed pool for the next round.
"""
