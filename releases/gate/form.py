"""The gate rules as a curator edits them: a form with one field per rule, and the same rules
as JSON (the advanced view).

The form is built from ``GateRules``' dataclass fields, so a rule added there appears here
with its default, its type and its range without more work; its label and help come from
``HELP`` below, else from the field's ``metadata["help"]``, else from its name. Whatever the
curator sends, ``GateRules.from_dict`` has the last word and its error lands on the field it
names. ``parse_rules_json`` reads the advanced view and names the line and column of an
error (a JSON syntax error, a key given twice, a rule ``from_dict`` refuses).
"""

from __future__ import annotations

import json
import re
import types
import typing
from dataclasses import MISSING, dataclass, fields

from django import forms

from . import GateRules, RulesError

# Label and help per rule. A rule without an entry still gets a field (see the docstring).
HELP: dict[str, tuple[str, str]] = {
    "min_quality": (
        "Least mean review quality",
        "Evolved problems need at least this mean quality score (1-5) from their reviews.",
    ),
    "min_novelty": (
        "Least mean novelty",
        "The paper's quality-and-novelty score (1-5). Empty: not checked.",
    ),
    "reject_invalid": (
        "Reject problems judged invalid",
        "Leave out any problem the reviews judge invalid.",
    ),
    "min_reviews": (
        "Least number of reviews",
        "Submitted reviews an evolved problem needs before the gate trusts its scores.",
    ),
    "min_pass_at_1": (
        "Lowest panel pass@1 (evolved)",
        "Below it an evolved problem may be degenerate: nobody solves it.",
    ),
    "max_pass_at_1": (
        "Highest panel pass@1 (evolved)",
        "Above it an evolved problem is too easy to tell strong models apart.",
    ),
    "duplicate_threshold": (
        "Near-duplicate similarity",
        "Lexical similarity (0-1) at which a problem counts as a duplicate of a seed or of "
        "an item kept before it.",
    ),
    "include_originals": (
        "Supplement with original seeds",
        "Original seed problems join the release when hard enough (the next rule).",
    ),
    "original_max_pass_at_1": (
        "Highest panel pass@1 (originals)",
        "An original seed is kept only at or below this pass@1.",
    ),
    "originals_need_review": (
        "Originals need reviews too",
        "Apply the review rules (quality, novelty, number of reviews) to original seeds.",
    ),
    "min_score_spread": (
        "Least score spread (open-ended)",
        "Open-ended problems are scored, not passed: the least spread of their sampled "
        "solutions' mean scores. Empty: not checked.",
    ),
    "exclude_model_only_hardness": (
        "Hold back model-only hardness",
        "Leave out problems experts rate easy but the panel fails (artificial difficulty).",
    ),
    "require_independent": (
        "Require the independent pass@1",
        "The difficulty rules read fresh samples of the evaluation panel (the independent "
        "evaluation). The selection-time pass@1 is biased low among the problems selection "
        "kept (the winner's curse): turning this off needs a reason below.",
    ),
    "selection_time_reason": (
        "Why the selection-time pass@1 may be read",
        "With the rule above off: the curator's reason, shown on every difficulty rule that "
        "reads a selection-time figure. Empty: such problems fail the difficulty rule.",
    ),
    "max_public_similarity": (
        "Public similarity that holds a problem back",
        "The contamination screen: an evolved or synthesized problem whose similarity to any "
        "indexed public problem (the larger of statement and code similarity, 0.2-1) reaches "
        "this is left out. Empty: the report names the nearest public problem, nothing more.",
    ),
    "max_similarity_before": (
        "Public similarity before a date",
        'A "newer than" claim: the same maximum against the public problems dated before '
        "the day below (undated ones count as older). Empty: not checked.",
    ),
    "similarity_before_date": (
        "Newer than (YYYY-MM-DD)",
        "The day the rule above compares with, e.g. a model's training cut-off.",
    ),
}


@dataclass(frozen=True)
class RuleSpec:
    name: str
    kind: str  # "bool" | "int" | "float" | "text" | "json"
    optional: bool
    default: object
    label: str
    help: str
    low: float | None = None
    high: float | None = None


def _kind(annotation) -> tuple[str, bool]:
    """(kind, optional) of a field's resolved type."""
    args = typing.get_args(annotation)
    optional = False
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        optional = type(None) in args
        rest = [a for a in args if a is not type(None)]
        annotation = rest[0] if len(rest) == 1 else object
    for python_type, kind in ((bool, "bool"), (int, "int"), (float, "float"), (str, "text")):
        if annotation is python_type:
            return kind, optional
    return "json", optional


def rule_specs() -> list[RuleSpec]:
    """Every rule of ``GateRules``, in its declaration order."""
    hints = typing.get_type_hints(GateRules)
    ranges = getattr(GateRules, "_RANGES", {})
    specs = []
    for f in fields(GateRules):
        if not f.init:
            continue
        kind, optional = _kind(hints[f.name])
        default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
        label, text = HELP.get(
            f.name,
            (f.name.replace("_", " ").capitalize(), str(f.metadata.get("help", ""))),
        )
        low, high = ranges.get(f.name, (None, None))
        specs.append(RuleSpec(f.name, kind, optional, default, label, text, low, high))
    return specs


