"""Whole workloads: many (submission, tests) jobs judged at once, results back in job order.

``judge_many`` spreads the jobs over the sandboxes of this process (``workers``, default
``SANDBOX_MAX_PARALLEL``: one per core) and, with ``distributed=True``, over every worker
consuming the ``sandbox`` Celery queue: the jobs go out in chunks as ``sandbox_judge_chunk``
tasks, each worker judges its chunk on its own cores and pushes every result to a Redis list
of the batch, and the caller yields them in job order as they arrive. Either way a result is
yielded as soon as it and every job before it are done, so a consumer can write or store
results while the rest is still running.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from . import config
from .types import JudgeResult, Limits, Record, TestSpec, TestVerdict

# How long finished results wait in Redis for their reader (a crashed caller leaves nothing).
RESULT_TTL_S = 3600
# A distributed batch gives up when nothing at all came back for this long (plus the longest
# job's time budget): no sandbox worker is consuming the queue.
CHUNK_PATIENCE_S = 120.0
# A started chunk is presumed lost when its next result is this much later than that job's
# time budget; it is then sent again, at most MAX_RESENDS times.
RESEND_GRACE_S = 30.0
MAX_RESENDS = 2


@dataclass
class JudgeJob(Record):
    """One submission and its tests: the keyword arguments of ``judge``."""

    code: str
    tests: list[TestSpec]
    harness: str
    limits: Limits = field(default_factory=Limits)
    entry_point: str = ""
    comparison: dict | None = None
    stop_on_first_failure: bool = False
    isolation: str | None = None

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "tests": [[t.input, t.output] for t in self.tests],
            "harness": self.harness,
            "limits": [self.limits.time_s, self.limits.memory_mb, self.limits.max_output_bytes],
            "entry_point": self.entry_point,
            "comparison": self.comparison,
            "stop_on_first_failure": self.stop_on_first_failure,
            "isolation": self.isolation,
        }

    @classmethod
    def from_dict(cls, data: dict) -> JudgeJob:
        time_s, memory_mb, max_output = data["limits"]
        return cls(
            code=data["code"],
            tests=[TestSpec(input=i, output=o) for i, o in data["tests"]],
            harness=data["harness"],
            limits=Limits(time_s=time_s, memory_mb=memory_mb, max_output_bytes=max_output),
            entry_point=data.get("entry_point") or "",
            comparison=data.get("comparison"),
            stop_on_first_failure=bool(data.get("stop_on_first_failure")),
            isolation=data.get("isolation"),
        )


def _judge_one(job: JudgeJob, backend=None, **grouped) -> JudgeResult | ValueError:
    """A job's result; a bad job (ValueError from ``judge``) is returned, not raised, so that
    one malformed job never stops the batch. ``grouped``: ``group`` and ``more`` for a job
    judged in a group's sandbox."""
    from .service import judge

    try:
        return judge(
            job.code,
            job.tests,
            harness=job.harness,
            limits=job.limits,
            entry_point=job.entry_point,
            comparison=job.comparison,
            stop_on_first_failure=job.stop_on_first_failure,
            isolation=job.isolation,
            backend=backend,
            **grouped,
        )
    except ValueError as exc:
        return exc


def _groupable(job: JudgeJob) -> bool:
    """Whether a job may share a group's sandbox: one that would not be split over several
    sandboxes (see service.MIN_SHARD) and has no checker (a checker runs in a sandbox of its
    own, which a group holding this process's slots could wait for)."""
    from .service import MIN_SHARD

    return len(job.tests) < 2 * MIN_SHARD and not (job.comparison or {}).get("checker")


