"""Fast mode's reset: what a test can change in the worker's process state through ordinary
means (builtins, sys settings, signal handlers, cwd, environment, imported modules, the
attributes of pre-imported standard modules) recorded and put back after it, cheaply when
nothing changed.
"""

# ruff: noqa: SIM105 - contextlib.suppress would cost an import in every sandbox start.

import builtins
import os
import struct
import sys

from .child import PRELUDE_CACHE
from .protocol import ignore

# The runner forks one "worker" per submission that lowers its limits and installs seccomp like
# a test child, then executes test after test as the runner queues them (it never waits for
# the runner between two): fresh module globals per test, standard streams that are new or
# exactly as made, a per-test CPU limit, and the process state a test can change through
# ordinary means (builtins, sys settings, signal handlers, cwd, environment, imported modules,
# the attributes of pre-imported standard modules) put back after it, cheaply when nothing
# changed. A test that leaves a thread or process behind, crashes, runs out of memory or out of
# time retires the worker; the tests queued behind it go to a new one, forked from the runner.
# What the worker does NOT reset is listed in docs/judge.md.

FAST_RESET_MODULES = (
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
    "io",
    "json",
    "typing",
    "os",
    "time",
)

# Runner <-> worker messages are raw bytes, not JSON (they cost a few microseconds per test).
# Command: <u32 length><the test's input, UTF-8>. Reply: REPLY (lengths of the result, stdout
# and stderr that follow, stdout and stderr sizes, exit code, CPU ms, wall ms, peak RSS kB,
# retire flag), then the function harness's JSON-encoded return value, stdout, stderr.
U32 = struct.Struct(">I")
REPLY = struct.Struct(">IIIQQiddqb")
# A command of this length alone: the test's input is already in the stdin memfd (stdio inputs
# larger than PIPE_INPUT_BYTES, or than the output cap, are written there by the runner).
IN_MEMFD = 0xFFFFFFFF
PIPE_INPUT_BYTES = 256 * 1024


class _DictWatch:
    """Tells cheaply whether any of some dicts changed since ``mark()``: CPython (3.11-3.13)
    gives every dict a version tag that changes on each of its mutations; reading those tags
    costs ~0.1 us per dict where comparing two module dicts costs ~1-2 us. Used only when a
    self-check at start-up shows the tag behaving so on this interpreter (layout, and a change
    on mutation); otherwise every check says "maybe changed" and the caller compares."""

    def __init__(self, dicts):
        self.tags = None
        try:
            import ctypes

            def tag(d):
                return ctypes.c_uint64.from_address(id(d) + 24)

            def used(d):
                return ctypes.c_ssize_t.from_address(id(d) + 16).value

            probe = {"a": 1}
            before = tag(probe).value
            probe["a"] = 2
            after_set = tag(probe).value
            del probe["a"]
            if (
                sys.implementation.name == "cpython"
                and sys.version_info[:2] in ((3, 11), (3, 12), (3, 13))
                and used({"x": 1, "y": 2}) == 2
                and before != after_set != tag(probe).value
                and all(used(d) == len(d) for d in dicts)
            ):
                self.tags = [tag(d) for d in dicts]
        except Exception:
            self.tags = None
        self.marks = None
        self.mark()

    def mark(self):
        if self.tags is not None:
            self.marks = [t.value for t in self.tags]

    def changed(self):
        if self.tags is None:
            return True
        return [t.value for t in self.tags] != self.marks


# What a fast-mode test changed through Python that restore() must put back: set by the
# wrappers of _track (cwd: os.chdir and os.fchdir; timers: signal.setitimer and signal.alarm),
# cleared by restore(). True at first: a worker's first reset does everything.
_TOUCHED = {"cwd": True, "timers": True}
_UNWRAPPED = {}  # (module name, function name): the function _track wrapped


