"""Test materialization (Section 3.2): the test generator writes one input-generator program;
it runs sandboxed per (tier, seed), and every expected output (public examples included) comes
from executing C' in the sandbox, never from a model. C' must finish every test within limits."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from evolution.llm.parsing import ParseError, extract_code

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
        return extract_code(text, language="python").rstrip() + "\n"
    except ParseError as exc:
        raise StageError(f"test generator answer unparsable: {exc}")


@dataclass
class Materialized:
    public: list[GeneratedTest]
    hidden: list[GeneratedTest]
    notes: list[str]

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
) -> Materialized:
    """Generate hidden inputs, then run C' on public and hidden inputs to get every output.

    Raises StageError (candidate invalid) when the generator fails, produces nothing, or C'
    does not finish a test within the limits.
    """
    generator_sha = hashlib.sha256(generator.encode()).hexdigest()[:16]
    notes: list[str] = []
    hidden: list[GeneratedTest] = []
    seen: set[str] = set(examples)
    for tier, count in tier_counts.items():
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
    return Materialized(public=public, hidden=hidden, notes=notes)
