"""gunicorn's threaded worker with a lane of its own for ``/healthz``.

With gunicorn's workers every request waits its turn: a sync worker answers one at a time, and
a threaded (gthread) worker hands each accepted connection to one thread pool in arrival order.
Under a burst of slow page requests a load balancer's probe therefore waits behind all of them
and times out, although answering it costs almost nothing (``benchapp.health.cached_report``),
and the balancer takes a working server out of rotation just when it is busiest.

``ProbeFirstWorker`` is the gthread worker with one change: when it hands a connection over, it
peeks at the request line already received (without consuming it) and gives a ``GET`` or
``HEAD`` of ``/healthz`` to a small pool of its own, so the probe never waits behind pages.
A connection accepted before its request line arrived waits for it in the worker's poller
(holding no thread) for up to ``REQUEST_LINE_SECONDS``. Everything else, and every connection
that stays silent that long or cannot be peeked at (TLS), takes the ordinary path. The probe
is still read, routed and answered by Django as any other request. Use it as
``--worker-class benchapp.serving.ProbeFirstWorker --threads N`` (docker-compose.yml's web
command).
"""

from __future__ import annotations

import collections
import selectors
import socket
import time
from concurrent import futures
from dataclasses import dataclass, field
from functools import partial

from gunicorn.workers.gthread import ThreadWorker

PROBE_PATH = b"/healthz"
PROBE_THREADS = 2  # one probe whose check is slow does not hold the others up
# How long an accepted connection may take to send its request line before it takes the
# ordinary path anyway (it waits in the worker's poller meanwhile, holding no thread).
REQUEST_LINE_SECONDS = 1.0
_PEEK_BYTES = 32


def is_probe(head: bytes) -> bool:
    """Whether a request's first bytes are a GET or HEAD of the probe's path."""
    for method in (b"GET ", b"HEAD "):
        if head.startswith(method + PROBE_PATH):
            rest = head[len(method) + len(PROBE_PATH) :]
            return rest[:1] in (b" ", b"?")
    return False


def _peek(sock) -> bytes | None:
    """The first bytes received on ``sock``, left in place; None when nothing has arrived yet,
    b"" when there is nothing to read (closed) or it cannot be peeked at (a TLS socket)."""
    try:
        return sock.recv(_PEEK_BYTES, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except BlockingIOError:
        return None
    except (OSError, ValueError):
        return b""


@dataclass
class _Waiting:
    deadline: float
    conn: object = field(repr=False)
    active: bool = True


class ProbeFirstWorker(ThreadWorker):
    def init_process(self):
        self.probe_pool = futures.ThreadPoolExecutor(max_workers=PROBE_THREADS)
        self.waiting: collections.deque[_Waiting] = collections.deque()
        super().init_process()

    def enqueue_req(self, conn):
        # Called from the worker's main loop only (accept, a readable kept-alive, deferred or
        # waiting connection), so swapping the pool for one submission races with nothing.
        head = _peek(conn.sock)
        if head is None and not getattr(conn, "initialized", False):
            # Accepted before its request arrived (the client's send is still on its way):
            # wait in the poller for it instead of queueing behind the pages undecided. (A
            # kept-alive connection may hold its next request in gunicorn's own buffer, out
            # of the socket: it takes the ordinary path.)
            return self._wait_for_request(conn)
        if not head or not is_probe(head):
            return super().enqueue_req(conn)
        pages = self.tpool
        self.tpool = self.probe_pool
        try:
            return super().enqueue_req(conn)
        finally:
            self.tpool = pages

    def _wait_for_request(self, conn) -> None:
        entry = _Waiting(time.monotonic() + REQUEST_LINE_SECONDS, conn)
        self.waiting.append(entry)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._request_came, entry))

    def _request_came(self, entry: _Waiting, sock) -> None:
        self.poller.unregister(sock)
        entry.active = False
        self.enqueue_req(entry.conn)

    def notify(self):
        super().notify()
        # Once per turn of the main loop: a connection still silent after REQUEST_LINE_SECONDS
        # takes the ordinary path (gunicorn's own handling of slow clients).
        waiting = getattr(self, "waiting", ())
        now = time.monotonic()
        while waiting and (not waiting[0].active or waiting[0].deadline <= now):
            entry = waiting.popleft()
            if entry.active:
                entry.active = False
                self.poller.unregister(entry.conn.sock)
                super().enqueue_req(entry.conn)
