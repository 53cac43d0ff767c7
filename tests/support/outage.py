"""Real outages for tests: a Redis server the test owns (stopped and started again on the same
port), a TCP proxy in front of PostgreSQL that refuses the workers' connections for a while
(the shared server itself is never touched), `celery beat`, and pointing this process's Celery
app at the test's broker."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


class RedisServer:
    """``redis-server`` on a free loopback port with nothing persisted (``--save ""``,
    ``--appendonly no``): a restart loses every queued message, as a crashed broker does."""

    def __init__(self):
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="bf-redis-"))
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = shutil.which("redis-server")
        assert binary, "redis-server is not installed (scripts/bootstrap.sh test installs it)"
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.dir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while not _port_open(self.port):
            assert time.monotonic() < deadline, "the test Redis did not start"
            assert self.proc.poll() is None, "the test Redis exited at start"
            time.sleep(0.05)

    def kill(self) -> None:
        """Crash it (SIGKILL): connections drop, every message it held is gone."""
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


class RefusingProxy:
    """A TCP proxy on a free loopback port in front of ``target`` (PostgreSQL). ``outage()``
    cuts every open connection and refuses new ones (nothing listens on the port) until
    ``restore()``: to its clients the database is down, while the server itself keeps serving
    everyone else."""

    def __init__(self, target_host: str = "127.0.0.1", target_port: int = 5432):
        self.target = (target_host, target_port)
        self.port = free_port()
        self._listener: socket.socket | None = None
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._stopped = threading.Event()
        self.accepted = 0
        self.cut = 0

    def _listen(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.settimeout(0.2)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while not self._stopped.is_set() and self._listener is listener:
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            client.settimeout(None)
            with self._lock:
                self._pairs.append((client, upstream))
                self.accepted += 1
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def outage(self) -> None:
        """From now on the database is unreachable through the proxy."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for client, upstream in pairs:
            for sock in (client, upstream):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self.cut += 1

    def restore(self) -> None:
        self._listen()

    def __enter__(self) -> RefusingProxy:
        self._listen()
        return self

    def __exit__(self, *exc) -> None:
        self._stopped.set()
        self.outage()


def start_beat(env: dict, workdir: Path) -> subprocess.Popen:
    """`celery beat` (the supervisor's schedule comes from the settings in ``env``)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "benchapp",
            "beat",
            "--loglevel",
            "WARNING",
            "--schedule",
            str(workdir / "celerybeat-schedule"),
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )


@contextlib.contextmanager
def celery_broker(url: str):
    """Point this process's Celery app (what services publish through) at ``url`` for the
    duration, with fresh connection pools; the previous broker afterwards."""
    from celery import current_app

    def reset_pools() -> None:
        # app.pool is kombu's process-wide pool for the broker URL: closing it alone leaves the
        # closed pool registered, and every later publish to that broker fails ("Acquire on
        # closed pool"). kombu.pools.reset() closes every pool and empties the registry.
        from kombu import pools

        with contextlib.suppress(Exception):
            pools.reset()
        current_app._pool = None
        current_app.amqp._producer_pool = None

    previous = current_app.conf.broker_url
    reset_pools()
    current_app.conf.broker_url = url
    try:
        yield
    finally:
        reset_pools()
        current_app.conf.broker_url = previous


def alive(proc: subprocess.Popen) -> bool:
    return proc.poll() is None


def env_with(base: dict, **overrides) -> dict:
    env = dict(base)
    env.update({k: str(v) for k, v in overrides.items()})
    return env


def pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
