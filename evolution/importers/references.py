"""What an import does with the reference solutions its records bring (docs/importing.md,
"Reference solutions").

A reference is data, and an import never loses one without saying so:

- A problem that already has a reference keeps it unless the import is told to replace
  references (``replace_references``): a re-import without the solutions file, or from another
  set, leaves references from a solutions file or adopted from calibration in place.
- With ``replace_references`` the import's reference wins: a different one replaces the stored
  one, and none drops it. Each replaced, dropped or kept-against-the-import reference is a
  ``ReferenceNote`` of the report, one per problem.
- A reference the import would store (from a solutions file or the record itself) is first run
  on the record's own tests, public and private, in the sandbox, with the record's harness,
  entry point, limits and output comparison. One that fails any test is refused, naming that
  test, and the problem is imported without it (or keeps the one it had); the rest of the
  import stands. The references of a batch of records are judged as one workload.

The project's own JSONL (``jsonl``) is BenchForge's export: its references are stored as the
lines give them, with their provenance, without being run again.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from evolution.models.problems import describe_reference_provenance

from .errors import SeedImportError

KEPT, REPLACED, DROPPED, REFUSED = "kept", "replaced", "dropped", "refused"
ACTIONS = (KEPT, REPLACED, DROPPED, REFUSED)
_VERDICT_WORDS = {
    "WA": "wrong answer",
    "TLE": "time limit exceeded",
    "MLE": "memory limit exceeded",
    "OLE": "output limit exceeded",
    "RE": "runtime error",
    "CE": "does not compile or load",
}
DETAIL_CHARS = 300
# References that passed exactly these tests, harness, limits and comparison in this process
# are not run again (HumanEval's 164 are imported once per test world): digest -> "n/n".
_PASSED: dict[str, str] = {}
_PASSED_MAX = 20_000


@dataclass(frozen=True)
class ReferenceNote:
    """What became of one problem's reference, when it was not simply stored or left alone.

    ``offered``: the provenance of the import's reference ({} when the import gives none);
    ``previous``: the provenance of the reference the problem had ({} when none); ``test``:
    the failing test of a refused reference ("public test #0", "private test medium #3")."""

    origin_id: str
    public_id: str
    title: str
    action: str
    detail: str = ""
    test: str = ""
    offered: dict = field(default_factory=dict)
    previous: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.origin_id or self.public_id} ({self.title})"

    def __str__(self) -> str:
        offered = describe_reference_provenance(self.offered)
        previous = describe_reference_provenance(self.previous)
        if self.action == REFUSED:
            text = f"{self.name}: reference refused ({offered}): {self.detail}"
            if self.previous:
                text += f"; the stored reference stays ({previous})"
            return text
        if self.action == REPLACED:
            return f"{self.name}: reference replaced, was: {previous}; now: {offered}"
        if self.action == DROPPED:
            return f"{self.name}: reference dropped (was: {previous}): the import gives none"
        return (
            f"{self.name}: kept the stored reference ({previous}); the import's ({offered}) "
            "differs and was not used (--replace-references to replace it)"
        )

    def to_dict(self) -> dict:
        return {
            "origin_id": self.origin_id,
            "public_id": self.public_id,
            "title": self.title,
            "action": self.action,
            "detail": self.detail,
            "test": self.test,
            "offered": self.offered,
            "offered_origin": describe_reference_provenance(self.offered) if self.offered else "",
            "previous": self.previous,
            "previous_origin": describe_reference_provenance(self.previous)
            if self.previous
            else "",
        }


@dataclass
class _Pending:
    """One record of a batch and what its reference needs."""

    line: int
    record: dict
    problem: object | None  # the stored problem the record updates, if any
    offered_code: str
    offered: dict
    judge: bool = False


class ReferenceLedger:
    """Decides, batch by batch, which reference each record stores (see the module's doc)
    and keeps the notes and counts for the report."""

    def __init__(self, *, replace: bool, verify: bool):
        self.replacing = replace
        self.verify = verify
        self.notes: list[ReferenceNote] = []
        self.counts = dict.fromkeys(ACTIONS, 0)
        self._noted: dict[int, int] = {}

    def stored(self, record: dict, public_id: str) -> None:
        """The record was written as problem ``public_id``: its note (if any) names it."""
        index = self._noted.pop(id(record), None)
        if index is not None:
            self.notes[index] = replace(self.notes[index], public_id=public_id)

    def settle(self, batch: list[tuple[int, dict, object | None]]) -> None:
        """Set each record's ``reference_solution`` / ``reference_provenance`` to what the
        import stores for it; ``batch`` holds (line, record, stored problem or None)."""
        pending = []
        for line, record, problem in batch:
            item = _Pending(
                line=line,
                record=record,
                problem=problem,
                offered_code=record.get("reference_solution") or "",
                offered=dict(record.get("reference_provenance") or {}),
            )
            self._decide(item)
            pending.append(item)
        to_judge = [item for item in pending if item.judge]
        for item, outcome in zip(to_judge, _judge([item.record for item in to_judge]), strict=True):
            self._judged(item, outcome)

    def _decide(self, item: _Pending) -> None:
        record, problem = item.record, item.problem
        stored = problem.reference_solution if problem is not None else ""
        stored_provenance = dict(problem.reference_provenance or {}) if problem is not None else {}
        offered = item.offered_code
        if stored.strip() and offered == stored:
            # The same program: it stays with the provenance it was stored with.
            _set(record, stored, stored_provenance or item.offered)
        elif stored.strip() and not self.replacing:
            _set(record, stored, stored_provenance)
            self.counts[KEPT] += 1
            if offered.strip():
                self._note(item, KEPT, previous=stored_provenance)
        elif stored.strip() and not offered.strip():
            _set(record, "", {})
            self.counts[DROPPED] += 1
            self._note(item, DROPPED, previous=stored_provenance)
        elif not offered.strip():
            _set(record, "", {})
        elif self.verify and _judgeable(record):
            item.judge = True
        else:
            self._accept(item, item.offered)

    def _accept(self, item: _Pending, provenance: dict) -> None:
        """Store the import's reference, noting the one it replaces."""
        problem = item.problem
        _set(item.record, item.offered_code, provenance)
        if problem is not None and problem.reference_solution.strip():
            self.counts[REPLACED] += 1
            previous = dict(problem.reference_provenance or {})
            self._note(item, REPLACED, previous=previous, offered=provenance)

    def _judged(self, item: _Pending, outcome: _Outcome) -> None:
        record, problem = item.record, item.problem
        if outcome.passed:
            self._accept(item, {**item.offered, "tests_passed": outcome.passed})
            return
        if outcome.sandbox_failure:
            # Not the reference's fault: nothing is decided about it, and nothing is written.
            raise SeedImportError(
                f"the sandbox could not run the reference of {record['origin_id'] or '?'} "
                f"({outcome.detail}); nothing was written: fix the sandbox (docs/judge.md) and "
                "import again",
                line=item.line,
                field="reference_solution",
            )
        stored = problem.reference_solution if problem is not None else ""
        stored_provenance = dict(problem.reference_provenance or {}) if problem is not None else {}
        if stored.strip():
            _set(record, stored, stored_provenance)
        else:
            _set(record, "", {})
        self.counts[REFUSED] += 1
        self._note(
            item, REFUSED, previous=stored_provenance, test=outcome.test, detail=outcome.detail
        )

    def _note(self, item: _Pending, action: str, *, previous: dict, **fields) -> None:
        record = item.record
        public_id = getattr(item.problem, "public_id", "") or record.get("public_id") or ""
        fields.setdefault("offered", item.offered)
        self._noted[id(record)] = len(self.notes)
        self.notes.append(
            ReferenceNote(
                origin_id=record.get("origin_id") or "",
                public_id=public_id,
                title=record["title"],
                action=action,
                previous=previous,
                **fields,
            )
        )


def _set(record: dict, code: str, provenance: dict) -> None:
    record["reference_solution"] = code
    record["reference_provenance"] = provenance


def _judgeable(record: dict) -> bool:
    """A reference is run when the record has tests with a pass/fail verdict."""
    from evolution.sandbox.scoring import is_scored

    return bool(record["tests"]) and not is_scored(record["comparison"])


def test_name(test: dict) -> str:
    """How a refusal names a record's test: "public test #0", "private test medium #3"."""
    if test["tier"] == "public":
        return f"public test #{test['ordinal']}"
    return f"private test {test['tier']} #{test['ordinal']}"


def _jobs(records: list[dict]):
    from django.conf import settings

    from evolution import sandbox
    from evolution.sandbox.batch import JudgeJob

    for record in records:
        yield JudgeJob(
            code=record["reference_solution"],
            tests=[sandbox.TestSpec(input=t["input"], output=t["output"]) for t in record["tests"]],
            harness=record["harness"],
            limits=sandbox.Limits(
                time_s=float(record["time_limit_s"]),
                memory_mb=int(record["memory_mb"]),
                max_output_bytes=settings.SANDBOX_MAX_OUTPUT_BYTES,
            ),
            entry_point=record["entry_point"],
            comparison=record["comparison"] or {},
            stop_on_first_failure=True,
        )


class _Outcome(NamedTuple):
    """A reference's run on its record's tests: ``passed`` ("5/5") when it passed them all,
    else the failing ``test`` (when one is to blame) and what went wrong."""

    passed: str = ""
    test: str = ""
    detail: str = ""
    sandbox_failure: bool = False


def _judge(records: list[dict]) -> list[_Outcome]:
    """Each record's reference run on its tests, in one workload."""
    if not records:
        return []
    jobs = list(_jobs(records))
    digests = [_digest(job) for job in jobs]
    outcomes: list[_Outcome | None] = [
        _Outcome(passed=_PASSED[d]) if d in _PASSED else None for d in digests
    ]
    missing = [i for i, outcome in enumerate(outcomes) if outcome is None]
    results = _judge_jobs([jobs[i] for i in missing]) if missing else []
    for index, result in zip(missing, results, strict=True):
        outcomes[index] = _outcome(records[index], result)
        if outcomes[index].passed:
            if len(_PASSED) >= _PASSED_MAX:
                _PASSED.clear()
            _PASSED[digests[index]] = outcomes[index].passed
    return outcomes


def _judge_jobs(jobs: list) -> list:
    """The jobs' results: judged in this process when it can run the sandbox, else on the
    sandbox queue's workers (in the Compose stack the web and the default-queue worker, where
    the API's and the admin page's imports run, have no sandbox of their own)."""
    from django.conf import settings

    from evolution.sandbox.batch import judge_many

    if _sandbox_here() or getattr(settings, "BROKER_KIND", "") != "redis":
        return list(judge_many(jobs))
    try:
        return list(judge_many(jobs, distributed=True))
    except TimeoutError as exc:
        raise SeedImportError(
            "the references could not be run: this process has no sandbox and no sandbox "
            f"worker answered ({exc}); nothing was written",
            field="reference_solution",
        ) from exc


_SANDBOX_HERE: set[int] = set()  # the process ids whose sandbox ran the probe


def _sandbox_here() -> bool:
    """Whether this process's sandbox runs a program (probed once; a failure is not
    remembered, so a sandbox fixed meanwhile is used next time)."""
    import os

    if os.getpid() in _SANDBOX_HERE:
        return True
    from evolution import sandbox

    result = sandbox.judge(
        "print(1)",
        [sandbox.TestSpec(input="", output="1\n")],
        harness="stdio",
        limits=sandbox.Limits(time_s=20.0, memory_mb=256),
    )
    if result.verdict == "SE":
        return False
    _SANDBOX_HERE.add(os.getpid())
    return True


def _digest(job) -> str:
    return hashlib.sha256(json.dumps(job.to_dict(), sort_keys=True).encode()).hexdigest()


def _outcome(record: dict, result) -> _Outcome:
    if isinstance(result, ValueError):
        return _Outcome(detail=_clip(f"cannot be judged on the record's tests: {result}"))
    if result.verdict == "AC":
        return _Outcome(passed=f"{result.passed}/{result.total}")
    if result.verdict == "SE":
        first = next((t for t in result.tests if t.verdict == "SE"), None)
        text = first.diff if first is not None else result.compile_error
        return _Outcome(detail=_clip(f"sandbox failure: {text}"), sandbox_failure=True)
    if result.verdict == "CE":
        return _Outcome(detail=_clip(f"does not compile or load: {result.compile_error}"))
    index = next((i for i, t in enumerate(result.tests) if t.verdict != "AC"), None)
    if index is None or index >= len(record["tests"]):
        return _Outcome(
            detail=f"failed ({result.verdict}, {result.passed}/{result.total} tests passed)"
        )
    failing = result.tests[index]
    test = test_name(record["tests"][index])
    words = _VERDICT_WORDS.get(failing.verdict, failing.verdict)
    detail = re.sub(r"^wrong answer:?\s*", "", failing.diff or "", flags=re.IGNORECASE)
    return _Outcome(
        test=test,
        detail=_clip(f"{words} on {test}" + (f": {detail}" if detail.strip() else "")),
    )


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= DETAIL_CHARS else text[: DETAIL_CHARS - 1] + "…"
