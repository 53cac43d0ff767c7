"""Which Celery workers are alive, which queues they serve, and how deep each queue is.

Two sources, as Flower has them:

- **Asking** (the web side): a broadcast ``inspect().active_queues()`` (and ``stats()`` for
  the workers page) with a short time-out. A worker that answers is *live*. The answer is kept
  ``CACHE_SECONDS`` in the Django cache, so pages that poll do not broadcast on every request.
- **Heartbeats** (the worker side): every worker records Celery's own heartbeat (the
  ``heartbeat_sent`` signal, every 2 s) with its queues, pool size, tasks processed (in all and
  by task name), tasks running and the rate of the last minute, in the broker's Redis
  (``BROKER_KIND=redis``) or the filesystem broker's spool (``BROKER_KIND=filesystem``). A
  heartbeat outlives its worker by ``HEARTBEAT_KEEP_SECONDS``, so a worker that stopped or died
  stays listed as gone with the time it was last heard from.

The workers page (``overview``) answers from the heartbeats and the queue depths alone, which
take milliseconds: a broadcast waits for its time-out whenever a worker does not answer (on the
filesystem broker, which polls, every broadcast does), so it never runs while the page waits.
The page shows the last broadcast's answer (``broadcast_answer``), and one background thread
per process asks again when that answer is older than ``CACHE_SECONDS``.

Queue depth is the number of messages waiting in the broker (``queue_declare(passive=True)``,
which is ``LLEN`` of the queue's lists on Redis and a count of spool files on the filesystem
broker).

``workers_by_queue()`` is what pages ask (the campaign page's notice); ``/healthz`` asks through
``benchapp.health``, which keeps the same broadcast's answer refreshed in the background.

This module imports no app (only Django, Celery, kombu and redis): every layer may ask it.
"""

from __future__ import annotations

import collections
import json
import logging
import os
import re
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

log = logging.getLogger(__name__)

INSPECT_TIMEOUT = 1.0
CACHE_SECONDS = 5.0
HEARTBEAT_KEEP_SECONDS = 3600
# A heartbeat older than this (five missed 2 s beats) is a worker that is not beating.
STALE_AFTER_SECONDS = 10.0
_KEY_PREFIX = "benchforge:worker:"
_CACHE_KEY = "benchforge:workers:inspect"
# The last broadcast's answer for the workers page, with when it was asked: kept past
# CACHE_SECONDS so a page always has the last one while a fresher one is asked for.
_ANSWER_KEY = "benchforge:workers:answer"
ANSWER_KEEP_SECONDS = 300


# --------------------------------------------------------------------------- queues


def configured_queues() -> list[str]:
    """The queues this deployment sends work to: the default queue and every routed one."""
    queues = {settings.CELERY_TASK_DEFAULT_QUEUE}
    for route in (getattr(settings, "CELERY_TASK_ROUTES", None) or {}).values():
        if isinstance(route, dict) and route.get("queue"):
            queues.add(route["queue"])
    return sorted(queues)


def queue_depths(queues: list[str]) -> dict[str, int | None]:
    """Messages waiting in each queue (None for every queue when the broker cannot be asked)."""
    from celery import current_app as app
    from kombu.exceptions import ChannelError

    depths: dict[str, int | None] = dict.fromkeys(queues)
    try:
        with app.connection_for_read() as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, timeout=1)
            channel = conn.default_channel
            for queue in queues:
                try:
                    depths[queue] = channel.queue_declare(queue=queue, passive=True).message_count
                except ChannelError:  # never declared, or emptied and removed: nothing waits
                    depths[queue] = 0
    except Exception as exc:  # the broker is down: say so, never raise from a page
        log.warning("cannot read queue depths: %s", exc.__class__.__name__)
        return dict.fromkeys(queues)
    return depths


# --------------------------------------------------------------------------- asking the workers


def _expected_answers() -> int | None:
    """How many workers beat recently: the broadcast may stop waiting once that many have
    answered (None: wait the whole time-out)."""
    try:
        now = time.time()
        fresh = [
            r
            for r in store.read()
            if not r.get("stopped") and now - r.get("heartbeat", 0) <= STALE_AFTER_SECONDS
        ]
    except Exception:
        return None
    return len(fresh) or None


def broadcast(with_stats: bool, timeout: float = INSPECT_TIMEOUT) -> dict:
    """``{hostname: {"queues": [...], "stats": dict | None}}`` of the workers that answer a
    broadcast within ``timeout`` seconds; raises when the broker cannot be reached."""
    from celery import current_app as app

    with app.connection_for_write() as conn:
        # One quick try: a broker that is down makes this fail in about a second, instead of
        # the broadcast's own connection retries.
        conn.ensure_connection(max_retries=1, interval_start=0, timeout=1)
        inspector = app.control.inspect(timeout=timeout, limit=_expected_answers(), connection=conn)
        replies = inspector.active_queues() or {}
        live = {
            host: {"queues": sorted(q["name"] for q in queues or []), "stats": None}
            for host, queues in replies.items()
        }
        if with_stats and live:
            asked = app.control.inspect(
                destination=sorted(live), timeout=timeout, limit=len(live), connection=conn
            )
            for host, stats in (asked.stats() or {}).items():
                if host in live:
                    live[host]["stats"] = stats
    return live


