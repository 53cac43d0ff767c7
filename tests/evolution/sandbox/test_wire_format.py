"""The fast path's outcome rows cross a process boundary: runner.py (inside the sandbox, which
imports nothing of the project) writes them and service.py (the host, which does not import the
runner on its start-up path) reads them. Each side names the columns; they must agree."""

from __future__ import annotations

from evolution.sandbox import runner, service


def test_the_host_reads_outcome_rows_in_the_columns_the_runner_writes():
    assert service.OUTCOME_FIELDS == runner.OUTCOME_FIELDS
    assert len(set(service.OUTCOME_FIELDS)) == len(service.OUTCOME_FIELDS)
