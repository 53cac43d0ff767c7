"""The sandboxed judge: run untrusted Python against tests, isolated, fast and exact.

Public interface (see docs/judge.md)::

    from evolution.sandbox import judge, run_batch, run_to_file, Limits, TestSpec, JudgeResult
    from evolution.sandbox import RunOutcome

The names are imported when first used (PEP 562): the judge's command line imports one
submodule of this package and starts its sandboxes before it imports the rest.
"""

from importlib import import_module

_HOMES = {
    "get_backend": "service",
    "judge": "service",
    "run_batch": "service",
    "run_to_file": "service",
    "set_max_parallel": "service",
    "VERDICTS": "types",
    "JudgeResult": "types",
    "Limits": "types",
    "RunOutcome": "types",
    "SandboxError": "types",
    "SandboxUnavailable": "types",
    "TestSpec": "types",
    "TestVerdict": "types",
}

__all__ = sorted(_HOMES)


def __getattr__(name):
    """A public name, from its module; or a submodule (``sandbox.service``, ``sandbox.compare``),
    as the package used to make available by importing them eagerly."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(import_module(f"{__name__}.{home}"), name)
    else:
        try:
            value = import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__():
    return sorted([*globals(), *_HOMES])
