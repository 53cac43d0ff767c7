"""A real HTTP server on loopback speaking ``POST /v1/chat/completions``, for tests and benchmarks.

It is the only seam replaced in the gateway's tests: the client under test talks real HTTP to
it. Responses are scripted, latency and faults are injectable, and it counts what it sees::

    with FakeOpenAI(latency=0.05) as server:
        server.script("solver", ["```python\\nprint(1)\\n```", Fault.server_error()])
        server.responder = lambda body, headers: "hello"      # or: one callable for everything
        ...  # point a ModelEndpoint at server.base_url
        assert server.max_in_flight <= 4

Which answer a request gets: the role queue (``X-BenchForge-Role`` header) if it still has
items, else ``responder`` if set, else ``default_content``. An answer is a ``str`` (the
message content), a ``Reply`` (content with explicit token usage) or a ``Fault``.

Endpoints that misbehave the way real ones do are built from responders: ``by_model`` routes
one server's requests by model name, ``only_default_temperature`` answers 400 to any
temperature but 1 (as reasoning-model APIs do), ``intermittent`` fails each key's first
requests with 5xx or ``Fault.timeout`` before answering.

Also runs as a process (for benchmarks and multi-process tests)::

    python -m tests.support.fake_openai --port 0 --latency-ms 250 --content "ok"

(``--responder module:name`` answers with a responder instead of one fixed content.)

It prints ``listening on http://127.0.0.1:PORT/v1`` once ready. ``GET /v1/_stats`` returns
``{"requests", "in_flight", "max_in_flight"}`` and ``POST /v1/_reset`` zeroes the counters.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Reply:
    """A successful answer with explicit usage (otherwise usage counts whitespace words)."""

    content: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    usage: bool = True  # False: omit the usage object, as some servers do


@dataclass(frozen=True)
class Fault:
    """An injected failure. Build them with the class methods."""

    kind: str
    status: int = 500
    retry_after: str | None = None
    seconds: float = 0.0
    then: str | Reply | None = None
    body: str = ""

    @classmethod
    def rate_limited(cls, retry_after: float | str | None = 1) -> Fault:
        """HTTP 429, with a Retry-After header unless ``retry_after`` is None."""
        header = None if retry_after is None else str(retry_after)
        return cls(kind="status", status=429, retry_after=header, body='{"error":"rate limited"}')

    @classmethod
    def server_error(cls, status: int = 500) -> Fault:
        return cls(kind="status", status=status, body='{"error":"internal"}')

    @classmethod
    def http_status(cls, status: int, body: str = '{"error":"refused"}') -> Fault:
        return cls(kind="status", status=status, body=body)

    @classmethod
    def malformed_json(cls) -> Fault:
        """HTTP 200 whose body is not JSON."""
        return cls(kind="malformed")

    @classmethod
    def missing_content(cls) -> Fault:
        """HTTP 200 with valid JSON that lacks choices[0].message.content."""
        return cls(kind="no_content")

    @classmethod
    def truncated_body(cls) -> Fault:
        """Headers promise the whole body; half of it is sent, then the connection closes."""
        return cls(kind="truncated")

    @classmethod
    def connection_reset(cls) -> Fault:
        """The connection is reset (TCP RST) without any response."""
        return cls(kind="reset")

    @classmethod
    def timeout(cls, seconds: float) -> Fault:
        """Answer only after ``seconds``: a client with a shorter timeout gives up first."""
        return cls(kind="delay", seconds=seconds, then="too late")

    @classmethod
    def delay(cls, seconds: float, then: str | Reply = "delayed") -> Fault:
        """Wait ``seconds`` (on top of the default latency), then answer ``then``."""
        return cls(kind="delay", seconds=seconds, then=then)


Answer = str | Reply | Fault
Responder = Callable[[dict, dict], Answer]

# OpenAI's answer to a temperature a reasoning model does not support (HTTP 400).
UNSUPPORTED_TEMPERATURE = (
    '{"error": {"message": "Unsupported value: \'temperature\' does not support %s with this '
    'model. Only the default (1) value is supported.", "type": "invalid_request_error", '
    '"param": "temperature", "code": "unsupported_value"}}'
)
# OpenAI's refusal of a prompt too long for the model: about the request's content.
CONTEXT_TOO_LONG = (
    '{"error": {"message": "This model\'s maximum context length is 8192 tokens.", '
    '"type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}'
)


def only_default_temperature(inner: Responder) -> Responder:
    """A reasoning-model API: 400 to any temperature other than 1 (none at all is fine)."""

    def respond(body, headers):
        if "temperature" in body and body["temperature"] != 1:
            return Fault.http_status(400, UNSUPPORTED_TEMPERATURE % body["temperature"])
        return inner(body, headers)

    return respond


def intermittent(inner: Responder, failures: list[Fault]) -> Responder:
    """Fails the first requests of every distinct replay key with ``failures`` in order (e.g.
    a 503, then a time-out), then answers as ``inner`` does: flaky, but deterministic per key
    whatever the concurrency."""
    seen: collections.Counter = collections.Counter()
    lock = threading.Lock()

    def respond(body, headers):
        key = headers.get("x-benchforge-key", "")
        with lock:
            n = seen[key]
            seen[key] += 1
        if n < len(failures):
            return failures[n]
        return inner(body, headers)

    return respond


def by_model(table: dict[str, Responder], fallback: Responder | None = None) -> Responder:
    """Route by the request's ``model`` field: one loopback server, several endpoints."""

    def respond(body, headers):
        responder = table.get(str(body.get("model", "")), fallback)
        if responder is None:
            return Fault.http_status(404, '{"error": "model not found"}')
        return responder(body, headers)

    return respond


def _count_words(messages) -> int:
    total = 0
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            total += len(content.split())
    return total


