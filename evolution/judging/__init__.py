"""Judging what a model wrote, the same way for every campaign kind: the panel attempt (its
prompt, the code it answered, the verdicts pooled with infrastructure errors apart, the loop
that asks and judges the attempts), the lexical near-duplicate check, and extracting a program
from an answer. BenchEvolver's stages, the measurement of any kind's kept problems, X-Coder,
EvoSyn and the release gate all use these; no method owns them.
"""
