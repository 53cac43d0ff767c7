"""The sandbox's Celery side: judge a chunk of a distributed batch, keep a warm pool per worker.

The chunk task takes job documents (code, tests, limits), not row ids: a batch is a workload
handed to the judge, not database state, and the judge never reads the database.
"""

from __future__ import annotations

import threading

from celery import shared_task
from celery.signals import celeryd_after_setup, worker_process_init, worker_ready

# Named under evolution.tasks so that CELERY_TASK_ROUTES ("evolution.tasks.sandbox_*") sends it
# to the sandbox queue with the other execution-bound tasks.
TASK_NAME = "evolution.tasks.sandbox_judge_chunk"

_serves_sandbox = {"yes": True}
_warmed: set[int] = set()
_warm_lock = threading.Lock()


@shared_task(
    bind=True, name=TASK_NAME, acks_late=True, reject_on_worker_lost=True, ignore_result=True
)
def sandbox_judge_chunk(self, batch_id: str, start: int, documents: list[dict]) -> int:
    from .batch import judge_chunk

    return judge_chunk(batch_id, start, documents, None, worker=self.request.hostname or "")


def prewarm() -> None:
    """Start this process's sandbox pool before the first job arrives (once per process): the
    first execution then costs a fork, not an interpreter and bwrap start."""
    import os

    from .service import get_backend

    with _warm_lock:
        if os.getpid() in _warmed:
            return
        _warmed.add(os.getpid())
    backend = get_backend()
    warm = getattr(backend, "prewarm", None)
    if warm is not None:
        warm()


@celeryd_after_setup.connect
def _note_queues(sender=None, instance=None, **kwargs):
    # Only workers that consume the sandbox queue keep warm sandboxes.
    try:
        names = set(instance.app.amqp.queues.consume_from or {})
    except AttributeError:
        return
    _serves_sandbox["yes"] = not names or "sandbox" in names


@worker_process_init.connect
def _warm_child(**kwargs):
    if _serves_sandbox["yes"]:
        threading.Thread(target=_safe_prewarm, name="sandbox-prewarm", daemon=True).start()


@worker_ready.connect
def _warm_solo(**kwargs):
    if _serves_sandbox["yes"]:
        threading.Thread(target=_safe_prewarm, name="sandbox-prewarm", daemon=True).start()


def _safe_prewarm() -> None:
    import logging

    try:
        prewarm()
    except Exception:  # a worker without a sandbox still serves its other queues
        logging.getLogger(__name__).exception("sandbox pool could not be warmed")