def live_workers(*, with_stats: bool = False, refresh: bool = False) -> dict | None:
    """``{hostname: {"queues": [...], "stats": dict | None}}`` of the workers that answer, or
    None when the broker cannot be reached. Cached ``CACHE_SECONDS``; ``with_stats`` also asks
    each worker's ``stats()`` (pool size, tasks by name, uptime)."""
    key = _CACHE_KEY + (":stats" if with_stats else "")
    if not refresh:
        cached = cache.get(key)
        if cached is not None:
            return cached["live"]
    try:
        live = broadcast(with_stats)
    except Exception as exc:
        log.warning("cannot inspect the workers: %s", exc.__class__.__name__)
        live = None
    cache.set(key, {"live": live}, CACHE_SECONDS)
    if with_stats and live is not None:
        cache.set(_CACHE_KEY, {"live": live}, CACHE_SECONDS)
    return live


_asking_lock = threading.Lock()
_asking: dict = {"thread": None}


def _ask_and_keep() -> dict:
    """Broadcast now (with stats) and keep the answer: ``{"live": ... | None, "asked": epoch
    seconds when the broadcast was sent}``."""
    asked = time.time()
    try:
        live = broadcast(with_stats=True)
    except Exception as exc:
        log.warning("cannot inspect the workers: %s", exc.__class__.__name__)
        live = None
    answer = {"live": live, "asked": asked}
    cache.set(_ANSWER_KEY, answer, ANSWER_KEEP_SECONDS)
    # The same answer serves live_workers() (the campaign pages) for its usual time.
    cache.set(_CACHE_KEY + ":stats", {"live": live}, CACHE_SECONDS)
    cache.set(_CACHE_KEY, {"live": live}, CACHE_SECONDS)
    return answer


def _ask_in_background() -> None:
    try:
        _ask_and_keep()
    finally:
        with _asking_lock:
            _asking["thread"] = None


def broadcast_answer(*, refresh: bool = False) -> dict | None:
    """The last broadcast's answer (``{"live", "asked"}``, as ``_ask_and_keep`` keeps it), or
    None when none was asked yet, without waiting for the workers: when the answer is older
    than ``CACHE_SECONDS`` (or missing), one background thread of this process asks again and
    a later call gets its answer. ``refresh``: ask now and wait for the answer (*Ask again
    now*)."""
    if refresh:
        return _ask_and_keep()
    answer = cache.get(_ANSWER_KEY)
    if answer is None or time.time() - answer["asked"] > CACHE_SECONDS:
        with _asking_lock:
            if _asking["thread"] is None:
                thread = threading.Thread(
                    target=_ask_in_background, name="workers-broadcast", daemon=True
                )
                _asking["thread"] = thread
                thread.start()
    return answer


def forget_broadcast_answer() -> None:
    """Wait for a background broadcast of this process, then drop the kept answer (tests)."""
    with _asking_lock:
        thread = _asking["thread"]
    if thread is not None:
        thread.join(INSPECT_TIMEOUT * 2 + 5)
    cache.delete(_ANSWER_KEY)


def hosts_by_queue(live: dict | None) -> dict[str, list[str]]:
    """Each queue (every configured one, and any a live worker serves) with the live workers
    of ``live`` (as ``live_workers`` returns it) consuming it; an empty list when none does."""
    found: dict[str, list[str]] = {queue: [] for queue in configured_queues()}
    for host, info in (live or {}).items():
        for queue in info["queues"]:
            found.setdefault(queue, []).append(host)
    return {queue: sorted(hosts) for queue, hosts in sorted(found.items())}


def workers_by_queue(*, refresh: bool = False) -> dict[str, list[str]]:
    """Each queue with the live workers consuming it, by hostname; an empty list when none
    does, or when the broker is down."""
    return hosts_by_queue(live_workers(refresh=refresh))


# --------------------------------------------------------------------------- heartbeats


