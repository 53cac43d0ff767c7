"""Test materialization (Section 3.2): the test generator writes one input-generator program;
it runs sandboxed per (tier, seed), and every expected output (public examples included) comes
from executing C' in the sandbox, never from a model. C' must finish every test within limits.

The tests take the form the task's harness runs (its harness E is its seed's): stdin text and
printed output (stdio), a call's JSON arguments and JSON return value (function), or, for the
assert harness (HumanEval, SciCode), an assertion program per generated call whose
``check(candidate)`` compares the entry point's return value with the one C' returned, under
the task's output contract (``assertion_program``); C' must pass each of them."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from evolution.judging.programs import ProgramMissing, parse_program
from evolution.sandbox import contracts

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


ASSERTION_PROGRAM = """\
# A generated test: {entry}(*arguments) must return the value the task's reference returned
# ({rule}). The assert harness runs this program beside the solution, then calls
# check({entry}).
import json as _bf_json
import math as _bf_math
from collections import Counter as _bf_Counter

_BF_ARGUMENTS = {arguments!r}
_BF_EXPECTED = {expected!r}
_BF_MODE = {mode!r}
_BF_REL_TOL = {rel_tol!r}
_BF_ABS_TOL = {abs_tol!r}


def _bf_plain(value):
    if isinstance(value, tuple | list):
        return [_bf_plain(v) for v in value]
    if isinstance(value, dict):
        return {{k: _bf_plain(v) for k, v in value.items()}}
    return value


def _bf_close(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return _bf_math.isclose(a, b, rel_tol=_BF_REL_TOL, abs_tol=_BF_ABS_TOL)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_bf_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_bf_close(a[k], b[k]) for k in a)
    return a == b


def _bf_same(actual, expected):
    if _BF_MODE == "float":
        return _bf_close(actual, expected)
    if _BF_MODE == "unordered" and isinstance(actual, list) and isinstance(expected, list):
        def canon(values):
            return _bf_Counter(_bf_json.dumps(v, sort_keys=True) for v in values)

        return canon(actual) == canon(expected)
    return actual == expected


def check(candidate):
    arguments = [_bf_json.loads(line) for line in _BF_ARGUMENTS.split("\\n") if line.strip()]
    expected = _bf_json.loads(_BF_EXPECTED)
    actual = _bf_json.loads(_bf_json.dumps(_bf_plain(candidate(*arguments))))
    assert _bf_same(actual, expected), (
        "{entry} returned " + _bf_json.dumps(actual)[:300] + ", expected " + _BF_EXPECTED[:300]
    )
