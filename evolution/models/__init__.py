from .calls import LLMCall
from .campaigns import Campaign, Candidate, GlobalMemoryEntry, Lineage, SolverAttempt
from .endpoints import ModelEndpoint, Panel, PanelMember
from .problems import Problem, ProblemSet, TestCase
from .workstream import StepFailure

__all__ = [
    "Campaign",
    "Candidate",
    "GlobalMemoryEntry",
    "LLMCall",
    "Lineage",
    "ModelEndpoint",
    "Panel",
    "PanelMember",
    "Problem",
    "ProblemSet",
    "SolverAttempt",
    "StepFailure",
    "TestCase",
]
