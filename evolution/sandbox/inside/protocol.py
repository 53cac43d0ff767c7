"""The runner's protocol with the host, its exit codes and the low-level I/O both ends of a
frame use (this module is also what the host imports for the protocol's fields).

Protocol (all integers big-endian), frames ``<u32 length><json>``:
- runner -> host on fd 1: ``{"ready": ...}`` first (the host may now place the process tree
  into cgroups); then per submission ``{"compiled": true}`` or ``{"ce": message}``, the tests'
  outcomes in order, and ``{"done": true}``. A fork per test sends one ``{"i": index,
  "status": ...}`` frame per test; the fast mode sends ``{"i": first index, "outcomes": [row,
  ...]}`` frames (OUTCOME_FIELDS), as many rows as are ready. With ``"stream_stdout": true`` in
  the job header (fork per test), a test's stdout comes before its outcome frame as ``{"i":
  index, "chunk": base64 text}`` frames of up to STREAM_CHUNK bytes each, in order (at most
  ``max_output_bytes`` in all), and the outcome's ``"stdout"`` is empty. In factory mode a
  ``{"lost": status}`` frame says the submission's runner died (the host discards the sandbox).
- host -> runner on fd 0: per submission the job header (``code``, ``harness``, limits,
  ``isolation``, ``stop_on_failure``, ...), the inputs (``{"input": str}`` frames, or
  ``{"inputs": [str, ...]}`` in fast mode), then ``{"end": true}`` (``"stop": true`` abandons
  what is still running). For a fork per test the runner reads one input at a time, so that a
  forked test never holds later tests' inputs; the fast mode reads ahead (see FastWorker).
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import json
import os
import select
import struct

# Exit codes the child uses to tell the runner why it stopped (a solution that fakes one of
# them only misreports its own failure).
EXIT_ASSERT = 112
EXIT_MEMORY = 113
EXIT_INTERNAL = 114
EXIT_HOST_GONE = 115
EXIT_CHANNEL = 116  # fast mode: the test closed or replaced the worker's descriptors

# LiveCodeBench runs every stdio and call-based solution after this prelude (testing_util.py
# ``import_string``); solutions written for it rely on these names being present.
LCB_PRELUDE = (
    "from string import *\nfrom re import *\nfrom datetime import *\n"
    "from collections import *\nfrom heapq import *\nfrom bisect import *\n"
    "from copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom io import *\nfrom sys import *\nfrom json import *\n"
    "from builtins import *\nfrom typing import *\nimport string\nimport re\n"
    "import datetime\nimport collections\nimport heapq\nimport bisect\nimport copy\n"
    "import math\nimport random\nimport statistics\nimport itertools\nimport functools\n"
    "import operator\nimport io\nimport sys\nimport json\nsys.setrecursionlimit(50000)\n"
)
WARM_MODULES = [
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "typing",
    "decimal",
    "fractions",
    "array",
    "dataclasses",
    "enum",
]

STDERR_KEEP = 8192
# Bytes of a test's stdout per ``chunk`` frame when the host asks for it streamed.
STREAM_CHUNK = 1 << 20
# The columns of an outcome row in a fast-mode ``outcomes`` frame (service.py reads them).
OUTCOME_FIELDS = (
    "status",
    "stdout",
    "stderr",
    "time_ms",
    "cpu_ms",
    "memory_kb",
    "exit_code",
    "signal",
    "internal",
)
STATE = {}  # process-wide handles set up once by main()


def ignore(fn, *args):
    """Call fn, swallowing OSError/ValueError (contextlib costs an import we avoid)."""
    try:
        fn(*args)
    except (OSError, ValueError):
        pass


def name_process(name):
    """The process's name in ps and perf (PR_SET_NAME): bf-factory, bf-middle, bf-runner,
    bf-worker (fast mode) or bf-test (a forked test)."""
    libc = STATE.get("libc")
    if libc is not None:
        libc.prctl(15, name, 0, 0, 0)


def print_traceback():
    import traceback  # only on the error path: importing it costs ~5 ms per sandbox

    traceback.print_exc()


def _read_exact(fd, n):
    chunks = []
    while n:
        chunk = os.read(fd, n)
        if not chunk:
            raise EOFError("host closed the job stream")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def recv(fd):
    (length,) = struct.unpack(">I", _read_exact(fd, 4))
    return json.loads(_read_exact(fd, length))


def encode_frame(obj):
    data = json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def write_all(fd, data):
    while data:
        written = os.write(fd, data)
        data = data[written:]


def send(fd, obj):
    write_all(fd, encode_frame(obj))


def exit_if_host_gone(events, watch):
    """Pool mode (docker): end this runner, PID 1 of its container, and with it every process
    in it, when the host's end of the job stream is gone (``watch`` hung up in ``events``, a
    poll's answer). The host is gone (killed, or it closed the sandbox): nobody reads what the
    test would report, and the container must not outlive it by the tests still queued."""
    for fd, mask in events:
        if fd == watch and mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
            os._exit(EXIT_HOST_GONE)


def load_libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def write_file(path, data):
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