def _shown(value) -> str:
    if value is None:
        return "empty (off)"
    if isinstance(value, bool):
        return "on" if value else "off"
    return json.dumps(value)


def _form_field(spec: RuleSpec) -> forms.Field:
    help_text = f"{spec.help} Default: {_shown(spec.default)}.".strip()
    attrs = {"data-rule": spec.name, "data-kind": spec.kind}
    common = {"label": spec.label, "help_text": help_text, "required": False}
    if spec.kind == "bool":
        return forms.BooleanField(widget=forms.CheckboxInput(attrs=attrs), **common)
    if spec.kind in ("int", "float"):
        if spec.low is not None:
            attrs["min"] = spec.low
        if spec.high is not None:
            attrs["max"] = spec.high
        attrs["step"] = "1" if spec.kind == "int" else "any"
        cls = forms.IntegerField if spec.kind == "int" else forms.FloatField
        return cls(widget=forms.NumberInput(attrs=attrs), **common)
    if spec.kind == "text":
        return forms.CharField(widget=forms.TextInput(attrs=attrs), **common)
    return forms.CharField(widget=forms.Textarea(attrs={**attrs, "rows": 2}), **common)


class GateRulesForm(forms.Form):
    """One field per rule; ``rules()`` gives the validated, complete rule set."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.specs = {s.name: s for s in rule_specs()}
        for spec in self.specs.values():
            self.fields[spec.name] = _form_field(spec)

    @classmethod
    def for_rules(cls, rules: dict) -> GateRulesForm:
        """An unbound form showing ``rules`` (defaults where a rule is missing)."""
        values = GateRules.from_dict(rules).to_dict()
        initial = {}
        for name, spec in cls().specs.items():
            value = values.get(name)
            initial[name] = json.dumps(value) if spec.kind == "json" else value
        return cls(initial=initial)

    def clean(self):
        cleaned = super().clean()
        data = {}
        for name, spec in self.specs.items():
            if name not in cleaned:
                continue  # its own error is already on the field
            value = cleaned[name]
            if spec.kind == "json" and value not in ("", None):
                try:
                    value = json.loads(value)
                except json.JSONDecodeError as exc:
                    self.add_error(name, f"not JSON: {exc.msg} (column {exc.colno})")
                    continue
            elif spec.kind in ("text", "json") and value == "":
                value = None
            if value is None and not spec.optional:
                self.add_error(name, "must not be empty")
                continue
            if value is None and spec.default is None:
                continue  # left empty = the rule's default (off): from_dict fills it in
            data[name] = value
        if not self.errors:
            try:
                self.cleaned_rules = GateRules.from_dict(data).to_dict()
            except RulesError as exc:
                self.add_error(exc.field if exc.field in self.fields else None, _reason(exc))
        return cleaned

    def rules(self) -> dict:
        return self.cleaned_rules


def _reason(exc: RulesError) -> str:
    """The message without the field name in front (the form shows it next to the field)."""
    text = str(exc)
    prefix = f"{exc.field}: "
    return text[len(prefix) :] if text.startswith(prefix) else text


class RulesJSONError(ValueError):
    """The advanced view's text is not a usable rule set; ``line`` and ``column`` start at 1."""

    def __init__(self, message: str, line: int, column: int):
        super().__init__(f"Line {line}, column {column}: {message}")
        self.line = line
        self.column = column


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def _key_positions(text: str, key: str) -> list[tuple[int, int]]:
    pattern = re.compile(r'"' + re.escape(json.dumps(key)[1:-1]) + r'"\s*:')
    return [_position(text, m.start()) for m in pattern.finditer(text)]


def parse_rules_json(text: str) -> dict:
    """The validated, complete rule set written in ``text``, or RulesJSONError."""
    seen_twice: list[str] = []

    def pairs(items):
        keys = [k for k, _ in items]
        seen_twice.extend(k for i, k in enumerate(keys) if k in keys[:i])
        return dict(items)

    try:
        data = json.loads(text or "{}", object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise RulesJSONError(f"{exc.msg}.", exc.lineno, exc.colno) from None
    if seen_twice:
        where = _key_positions(text, seen_twice[0])
        line, column = where[1] if len(where) > 1 else (1, 1)
        raise RulesJSONError(f'"{seen_twice[0]}" is given twice.', line, column)
    if not isinstance(data, dict):
        start = len(text) - len(text.lstrip())
        line, column = _position(text, start)
        raise RulesJSONError("the rules must be a JSON object, {...}.", line, column)
    try:
        return GateRules.from_dict(data).to_dict()
    except RulesError as exc:
        where = _key_positions(text, exc.field)
        line, column = where[0] if where else (1, 1)
        raise RulesJSONError(f'"{exc.field}" {_reason(exc)}.', line, column) from None