"""

RULES = {
    "exact": "compared as JSON values",
    "float": "numbers compared within the stated tolerance",
    "unordered": "a list compared in any order",
}


def assertion_program(arguments: str, expected: str, *, entry_point: str, comparison: dict) -> str:
    """The assert harness's test for one call: ``arguments`` one JSON value per line (as the
    function harness reads them), ``expected`` the JSON value C' returned, compared as the
    function harness compares return values under ``comparison`` (the contract's)."""
    mode = (comparison or {}).get("mode") or "exact"
    if mode not in RULES:
        mode = "exact"
    return ASSERTION_PROGRAM.format(
        entry=entry_point,
        rule=RULES[mode],
        arguments=arguments,
        expected=expected,
        mode=mode,
        rel_tol=float((comparison or {}).get("rel_tol", contracts.DEFAULT_TOLERANCE)),
        abs_tol=float((comparison or {}).get("abs_tol", contracts.DEFAULT_TOLERANCE)),
    )


def example_pair(test: GeneratedTest | dict) -> tuple[str, str]:
    """(input, output) of a test as a statement shows it: for an assertion program, the call's
    arguments and the value C' returned."""
    data = test.to_dict() if isinstance(test, GeneratedTest) else test
    call = (data.get("provenance") or {}).get("call")
    if call:
        return call["arguments"], call["returns"]
    return data["input"], data.get("output", "")


@dataclass
class GeneratorRun:
    """One run of the test generator (``--tier T --seed N``): how it ended and, when it ended
    OK, the input it wrote (streamed to a file, bounded by the test-size limit, then read back)."""

    status: str
    text: str = ""
    stderr: str = ""


class MaterializeError(StageError):
    """Materialization failed; ``counts`` says how far it got (the statement's public examples
    and the hidden inputs kept before it stopped), for the ledger."""

    def __init__(self, reason: str, *, public: int, hidden: int, generated: int):
        super().__init__(reason)
        self.counts = {"public": public, "hidden": hidden, "generated": generated}


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
    generate: Callable[[str, int], GeneratorRun],
    max_test_bytes: int,
    validate_inputs: Callable[[list[str]], list[tuple[bool, str]]] | None = None,
    min_distinct_per_tier: int = 0,
    comparison: dict | None = None,
) -> Materialized:
    """Generate hidden inputs, then run C' on public and hidden inputs to get every output.

    ``generate(tier, seed)`` runs the generator once; what it writes is a test input, bounded
    by the test-size limit ``max_test_bytes`` (``MAX_TEST_BYTES``), never by the captured
    output of a program run (``max_output_bytes``). A generator that ignores its seed (fewer
    than ``min_distinct_per_tier`` distinct inputs in a tier that asked for that many) fails
    like a crashing one. ``validate_inputs`` (the statement's input validator) judges every
    generated input; refused ones are dropped and reported in ``invalid_inputs``.

    For the assert harness the outputs come from calling C' as the function harness does, and
    each test becomes an assertion program comparing under ``comparison`` (the contract's), run
    once more on C' under the assert harness.

    Raises MaterializeError (candidate invalid; its counts say how far it got) when the
    generator fails, writes more than ``max_test_bytes``, produces nothing, or C' does not
    finish a test within the limits (or fails its own assertion program).
    """
    generator_sha = hashlib.sha256(generator.encode()).hexdigest()[:16]
    notes: list[str] = []
    hidden: list[GeneratedTest] = []
    # Inputs are told apart by digest: a large one is held once, in its test.
    seen: set[str] = {_digest(e) for e in examples}
    generated = 0

    def failed(reason: str) -> MaterializeError:
        return MaterializeError(
            reason, public=len(examples), hidden=len(hidden), generated=generated
        )

    for tier, count in tier_counts.items():
        tier_texts: set[str] = set()
        for index in range(count):
            seed = BASE_SEED + index
            run = generate(tier, seed)
            if run.status == "OLE":
                raise failed(
                    f"test generator wrote more than MAX_TEST_BYTES ({max_test_bytes} bytes) "
                    f"on tier {tier} seed {seed}"
                )
            if run.status != "OK":
                raise failed(
                    f"test generator failed on tier {tier} seed {seed}: {run.status} {run.stderr[-300:]}".strip()
                )
            text = run.text if run.text.endswith("\n") else run.text + "\n"
            if not text.strip():
                raise failed(f"test generator printed nothing for tier {tier} seed {seed}")
            generated += 1
            digest = _digest(text)
            tier_texts.add(digest)
            if digest in seen:
                notes.append(f"duplicate input dropped (tier {tier}, seed {seed})")
                continue
            seen.add(digest)
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
            raise failed(
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
        raise failed("test generator produced no usable hidden test")
    public = [
        GeneratedTest(tier="public", input=e, hidden=False, provenance={"source": "writer example"})
        for e in examples
    ]
    tests = public + hidden
    # An assertion task's outputs are the values C' returns for each call.
    calls = "function" if harness == "assert" else harness
    outcomes = run_batch(
        code, [t.input for t in tests], harness=calls, limits=limits, entry_point=entry_point
    )
    for test, outcome in zip(tests, outcomes, strict=True):
        if outcome.status == "OLE":
            # Every program judged on the test is held to the same cap: an expected output
            # longer than it could never be matched.
            raise failed(
                f"reference solution printed more than max_output_bytes "
                f"({limits.max_output_bytes} bytes) on {_where(test)}"
            )
        if outcome.status != "OK":
            raise failed(
                f"reference solution {outcome.status} on {_where(test)}: {outcome.stderr[-300:]}".strip()
            )
        test.output = outcome.stdout
    if harness == "assert":
        try:
            _as_assertion_programs(
                tests,
                code=code,
                entry_point=entry_point,
                comparison=comparison or {},
                limits=limits,
                run_batch=run_batch,
            )
        except StageError as exc:
            raise failed(exc.reason) from None
    return Materialized(
        public=public, hidden=hidden, notes=notes, invalid_inputs=invalid, generated=generated
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _where(test: GeneratedTest) -> str:
    return f"{test.tier} test" + (f" seed {test.provenance.get('seed')}" if test.hidden else "")


def _as_assertion_programs(tests, *, code, entry_point, comparison, limits, run_batch) -> None:
    """Turn each (arguments, returned value) test into the assert harness's assertion program,
    keeping the call in its provenance, and check that C' passes every one of them under that
    harness (its own namespace: no LiveCodeBench prelude there)."""
    for test in tests:
        if test.output.startswith('{"__unserializable__"'):
            raise StageError(
                f"reference solution returns a value that is not JSON on {_where(test)}: "
                f"{test.output[:300]}"
            )
        test.provenance = {
            **test.provenance,
            "call": {"arguments": test.input, "returns": test.output},
        }
        test.input = assertion_program(
            test.input, test.output, entry_point=entry_point, comparison=comparison
        )
        test.output = ""
    outcomes = run_batch(
        code, [t.input for t in tests], harness="assert", limits=limits, entry_point=entry_point
    )
    for test, outcome in zip(tests, outcomes, strict=True):
        if outcome.status != "OK":
            raise StageError(
                f"reference solution {outcome.status} on its own assertion program "
                f"({_where(test)}): {outcome.stderr[-300:]}".strip()
            )
