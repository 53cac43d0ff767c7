"""run_to_file: one run's stdout streamed from the sandbox into a host file, piece by piece,
never held whole in the host's memory (the real bwrap backend; nothing is mocked)."""

from __future__ import annotations

import hashlib
import struct
import tracemalloc

import pytest

from evolution.sandbox import Limits, run_batch, run_to_file

MiB = 1 << 20

# Writes ``blocks`` blocks of 1 MiB, each different (its number in every 4-byte word) so a
# piece lost, doubled or reordered changes the hash, then a tail that is not UTF-8.
WRITER = """
import struct, sys
blocks = int(sys.argv[1])
out = sys.stdout.buffer
for k in range(blocks):
    out.write(struct.pack(">I", k) * (1 << 18))
out.write(bytes(range(256)) + b"\\xff\\xfe\\x80 not utf-8\\n")
out.flush()
"""


def _expected(blocks: int) -> bytes:
    body = b"".join(struct.pack(">I", k) * (1 << 18) for k in range(blocks))
    return body + bytes(range(256)) + b"\xff\xfe\x80 not utf-8\n"


def _sha256(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for piece in iter(lambda: handle.read(MiB), b""):
            digest.update(piece)
    return digest.hexdigest()


def test_a_large_stdout_arrives_in_the_file_byte_for_byte_without_filling_the_heap(
    backend, tmp_path
):
    blocks = 64  # 64 MiB plus the tail
    expected = _expected(blocks)
    size, digest = len(expected), hashlib.sha256(expected).hexdigest()
    del expected
    path = tmp_path / "stdout.bin"
    limits = Limits(time_s=30.0, memory_mb=512, max_output_bytes=100 * MiB)
    tracemalloc.start()
    try:
        outcome = run_to_file(
            WRITER, "", path, harness="stdio", limits=limits, argv=[str(blocks)], backend=backend
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert outcome.status == "OK", outcome.stderr
    assert outcome.stdout == ""
    assert path.stat().st_size == size
    assert _sha256(path) == digest
    # One piece (1 MiB, its base64 text and JSON frame) at a time, not the 64 MiB run.
    assert peak < 12 * MiB, f"host heap peaked at {peak / MiB:.1f} MiB"


def test_a_run_above_the_cap_is_ole_and_the_file_holds_the_first_bytes(backend, tmp_path):
    path = tmp_path / "stdout.bin"
    limits = Limits(time_s=20.0, memory_mb=256, max_output_bytes=3 * MiB)
    outcome = run_to_file(
        WRITER, "", path, harness="stdio", limits=limits, argv=["8"], backend=backend
    )
    assert outcome.status == "OLE"
    written = path.read_bytes()
    assert 0 < len(written) <= 3 * MiB
    assert written == _expected(8)[: len(written)]


def test_stdin_argv_stderr_and_exit_status_are_reported_as_run_batch_reports_them(
    backend, tmp_path
):
    code = "import sys\nprint(sys.argv[1:], input())\nprint('warn', file=sys.stderr)\nsys.exit(3)\n"
    path = tmp_path / "out.txt"
    limits = Limits(time_s=5.0, memory_mb=256)
    outcome = run_to_file(
        code, "hello\n", path, harness="stdio", limits=limits, argv=["-x"], backend=backend
    )
    assert outcome.status == "RE" and outcome.exit_code == 3
    assert "warn" in outcome.stderr
    assert path.read_text() == "['-x'] hello\n"


def test_a_compile_error_is_ce_and_leaves_the_file_empty(backend, tmp_path):
    path = tmp_path / "out.txt"
    outcome = run_to_file(
        "def (:", "", path, harness="stdio", limits=Limits(time_s=5.0), backend=backend
    )
    assert outcome.status == "CE" and "SyntaxError" in outcome.stderr
    assert path.read_bytes() == b""


def test_run_batch_still_returns_stdout_inline_after_a_streamed_run(backend, tmp_path):
    # The same pooled sandboxes serve both: a streamed run leaves nothing behind that changes
    # the next plain run (single test, fork mode, and several tests).
    limits = Limits(time_s=5.0, memory_mb=256)
    path = tmp_path / "out.txt"
    assert run_to_file("print('x' * 10)", "", path, harness="stdio", limits=limits).status == "OK"
    assert path.read_text() == "x" * 10 + "\n"
    [one] = run_batch("print(input()[::-1])", ["abc"], harness="stdio", limits=limits)
    assert (one.status, one.stdout) == ("OK", "cba\n")
    many = run_batch(
        "print(int(input()) * 3)",
        [str(n) for n in range(5)],
        harness="stdio",
        limits=limits,
        backend=backend,
    )
    assert [(o.status, o.stdout) for o in many] == [("OK", f"{n * 3}\n") for n in range(5)]


def test_the_function_harness_is_refused(tmp_path):
    with pytest.raises(ValueError, match="stdio or assert"):
        run_to_file("def f(): return 1", "", tmp_path / "x", harness="function", limits=Limits())


def test_the_unsafe_and_docker_backends_stream_the_same_bytes(tmp_path):
    # Every backend runs the same runner (evolution/sandbox/inside/): the chunk frames cross docker's multiplexed
    # attach stream (here its SDK surface over a local process) and the unsafe backend's pipes.
    from evolution.sandbox.backends.docker import DockerBackend
    from evolution.sandbox.backends.unsafe import UnsafeBackend

    from .test_docker import FakeClient

    expected = _expected(3)
    limits = Limits(time_s=20.0, memory_mb=256, max_output_bytes=8 * MiB)
    backends = {
        "unsafe": UnsafeBackend(allow=True),
        "docker": DockerBackend(client=FakeClient(), image="python:3.11-slim"),
    }
    for name, backend in backends.items():
        path = tmp_path / f"{name}.bin"
        outcome = run_to_file(
            WRITER, "", path, harness="stdio", limits=limits, argv=["3"], backend=backend
        )
        assert outcome.status == "OK", (name, outcome.stderr)
        assert path.read_bytes() == expected, name


def test_a_chunk_not_asked_for_of_another_test_or_malformed_is_a_sandbox_error():
    from evolution.sandbox import SandboxError
    from evolution.sandbox.service import chunk_of

    assert chunk_of({"i": 0, "chunk": "aGk="}, 0, True) == b"hi"
    for frame, index, wanted in (
        ({"i": 1, "chunk": "aGk="}, 0, True),
        ({"i": 0, "chunk": "aGk="}, 0, False),
        ({"i": 0, "chunk": "a"}, 0, True),
        ({"i": 0, "chunk": 7}, 0, True),
    ):
        with pytest.raises(SandboxError):
            chunk_of(frame, index, wanted)