class _HeartbeatStore:
    """Where workers leave their heartbeats: the broker's Redis, or the filesystem spool."""

    def __init__(self):
        self._client = None
        self._pid = None

    def _kind(self) -> str:
        return getattr(settings, "BROKER_KIND", "")

    def _redis(self):
        if self._client is None or self._pid != os.getpid():
            import redis

            self._client = redis.Redis.from_url(
                settings.CELERY_BROKER_URL, socket_timeout=1, socket_connect_timeout=1
            )
            self._pid = os.getpid()
        return self._client

    def _folder(self) -> Path:
        return Path(settings.DATA_DIR) / "broker" / "workers"

    @staticmethod
    def _file_name(hostname: str) -> str:
        return re.sub(r"[^A-Za-z0-9@._-]", "_", hostname) + ".json"

    def write(self, record: dict) -> None:
        text = json.dumps(record)
        kind = self._kind()
        if kind == "redis":
            self._redis().set(_KEY_PREFIX + record["hostname"], text, ex=HEARTBEAT_KEEP_SECONDS)
        elif kind == "filesystem":
            folder = self._folder()
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / self._file_name(record["hostname"])
            partial = path.with_suffix(f".{os.getpid()}.tmp")
            partial.write_text(text)
            partial.replace(path)  # atomic: a reader never sees half a record

    def read(self) -> list[dict]:
        kind = self._kind()
        texts: list = []
        if kind == "redis":
            client = self._redis()
            keys = sorted(client.scan_iter(match=_KEY_PREFIX + "*", count=200))
            texts = [t for t in client.mget(keys) if t] if keys else []
        elif kind == "filesystem":
            folder = self._folder()
            if folder.is_dir():
                now = time.time()
                for path in sorted(folder.glob("*.json")):
                    try:
                        if now - path.stat().st_mtime > HEARTBEAT_KEEP_SECONDS:
                            path.unlink(missing_ok=True)
                            continue
                        texts.append(path.read_text())
                    except OSError:
                        continue
        records = []
        for text in texts:
            try:
                records.append(json.loads(text))
            except (ValueError, TypeError):
                continue
        return records

    def forget(self, hostname: str) -> None:
        kind = self._kind()
        if kind == "redis":
            self._redis().delete(_KEY_PREFIX + hostname)
        elif kind == "filesystem":
            (self._folder() / self._file_name(hostname)).unlink(missing_ok=True)


store = _HeartbeatStore()


class _WorkerBeat:
    """The worker process's side: what its heartbeat record says."""

    WINDOW_SECONDS = 60.0

    def __init__(self):
        self.lock = threading.Lock()
        self.hostname = ""
        self.queues: list[str] = []
        self.started = 0.0
        self.samples: collections.deque = collections.deque()
        self.failing = False
        self.concurrency: int | None = None

    def record(self, *, hostname: str, stopped: bool = False) -> None:
        from celery.worker import state

        now = time.time()
        processed = int(state.all_total_count[0])
        by_task = dict(state.total_count)
        with self.lock:
            self.hostname = self.hostname or hostname
            self.started = self.started or now
            self.samples.append((now, processed))
            while self.samples and now - self.samples[0][0] > self.WINDOW_SECONDS:
                self.samples.popleft()
            first_t, first_n = self.samples[0]
            span = now - first_t
            per_minute = (processed - first_n) * 60.0 / span if span >= 5 else None
            record = {
                "hostname": self.hostname,
                "queues": self.queues,
                "pid": os.getpid(),
                "started": self.started,
                "heartbeat": now,
                "processed": processed,
                "by_task": by_task,
                "concurrency": self.concurrency,
                "active": len(state.active_requests),
                "per_minute": per_minute,
                "stopped": now if stopped else None,
            }
        try:
            store.write(record)
            self.failing = False
        except Exception as exc:  # the broker is down: the worker has bigger problems; go on
            if not self.failing:
                log.warning("cannot record the worker heartbeat: %s", exc.__class__.__name__)
            self.failing = True


_beat = _WorkerBeat()


def _on_worker_ready(sender=None, **kwargs):
    consumer = sender
    queues = []
    try:
        queues = sorted(q.name for q in consumer.task_consumer.queues)
    except Exception:
        consume_from = getattr(consumer.app.amqp.queues, "consume_from", None) or {}
        queues = sorted(consume_from)
    _beat.queues = queues
    try:
        _beat.concurrency = consumer.pool.info.get("max-concurrency")
    except Exception:  # a pool without info: the page shows a dash
        _beat.concurrency = None
    _beat.record(hostname=consumer.hostname)


def _on_heartbeat(sender=None, **kwargs):
    eventer = getattr(sender, "eventer", None)
    _beat.record(hostname=getattr(eventer, "hostname", "") or _beat.hostname)


def _on_worker_shutdown(sender=None, **kwargs):
    if _beat.hostname:
        _beat.record(hostname=_beat.hostname, stopped=True)


def connect_worker_signals() -> None:
    """Called where the Celery app is made: connected before a worker builds its heartbeat
    timer, which only signals when a receiver exists at that moment. In a web process the
    signals never fire."""
    from celery.signals import heartbeat_sent, worker_ready, worker_shutdown

    worker_ready.connect(_on_worker_ready, weak=False, dispatch_uid="benchforge-worker-ready")
    heartbeat_sent.connect(_on_heartbeat, weak=False, dispatch_uid="benchforge-heartbeat")
    worker_shutdown.connect(
        _on_worker_shutdown, weak=False, dispatch_uid="benchforge-worker-shutdown"
    )