def _track(module, name, what):
    """Replace ``module.name`` with a wrapper that notes ``what`` in _TOUCHED before calling
    through (once per process)."""
    original = getattr(module, name, None)
    if original is None or getattr(original, "_bf_tracks", None):
        return
    _UNWRAPPED.setdefault((module.__name__, name), original)

    def wrapper(*args, **kwargs):
        _TOUCHED[what] = True
        return original(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    wrapper.__doc__ = original.__doc__
    wrapper._bf_tracks = what
    setattr(module, name, wrapper)


class Snapshot:
    """What the worker puts back after every test (taken once, after warming)."""

    def __init__(self, scratch):
        import _signal
        import posix

        # Before the module dicts are copied: os is one of the modules reset after a test, and
        # its saved dict must hold the wrappers.
        for module in (os, posix):
            _track(module, "chdir", "cwd")
            _track(module, "fchdir", "cwd")
        self.scratch = scratch
        self.builtins = dict(builtins.__dict__)
        self.modules = dict(sys.modules)
        self.module_dicts = [
            (sys.modules[name].__dict__, dict(sys.modules[name].__dict__))
            for name in FAST_RESET_MODULES
            if name in sys.modules
        ]
        if "layer" in PRELUDE_CACHE:
            # The prelude's builtins module, shared by the tests (``__builtins__.x = ...``).
            layer = PRELUDE_CACHE["layer"].__dict__
            self.module_dicts.append((layer, dict(layer)))
        self.sys_attrs = {
            name: getattr(sys, name)
            for name in ("displayhook", "excepthook", "breakpointhook", "unraisablehook")
            if hasattr(sys, name)
        }
        self.sys_path = list(sys.path)
        self.sys_meta_path = list(sys.meta_path)
        self.sys_path_hooks = list(sys.path_hooks)
        self.switch_interval = sys.getswitchinterval()
        self.int_digits = getattr(sys, "get_int_max_str_digits", lambda: None)()
        # os.environ's own bytes mapping: comparing it costs a dict comparison, comparing the
        # os.environ mapping decodes every variable (~80 us per test on a loaded host).
        self.environ_data = dict(getattr(os.environ, "_data", {}))
        self.environ = dict(os.environ)
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        # The C module's getsignal: the signal module's wrapper converts every answer to an
        # enum (~1 us per signal).
        self.getsignal, self.setsignal = _signal.getsignal, _signal.signal
        signals, handlers = [], []
        for sig in _signal.valid_signals():
            try:
                handler = _signal.getsignal(sig)
            except (OSError, ValueError):
                continue
            if handler is not None:
                signals.append(sig)
                handlers.append(handler)
        self.signals, self.handlers = signals, handlers
        self.default_handlers = dict(zip(signals, handlers, strict=True))
        self.touched = None  # signals given a handler since the last restore (watch_signals)
        self.setitimer = _signal.setitimer
        self.chdir = _UNWRAPPED[("posix", "chdir")]
        self.timers = (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF)
        self.live_dicts = [live for live, _ in self.module_dicts]
        self.saved_dicts = [saved for _, saved in self.module_dicts]
        self.watch = _DictWatch([builtins.__dict__, sys.modules, *self.live_dicts])

    def watch_signals(self):
        """From now on (in the worker) note every signal given a handler through the signal
        module (``signal.signal`` calls ``_signal.signal``), so that restore() checks those
        instead of every signal (~60 look-ups, a fifth of a trivial test's reset)."""
        import _signal

        touched, setsignal = set(), self.setsignal

        def signal(signalnum, handler):
            touched.add(int(signalnum))
            return setsignal(signalnum, handler)

        signal.__doc__ = setsignal.__doc__
        _signal.signal = signal
        self.touched = touched
        # Timers: _signal's functions and the signal module's copies of them (``from _signal
        # import *``).
        for module in (_signal, sys.modules.get("signal")):
            if module is not None:
                _track(module, "setitimer", "timers")
                _track(module, "alarm", "timers")

    def restore(self, recursion_limit):
        """Put the process back as it was before the test. Cheap when nothing changed: the
        timers and the working directory are put back after a test that set them through
        Python (the wrappers of _track), or that changed an imported module or builtins (it
        may have reached the unwrapped functions: everything is put back then)."""
        changed = self.watch.changed()
        touched = _TOUCHED
        if changed or touched["timers"]:
            for timer in self.timers:
                self.setitimer(timer, 0)
            touched["timers"] = False
        if self.touched is None:
            # map() keeps the per-signal loop in C: ~60 signals checked in a few microseconds.
            if list(map(self.getsignal, self.signals)) != self.handlers:
                for sig, handler in zip(self.signals, self.handlers, strict=True):
                    if self.getsignal(sig) is not handler:
                        ignore(self.setsignal, sig, handler)
        elif self.touched:
            for sig in self.touched:
                handler = self.default_handlers.get(sig)
                if handler is not None and self.getsignal(sig) is not handler:
                    ignore(self.setsignal, sig, handler)
            self.touched.clear()
        sys.settrace(None)
        sys.setprofile(None)
        if changed:
            if builtins.__dict__ != self.builtins:
                builtins.__dict__.clear()
                builtins.__dict__.update(self.builtins)
            modules = sys.modules
            if len(modules) != len(self.modules) or modules != self.modules:
                # Modules a test imported are dropped (the next test imports them afresh, as a
                # forked test would); modules it replaced or removed are put back.
                modules.clear()
                modules.update(self.modules)
            if any(map(dict.__ne__, self.live_dicts, self.saved_dicts)):
                for live, saved in self.module_dicts:
                    if live != saved:
                        live.clear()
                        live.update(saved)
            self.watch.mark()
        if getattr(os.environ, "_data", None) != self.environ_data:
            os.environ.clear()
            os.environ.update(self.environ)
        for name, value in self.sys_attrs.items():
            setattr(sys, name, value)
        sys.path[:] = self.sys_path
        sys.meta_path[:] = self.sys_meta_path
        sys.path_hooks[:] = self.sys_path_hooks
        sys.path_importer_cache.clear()
        sys.setrecursionlimit(recursion_limit)
        sys.setswitchinterval(self.switch_interval)
        if self.int_digits is not None:
            sys.set_int_max_str_digits(self.int_digits)
        os.umask(self.umask)
        if changed or touched["cwd"]:
            self.chdir(self.scratch)
            touched["cwd"] = False