def completion_body(model: str, reply: Reply, messages) -> bytes:
    data = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": "stop",
            }
        ],
    }
    if reply.usage:
        prompt = reply.prompt_tokens
        completion = reply.completion_tokens
        if prompt is None:
            prompt = _count_words(messages)
        if completion is None:
            completion = len(reply.content.split())
        data["usage"] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    return json.dumps(data).encode("utf-8")


@dataclass
class Received:
    body: dict
    headers: dict[str, str]


class FakeOpenAI:
    """Scripted OpenAI-compatible server on 127.0.0.1 by default (see module docstring)."""

    def __init__(
        self,
        *,
        latency: float = 0.0,
        default_content: str = "ok",
        port: int = 0,
        keep_requests: bool = True,
        host: str = "127.0.0.1",
    ):
        self.latency = latency
        self.default_content = default_content
        self.responder: Callable[[dict, dict], Answer] | None = None
        self.keep_requests = keep_requests
        self.requests: list[Received] = []
        self.request_count = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._queues: dict[str, collections.deque] = {}
        self._lock = threading.Lock()
        # ``host``: another address of this machine, such as the gateway of a container
        # network a test created, when containers must reach the server.
        self.host = host
        self._server = _Server((host, port), _Handler)
        self._server.fake = self
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- scripting ---------------------------------------------------------------------------
    def script(self, role: str, answers: list[Answer]) -> None:
        """Queue answers for requests whose X-BenchForge-Role is ``role``, in order."""
        with self._lock:
            self._queues.setdefault(role, collections.deque()).extend(answers)

    def remaining(self, role: str) -> int:
        with self._lock:
            return len(self._queues.get(role, ()))

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.request_count = 0
            self.max_in_flight = self.in_flight

    def stats(self) -> dict:
        with self._lock:
            return {
                "requests": self.request_count,
                "in_flight": self.in_flight,
                "max_in_flight": self.max_in_flight,
            }

    # -- called by the handler ---------------------------------------------------------------
    def _enter(self, body: dict, headers: dict[str, str]) -> Answer:
        role = headers.get("x-benchforge-role", "")
        with self._lock:
            self.request_count += 1
            if self.keep_requests:
                self.requests.append(Received(body=body, headers=headers))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            queue = self._queues.get(role)
            if queue:
                return queue.popleft()
        if self.responder is not None:
            return self.responder(body, headers)
        return self.default_content

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Benchmarks open dozens of connections at once; the default backlog of 5 would refuse some.
    request_queue_size = 256
    fake: FakeOpenAI


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    # Headers and body go out in separate writes; with Nagle on, the client's delayed ACK
    # would add ~40 ms to every answer and swamp the latencies under test.
    disable_nagle_algorithm = True

    def log_message(self, format, *args):  # noqa: A002 - quiet: tests read counters, not logs
        pass

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):  # noqa: N802 - http.server's naming
        if self.path.rstrip("/").endswith("/_stats"):
            self._send(200, json.dumps(self.server.fake.stats()).encode())
        else:
            self._send(404, b'{"error":"not found"}')

    def do_POST(self):  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        fake = self.server.fake
        if self.path.rstrip("/").endswith("/_reset"):
            fake.reset_counters()
            self._send(200, b"{}")
            return
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, b'{"error":"not found"}')
            return
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, b'{"error":"request body is not JSON"}')
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        answer = fake._enter(body, headers)
        try:
            if fake.latency:
                time.sleep(fake.latency)
            self._answer(answer, body)
        finally:
            fake._leave()

    def _answer(self, answer: Answer, body: dict) -> None:
        model = str(body.get("model", ""))
        messages = body.get("messages")
        if isinstance(answer, str):
            answer = Reply(content=answer)
        if isinstance(answer, Reply):
            self._send(200, completion_body(model, answer, messages))
            return
        if answer.kind == "delay":
            time.sleep(answer.seconds)
            then = answer.then if isinstance(answer.then, Reply) else Reply(str(answer.then))
            self._send(200, completion_body(model, then, messages))
        elif answer.kind == "status":
            extra = {"Retry-After": answer.retry_after} if answer.retry_after is not None else {}
            self._send(answer.status, answer.body.encode(), extra)
        elif answer.kind == "malformed":
            self._send(200, b'{"id": "chatcmpl-fake", "choices": [{"message": {"content": "cut')
        elif answer.kind == "no_content":
            self._send(200, b'{"id": "chatcmpl-fake", "object": "chat.completion", "choices": []}')
        elif answer.kind == "truncated":
            full = completion_body(model, Reply("this answer never arrives whole"), messages)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(full)))
            self.end_headers()
            self.wfile.write(full[: len(full) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
        elif answer.kind == "reset":
            # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.close_connection = True
            self.connection.close()
        else:
            raise ValueError(f"unknown fault kind {answer.kind!r}")

    def finish(self):
        # The connection may have been cut on purpose (reset / truncated faults).
        with contextlib.suppress(OSError, ValueError):
            super().finish()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible loopback server")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--content", default="ok", help="content of every answer")
    parser.add_argument(
        "--responder",
        default="",
        help="module:name of a responder (a callable, or a class instantiated without "
        "arguments) answering every request instead of --content",
    )
    args = parser.parse_args(argv)
    server = FakeOpenAI(
        latency=args.latency_ms / 1000,
        default_content=args.content,
        port=args.port,
        keep_requests=False,
    )
    if args.responder:
        import importlib

        module, _, name = args.responder.partition(":")
        found = getattr(importlib.import_module(module), name)
        server.responder = found() if isinstance(found, type) else found
    print(f"listening on {server.base_url}", flush=True)
    try:
        server._server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()


if __name__ == "__main__":
    main()