# --------------------------------------------------------------------------- the page's view


def _beating(record: dict | None, now: float) -> bool:
    return (
        record is not None
        and not record.get("stopped")
        and now - record.get("heartbeat", 0) <= STALE_AFTER_SECONDS
    )


def _worker_status(*, answered: bool, asked: float | None, record: dict | None, now: float) -> str:
    """live: it answered the last broadcast, or it beats and no broadcast since it started
    went unanswered by it; not answering: it beats, but the last broadcast (asked after it
    started, at most ``STALE_AFTER_SECONDS`` ago) got no answer from it; stopped: it shut down
    cleanly; gone: no answer and no heartbeat for ``STALE_AFTER_SECONDS``."""
    if answered:
        return "live"
    if _beating(record, now):
        missed = asked is not None and asked > record.get("started", 0)
        return "not answering" if missed else "live"
    if record is not None and record.get("stopped"):
        return "stopped"
    return "gone"


def _read_depths(queues: list[str]) -> dict[str, int | None] | None:
    depths = queue_depths(queues)
    if queues and all(depth is None for depth in depths.values()):
        return None
    return depths


def overview(*, refresh: bool = False) -> dict:
    """Everything the workers page shows: each worker (live ones and those gone within the
    hour) with its queues, last heartbeat, throughput and status; each queue with its depth
    and live workers. ``broker_ok`` is False when the broker could not be asked.

    Read from the heartbeats and the queue depths, with the last broadcast's answer as it is
    (``broadcast_answer``): nothing here waits for a worker to answer, unless ``refresh``
    (*Ask again now*) asks now."""
    answer = broadcast_answer(refresh=refresh)
    try:
        beats = {r["hostname"]: r for r in store.read() if r.get("hostname")}
        beats_ok = True
    except Exception as exc:
        log.warning("cannot read worker heartbeats: %s", exc.__class__.__name__)
        beats, beats_ok = {}, False
    now = time.time()  # after the reads: no heartbeat is newer than now
    asked = answer["asked"] if answer else None
    # An answer older than a heartbeat may be stale says nothing about who is live now.
    recent = asked is not None and now - asked <= STALE_AFTER_SECONDS
    live = (answer or {}).get("live") or {}
    if not recent:
        live, asked = {}, None
    workers = []
    for host in sorted(set(beats) | set(live)):
        record = beats.get(host)
        info = live.get(host)
        stats = (info or {}).get("stats") or {}
        pool = stats.get("pool") or {}
        heartbeat = record.get("heartbeat") if record else None
        by_task = (record or {}).get("by_task")
        if by_task is None:  # a worker that beats without them (an older release)
            by_task = stats.get("total") or {}
        concurrency = (record or {}).get("concurrency") or pool.get("max-concurrency")
        workers.append(
            {
                "hostname": host,
                "status": _worker_status(
                    answered=info is not None, asked=asked, record=record, now=now
                ),
                "queues": (info or {}).get("queues") or (record or {}).get("queues") or [],
                "heartbeat": heartbeat,
                "heartbeat_age": round(now - heartbeat, 1) if heartbeat else None,
                "started": (record or {}).get("started"),
                "stopped": (record or {}).get("stopped"),
                "pid": stats.get("pid") or (record or {}).get("pid"),
                "concurrency": concurrency,
                "processed": (record or {}).get("processed"),
                "active": (record or {}).get("active"),
                "per_minute": (record or {}).get("per_minute"),
                "by_task": dict(sorted(by_task.items())),
            }
        )
    order = {"live": 0, "not answering": 1, "stopped": 2, "gone": 3}
    workers.sort(key=lambda w: (order[w["status"]], w["hostname"]))
    queues = sorted(
        set(configured_queues())
        | {q for w in workers if w["status"] == "live" for q in w["queues"]}
    )
    depths = _read_depths(queues) if beats_ok else None
    by_queue = [
        {
            "name": queue,
            "depth": (depths or {}).get(queue),
            "workers": [
                w["hostname"] for w in workers if w["status"] == "live" and queue in w["queues"]
            ],
        }
        for queue in queues
    ]
    return {
        "broker_ok": depths is not None,
        "heartbeats_ok": beats_ok,
        "workers": workers,
        "queues": by_queue,
        "inspect_timeout": INSPECT_TIMEOUT,
        "cache_seconds": CACHE_SECONDS,
        "stale_after": STALE_AFTER_SECONDS,
        # When the answer shown was asked (None: none yet, or too old to tell).
        "asked_age": round(now - asked, 1) if asked is not None else None,
    }
