"""Problem formulations c = (O, C_I, C_O) and the three mutation operators.

O is the computational goal, C_I the admissible inputs, C_O the constraints on valid outputs.
An open-ended mutation turns a formulation with a cheap exact answer into one with no cheap
optimum certificate but a continuous quality score. Parsing a model's answer never raises: a
bad answer becomes a ``ParseProblem`` the caller records as a rejection reason.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from evolution.llm import ParseError, extract_json

# operator -> (which part it changes, what it means), as in the paper's table.
OPERATORS = {
    "change_goal": ("O", "change the goal: a decision or exact goal becomes a graded objective"),
    "restrict_outputs": (
        "C_O",
        "restrict the outputs: keep the goal, tighten what a valid output is",
    ),
    "generalize_inputs": (
        "C_I",
        "generalise the inputs: drop the structure that made the exact problem easy",
    ),
}
OPERATOR_ORDER = tuple(OPERATORS)


class ParseProblem(ValueError):
    """The model's answer is not usable; the message is the recorded reason."""


@dataclass(frozen=True)
class Formulation:
    goal: str  # O
    inputs: str  # C_I
    outputs: str  # C_O

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data) -> Formulation:
        if not isinstance(data, dict):
            raise ParseProblem("the formulation is not an object")
        values = {}
        for key, aliases in (
            ("goal", ("goal", "O")),
            ("inputs", ("inputs", "C_I")),
            ("outputs", ("outputs", "C_O")),
        ):
            value = next((data[a] for a in aliases if a in data), None)
            if not isinstance(value, str) or not value.strip():
                raise ParseProblem(f"the formulation has no {key} ({'/'.join(aliases)})")
            values[key] = value.strip()
        return cls(**values)


@dataclass(frozen=True)
class Mutation:
    operator: str
    formulation: Formulation
    title: str
    statement: str
    direction: str  # "max" | "min"
    objective: str  # what is measured, in words

    def to_dict(self) -> dict:
        return {**asdict(self), "formulation": self.formulation.to_dict()}


def _json(text: str) -> dict:
    try:
        return extract_json(text)
    except ParseError as exc:
        raise ParseProblem(f"no JSON object in the answer: {exc}") from None


def parse_formulation(text: str) -> Formulation:
    return Formulation.from_dict(_json(text))


def parse_mutation(text: str, *, operator: str, parent: Formulation) -> Mutation:
    """The mutated candidate. The operator must have changed its own part of the formulation
    (an answer that changes nothing is not a mutation)."""
    if operator not in OPERATORS:
        raise ValueError(f"unknown mutation operator {operator!r}")
    data = _json(text)
    formulation = Formulation.from_dict(data.get("formulation"))
    part = {"O": "goal", "C_I": "inputs", "C_O": "outputs"}[OPERATORS[operator][0]]
    if getattr(formulation, part) == getattr(parent, part):
        raise ParseProblem(f"operator {operator} left {OPERATORS[operator][0]} unchanged")
    direction = str(data.get("direction", "")).strip().lower()
    if direction in ("maximize", "maximise"):
        direction = "max"
    if direction in ("minimize", "minimise"):
        direction = "min"
    if direction not in ("max", "min"):
        raise ParseProblem(f"direction must be max or min, got {data.get('direction')!r}")
    statement = data.get("statement")
    title = data.get("title")
    if not isinstance(statement, str) or len(statement.strip()) < 40:
        raise ParseProblem("the statement is missing or too short")
    if not isinstance(title, str) or not title.strip():
        raise ParseProblem("the candidate has no title")
    return Mutation(
        operator=operator,
        formulation=formulation,
        title=title.strip()[:300],
        statement=statement.strip(),
        direction=direction,
        objective=str(data.get("objective", "")).strip()[:500],
    )


def scoring_rule(direction: str, objective: str) -> str:
    """The scoring rule as it appears in every open-ended statement (reviewers and solvers
    read the same text)."""
    goal = "maximise" if direction == "max" else "minimise"
    measured = f" ({objective})" if objective else ""
    return (
        "## Scoring\n\n"
        f"This is an optimisation problem: {goal} the objective{measured}. Any feasible "
        "output is accepted; its quality decides the score. On each test, with O(s) your "
        "objective and O(b) the baseline solution's, the score is "
        f"max(0, {'+' if direction == 'max' else '-'}(O(s) - O(b)) / max(O(s), O(b))), "
        "between 0 and 1. A crash, a timeout, an unparsable or an infeasible output scores "
        "0. The problem's score is the mean over its tests.\n"
    )
