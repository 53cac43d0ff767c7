from .calls import LLMCall
from .campaigns import Campaign
from .endpoints import ModelEndpoint, Panel, PanelMember
from .problems import Problem, ProblemSet, TestCase
from .workstream import StepFailure

__all__ = [
    "Campaign",
    "LLMCall",
    "ModelEndpoint",
    "Panel",
    "PanelMember",
    "Problem",
    "ProblemSet",
    "StepFailure",
    "TestCase",
]
