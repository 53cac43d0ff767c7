"""Measurement as a shared stage: any coding problem, from any kind, measured by a panel.

J panel models x K attempts from the statement alone, judged in the sandbox on the problem's
hidden tests, with BenchEvolver's attempts, verdicts, infrastructure rules and level map
(``evolution.benchevolver.engine.difficulty``, ``EvolutionSettings``). ``models`` holds the record
(``Measurement`` and its ``MeasurementAttempt`` rows; ``MeasurementBatch`` for a curator's
"measure this set"), ``panel`` asks and judges, ``services`` creates and finishes records,
``stage`` is the stage campaign kinds put in their ``kind.py`` tables, ``selectors`` is what the
gate and review read, ``tasks`` the Celery tasks.
"""
