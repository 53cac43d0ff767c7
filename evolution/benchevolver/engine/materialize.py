"""Test materialization (Section 3.2): the test generator writes one input-generator program;
it runs sandboxed per (tier, seed), and every expected output (public examples included) comes
from executing C' in the sandbox, never from a model. C' must finish every test within limits."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from evolution.judging.programs import ProgramMissing, parse_program

from . import prompts
from .types import GeneratedTest, StageError

# Seeds are recorded with each test so it can be regenerated exactly.
BASE_SEED = 1000


def generator_messages(*, statement: str, code: str, harness: str, tiers: list[str]):
    template = prompts.load("test_generator")
    messages = template.messages(
        statement=statement,
        code=code.rstrip(),
        tiers=", ".join(tiers),
        example_format=prompts.EXAMPLE_FORMATS[harness],
    )
    return messages, template


def parse_generator(text: str) -> str:
    try:
        return parse_program(text, "test generator")
    except ProgramMissing as exc:
        raise StageError(str(exc)) from None


def validator_messages(*, statement: str):
    template = prompts.load("input_validator")
    return template.messages(statement=statement), template


def parse_validator(text: str) -> str:
    try:
        return parse_program(text, "input validator")
    except ProgramMissing as exc:
        raise StageError(str(exc)) from None


def validator_verdicts(outcomes) -> list[tuple[bool, str]]:
    """(valid, message) per validator run: valid only on exit 0 with a first word OK."""
    verdicts = []
    for outcome in outcomes:
        words = outcome.stdout.strip().split(None, 1) if outcome.status == "OK" else []
        ok = bool(words) and words[0].upper() == "OK"
        message = outcome.stdout.strip()[:200] if outcome.status == "OK" else outcome.status
        verdicts.append((ok, "" if ok else message or "no verdict printed"))
    return verdicts


@dataclass
class Materialized:
    public: list[GeneratedTest]
    hidden: list[GeneratedTest]
    notes: list[str]
    # Inputs the statement's validator refused: dropped, each {"tier", "seed", "why"}.
    invalid_inputs: list[dict] = field(default_factory=list)
    generated: int = 0

    @property
    def all(self) -> list[GeneratedTest]:
        return self.public + self.hidden


def materialize(
    *,
    code: str,
    generator: str,
    examples: list[str],
    harness: str,
    entry_point: str,
    tier_counts: dict[str, int],
    limits,
    run_batch: Callable,
    validate_inputs: Callable[[list[str]], list[tuple[bool, str]]] | None = None,
    min_distinct_per_tier: int = 0,
) -> Materialized:
    """Generate hidden inputs, then run C' on public and hidden inputs to get every output.

    A generator that ignores its seed (fewer than ``min_distinct_per_tier`` distinct inputs
    in a tier that asked for that many) fails like a crashing one. ``validate_inputs`` (the
    statement's input validator) judges every generated input; refused ones are dropped and
    reported in ``invalid_inputs``.

    Raises StageError (candidate invalid) when the generator fails, produces nothing, or C'
    does not finish a test within the limits.
    """
    generator_sha = hashlib.sha256(generator.encode()).hexdigest()[:16]
    notes: list[str] = []
    hidden: list[GeneratedTest] = []
    seen: set[str] = set(examples)
    generated = 0
    for tier, count in tier_counts.items():
        tier_texts: set[str] = set()
        for index in range(count):
            seed = BASE_SEED + index
            outcome = run_batch(
                generator,
                [""],
                harness="stdio",
                limits=limits,
                argv=["--tier", tier, "--seed", str(seed)],
            )[0]
            if outcome.status != "OK":
                raise StageError(
                    f"test generator failed on tier {tier} seed {seed}: {outcome.status} {outcome.stderr[-300:]}".strip()
                )
            text = outcome.stdout if outcome.stdout.endswith("\n") else outcome.stdout + "\n"
            if not text.strip():
                raise StageError(f"test generator printed nothing for tier {tier} seed {seed}")
            generated += 1
            tier_texts.add(text)
            if text in seen:
                notes.append(f"duplicate input dropped (tier {tier}, seed {seed})")
                continue
            seen.add(text)
            hidden.append(
                GeneratedTest(
                    tier=tier,
                    input=text,
                    hidden=True,
                    provenance={"generator": generator_sha, "tier": tier, "seed": seed},
                )
            )
        wanted = min(count, min_distinct_per_tier)
        if wanted >= 2 and len(tier_texts) < wanted:
            raise StageError(
                f"test generator ignores its seed: tier {tier} gave {len(tier_texts)} distinct "
                f"input(s) for {count} seeds (at least {wanted} required)"
            )
    invalid: list[dict] = []
    if validate_inputs is not None and hidden:
        kept = []
        for test, (ok, why) in zip(hidden, validate_inputs([t.input for t in hidden]), strict=True):
            if ok:
                kept.append(test)
            else:
                invalid.append(
                    {"tier": test.tier, "seed": test.provenance.get("seed"), "why": why[:200]}
                )
        hidden = kept
    if not hidden:
        raise StageError("test generator produced no usable hidden test")
    public = [
        GeneratedTest(tier="public", input=e, hidden=False, provenance={"source": "writer example"})
        for e in examples
    ]
    tests = public + hidden
    outcomes = run_batch(
        code, [t.input for t in tests], harness=harness, limits=limits, entry_point=entry_point
    )
    for test, outcome in zip(tests, outcomes, strict=True):
        if outcome.status != "OK":
            where = f"{test.tier} test" + (
                f" seed {test.provenance.get('seed')}" if test.hidden else ""
            )
            raise StageError(
                f"reference solution {outcome.status} on {where}: {outcome.stderr[-300:]}".strip()
            )
        test.output = outcome.stdout
    return Materialized(
        public=public, hidden=hidden, notes=notes, invalid_inputs=invalid, generated=generated
    )