def _runs(jobs: Iterable[JudgeJob], width: int, size: int) -> Iterator[list[JudgeJob]]:
    """Consecutive jobs in runs of up to ``size`` that may share one sandbox (groupable, same
    limits). Runs shrink when fewer jobs are left than ``width`` full runs, so that a small
    batch still keeps every worker busy."""
    source = iter(jobs)
    pending: deque = deque()
    exhausted = False
    while True:
        while not exhausted and len(pending) < width * size:
            try:
                pending.append(next(source))
            except StopIteration:
                exhausted = True
        if not pending:
            return
        target = max(1, min(size, -(-len(pending) // width)))
        run = [pending.popleft()]
        while (
            pending
            and len(run) < target
            and _groupable(run[0])
            and _groupable(pending[0])
            and pending[0].limits == run[0].limits
        ):
            run.append(pending.popleft())
        yield run


def _judge_run(run: list[JudgeJob], backend=None) -> list[JudgeResult | ValueError]:
    """Judge a run of jobs: one alone, or several one after another in one group's sandbox."""
    if len(run) == 1:
        return [_judge_one(run[0], backend)]
    from .service import SandboxGroup, get_backend

    group = SandboxGroup(backend or get_backend())
    try:
        return [
            _judge_one(job, backend, group=group, more=k < len(run) - 1)
            for k, job in enumerate(run)
        ]
    finally:
        group.close()


def _group_size(backend, size: int | None) -> int:
    """Submissions per group: ``size`` or SANDBOX_GROUP_SIZE, for a backend that groups."""
    from .service import get_backend
    from .types import SandboxUnavailable

    size = size or config.settings().SANDBOX_GROUP_SIZE
    if size <= 1:
        return 1
    try:
        backend = backend or get_backend()
    except SandboxUnavailable:
        return 1  # every job's verdict says why (judge reports it as SE)
    return size if backend.groups else 1


def judge_many(
    jobs: Iterable[JudgeJob],
    *,
    workers: int | None = None,
    distributed: bool = False,
    backend=None,
    group_size: int | None = None,
) -> Iterator[JudgeResult | ValueError]:
    """Judge every job; yield one result per job, in job order (a ``ValueError`` for a job
    ``judge`` refuses). ``workers`` bounds the jobs judged at once in this process.

    Consecutive jobs are judged in groups of up to ``group_size`` (default SANDBOX_GROUP_SIZE)
    per sandbox: one after another in the same namespaces, reset between them (see
    service.SandboxGroup and docs/judge.md's security model); 1 gives every job fresh ones."""
    if distributed:
        yield from _judge_distributed(list(jobs))
        return
    width = max(1, workers or config.settings().SANDBOX_MAX_PARALLEL)
    size = _group_size(backend, group_size)
    pool = ThreadPoolExecutor(max_workers=width, thread_name_prefix="judge")
    try:
        window: deque = deque()
        # A bounded window keeps memory flat for huge workloads while every worker stays busy.
        for run in _runs(jobs, width, size):
            window.append(pool.submit(_judge_run, run, backend))
            if len(window) >= width * 4:
                yield from window.popleft().result()
        while window:
            yield from window.popleft().result()
    finally:
        pool.shutdown(wait=True)


def result_to_dict(result: JudgeResult | ValueError) -> dict:
    if isinstance(result, ValueError):
        return {"error": str(result)}
    return result.to_dict()


def result_from_dict(data: dict) -> JudgeResult | ValueError:
    if "error" in data:
        return ValueError(data["error"])
    tests = [TestVerdict(**t) for t in data.pop("tests")]
    return JudgeResult(tests=tests, **data)


def judge_chunk(
    batch_id: str, start: int, documents: list[dict], workers: int | None, worker: str = ""
) -> int:
    """The worker's side of a distributed batch (the ``sandbox_judge_chunk`` task): judge the
    chunk on this worker's cores and push ``[index, result, worker]`` to the batch's Redis list
    as each result is ready. Returns the number of results pushed. A chunk whose worker died is
    delivered again (late acknowledgement) and judged again; a result pushed twice is read
    once."""
    client = _redis()
    key = _key(batch_id)
    jobs = [JudgeJob.from_dict(d) for d in documents]
    client.rpush(key, json.dumps(["start", start, worker]))  # the batch now knows it is alive
    client.expire(key, RESULT_TTL_S)
    pushed = 0
    for offset, result in enumerate(judge_many(jobs, workers=workers)):
        client.rpush(key, json.dumps([start + offset, result_to_dict(result), worker]))
        client.expire(key, RESULT_TTL_S)
        pushed += 1
    return pushed


def _redis():
    import redis
    from django.conf import settings

    return redis.Redis.from_url(settings.REDIS_URL)


def _key(batch_id: str) -> str:
    return f"benchforge:judge-batch:{batch_id}"


def _judge_distributed(jobs: list[JudgeJob]) -> Iterator[JudgeResult | ValueError]:
    """Send the jobs in chunks to the sandbox queue and yield their results in job order.

    A worker marks a chunk started, then pushes its results in order. A started chunk whose
    next result is overdue (that job's time budget plus RESEND_GRACE_S since the chunk's last
    sign of life) is presumed lost with its worker (killed, its machine gone): what is missing
    of it is sent again, up to MAX_RESENDS times. The broker would deliver the lost message
    again only after its visibility timeout (hours); a result that arrives twice is read once.
    """
    from celery import current_app
    from django.conf import settings

    if not jobs:
        return
    if getattr(settings, "BROKER_KIND", "") != "redis":
        raise ValueError(
            "a distributed judge batch needs BROKER_KIND=redis (results come back there)"
        )
    import uuid

    batch_id = uuid.uuid4().hex
    client = _redis()
    key = _key(batch_id)
    documents = [job.to_dict() for job in jobs]
    chunks: dict[int, dict] = {}  # first index -> {"end", "sends", "alive" (time or None)}

    def send(start: int, end: int, sends: int) -> None:
        chunks[start] = {"end": end, "sends": sends, "alive": None}
        # By name, as every service enqueues (the task module imports this one).
        current_app.send_task(
            "evolution.tasks.sandbox_judge_chunk",
            (batch_id, start, documents[start:end]),
            queue="sandbox",
        )

    # Chunks small enough that every sandbox worker gets several (an idle worker takes the next
    # chunk), large enough that a chunk fills a worker's cores.
    size = max(1, min(64, len(jobs) // 16 or 1))
    for start in range(0, len(jobs), size):
        send(start, min(start + size, len(jobs)), 1)
    ready: dict[int, JudgeResult | ValueError] = {}
    next_index = 0
    patience = CHUNK_PATIENCE_S + max(j.limits.time_s * len(j.tests) for j in jobs)
    last_progress = time.monotonic()

    def owner(index: int) -> int | None:
        starts = [s for s, c in chunks.items() if s <= index < c["end"]]
        return max(starts) if starts else None

    def resend_lost(now: float) -> None:
        for start, chunk in list(chunks.items()):
            missing = next(
                (i for i in range(max(start, next_index), chunk["end"]) if i not in ready), None
            )
            if missing is None:
                del chunks[start]
                continue
            if chunk["alive"] is None:
                continue  # still queued: nothing says it is lost
            job = jobs[missing]
            if now - chunk["alive"] <= job.limits.time_s * len(job.tests) + RESEND_GRACE_S:
                continue
            if chunk["sends"] > MAX_RESENDS:
                raise TimeoutError(
                    f"judge batch {batch_id}: job {missing} was lost {chunk['sends']} times "
                    "(its worker died each time)"
                )
            del chunks[start]
            send(missing, chunk["end"], chunk["sends"] + 1)

    try:
        while next_index < len(jobs):
            item = client.blpop([key], timeout=1)
            now = time.monotonic()
            if item is None:
                if now - last_progress > patience:
                    raise TimeoutError(
                        f"judge batch {batch_id}: no result for {patience:.0f} s "
                        f"({next_index}/{len(jobs)} done); is a sandbox worker running?"
                    )
                resend_lost(now)
                continue
            last_progress = now
            first, data = json.loads(item[1])[:2]
            if first == "start":
                if data in chunks:
                    chunks[data]["alive"] = now
                continue
            index = first
            if index < next_index or index in ready:
                continue  # pushed again by a redelivered chunk: already read
            start = owner(index)
            if start is not None:
                chunks[start]["alive"] = now
            ready[index] = result_from_dict(data)
            while next_index in ready:
                yield ready.pop(next_index)
                next_index += 1
            resend_lost(now)
    finally:
        client.delete(key)
