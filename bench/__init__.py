"""Benchmarks: `make bench` runs every bench/bench_*.py and prints one table per benchmark.

A benchmark module defines ``NAME`` and ``run(args) -> list[dict]``; each dict is a table row.
A row may carry ``ratio`` (ours / baseline, both measured in the same run) and ``target``.
"""
