"""Kinds are discovered from ``<app>/kind.py``; the evolution app's own method is BenchEvolver."""

from evolution.benchevolver import kind as benchevolver_kind  # noqa: F401 - registers it
