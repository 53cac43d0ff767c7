"""Per-endpoint concurrency limit: at most ``endpoint.concurrency_limit`` requests in flight.

Two implementations behind one interface (``with limiter.slot(): ...``):

- ``RedisLimiter`` holds the limit across every worker process and host sharing the Redis
  server. A slot is a member of a sorted set scored by its lease expiry (Redis server time,
  so hosts' clocks do not matter). A holder that dies without releasing frees its slot when
  the lease runs out: the endpoint's request timeout plus ``LEASE_MARGIN_S``. Waiters block on
  a notification list that each release pushes to, so a freed slot is taken within one Redis
  round trip instead of a polling interval; they also wake every ``WAKE_INTERVAL_S`` to
  reclaim expired leases.
- ``LocalLimiter`` is a process-local semaphore, used when ``settings.LLM_LIMITER == "local"``
  (the embedded demo runs without Redis, with a single worker process). It does not limit
  across processes.

The choice is ``settings.LLM_LIMITER``; ``limiter_for(endpoint)`` returns the configured one.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Iterator

import redis
from django.conf import settings

from .errors import LLMError

# A slot outlives its holder's request by this much before anyone may reclaim it.
LEASE_MARGIN_S = 30.0
# Waiters re-check at least this often, so an expired lease is reclaimed even without a release.
WAKE_INTERVAL_S = 0.2
# Bound on queued wake-up notifications (stale ones only cause a harmless extra check).
NOTIFY_MAX = 64
# A Redis that cannot be reached (a restart) is waited for this long, re-trying with backoff,
# before the call fails with an error whose cause is the connection error (the runner then
# treats the step as interrupted by an outage, never as the item's fault).
OUTAGE_WAIT_S = 30.0

# KEYS[1] holders (zset token -> lease expiry in ms); ARGV limit, lease_ms, token.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return 1
end
return 0
"""

# KEYS[1] holders, KEYS[2] notification list; ARGV token, notify_max.
_RELEASE = """
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('LPUSH', KEYS[2], '1')
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[2]) - 1)
redis.call('PEXPIRE', KEYS[2], 60000)
return removed
"""

_clients: dict[tuple[int, str], redis.Redis] = {}
_clients_lock = threading.Lock()


def _redis() -> redis.Redis:
    """One connection pool per process and URL (pools must not cross a fork)."""
    key = (os.getpid(), settings.REDIS_URL)
    client = _clients.get(key)
    if client is None:
        with _clients_lock:
            client = _clients.get(key)
            if client is None:
                client = redis.Redis.from_url(
                    settings.REDIS_URL,
                    socket_timeout=WAKE_INTERVAL_S + 10,
                    socket_connect_timeout=5,
                    health_check_interval=30,
                )
                _clients[key] = client
    return client


def _namespace() -> str:
    # Endpoint ids are only unique within one database; several databases (test runs,
    # benchmarks, deployments) may share a Redis server.
    db = settings.DATABASES["default"]
    return f"benchforge:{db.get('HOST', '')}:{db.get('PORT', '')}:{db['NAME']}:llm"


class RedisLimiter:
    """Cross-process semaphore for one endpoint (see module docstring)."""

    def __init__(self, *, endpoint_id: int, limit: int, lease_s: float):
        if limit < 1:
            raise ValueError("concurrency limit must be at least 1")
        self.limit = limit
        self.lease_ms = max(1, int(lease_s * 1000))
        base = f"{_namespace()}:{endpoint_id}"
        self.holders_key = f"{base}:holders"
        self.notify_key = f"{base}:notify"
        self._redis = _redis()
        self._acquire = self._redis.register_script(_ACQUIRE)
        self._release = self._redis.register_script(_RELEASE)

    def try_acquire(self) -> str | None:
        """Take a slot if one is free; return its holder token, else None."""
        token = uuid.uuid4().hex
        got = self._acquire(keys=[self.holders_key], args=[self.limit, self.lease_ms, token])
        return token if got == 1 else None

    def acquire(self, *, timeout: float | None = None) -> str:
        """Block until a slot is free (or ``timeout`` seconds pass: LLMError). A Redis that
        went away is waited for up to ``OUTAGE_WAIT_S`` (a restart heals without failing the
        call)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        outage_since = None
        pause = 0.25
        while True:
            try:
                token = self.try_acquire()
                if token is not None:
                    return token
                outage_since, pause = None, 0.25
                wait = WAKE_INTERVAL_S
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise LLMError(
                            f"no free model slot within {timeout:.1f} s "
                            f"(limit {self.limit} concurrent calls)"
                        )
                    wait = min(wait, remaining)
                self._redis.blpop([self.notify_key], timeout=max(wait, 0.01))
            except (redis.ConnectionError, redis.TimeoutError) as exc:
                now = time.monotonic()
                outage_since = outage_since or now
                if now - outage_since >= OUTAGE_WAIT_S:
                    raise LLMError(f"concurrency limiter: Redis unavailable ({exc})") from exc
                time.sleep(pause)
                pause = min(pause * 2, 2.0)
            except redis.RedisError as exc:
                raise LLMError(f"concurrency limiter: Redis unavailable ({exc})") from exc

    def release(self, token: str) -> None:
        # On a Redis failure the lease expires on its own; failing the finished call here
        # would lose its result.
        with contextlib.suppress(redis.RedisError):
            self._release(keys=[self.holders_key, self.notify_key], args=[token, NOTIFY_MAX])

    def in_use(self) -> int:
        """Slots currently held (expired leases included until the next acquire purges them)."""
        return int(self._redis.zcard(self.holders_key))

    @contextlib.contextmanager
    def slot(self, *, timeout: float | None = None) -> Iterator[None]:
        token = self.acquire(timeout=timeout)
        try:
            yield
        finally:
            self.release(token)


class LocalLimiter:
    """Process-local semaphore for one endpoint; does not limit across processes."""

    _semaphores: dict[tuple[int, int], threading.BoundedSemaphore] = {}
    _lock = threading.Lock()

    def __init__(self, *, endpoint_id: int, limit: int):
        if limit < 1:
            raise ValueError("concurrency limit must be at least 1")
        self.limit = limit
        key = (endpoint_id, limit)
        with self._lock:
            semaphore = self._semaphores.get(key)
            if semaphore is None:
                semaphore = threading.BoundedSemaphore(limit)
                self._semaphores[key] = semaphore
        self._semaphore = semaphore

    @contextlib.contextmanager
    def slot(self, *, timeout: float | None = None) -> Iterator[None]:
        if not self._semaphore.acquire(timeout=timeout):
            raise LLMError(
                f"no free model slot within {timeout:.1f} s (limit {self.limit} concurrent calls)"
            )
        try:
            yield
        finally:
            self._semaphore.release()


def limiter_for(endpoint) -> RedisLimiter | LocalLimiter:
    """The configured limiter for ``endpoint`` (a ModelEndpoint with a pk)."""
    if settings.LLM_LIMITER == "redis":
        return RedisLimiter(
            endpoint_id=endpoint.pk,
            limit=endpoint.concurrency_limit,
            lease_s=float(endpoint.timeout_s) + LEASE_MARGIN_S,
        )
    return LocalLimiter(endpoint_id=endpoint.pk, limit=endpoint.concurrency_limit)
