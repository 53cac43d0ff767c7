"""The runner is the modules of evolution/sandbox/inside/, shipped to the sandbox as ONE program.

The host imports them as a package (it reads the protocol's fields from ``inside.protocol``);
the sandbox runs ``inside.bundle()``: their sources in order with their imports of each other
left out. Both readings mean the same program only while no two modules define the same name
and a module imports from earlier ones alone; and the sandbox's interpreter has nothing of the
project, so the modules import the standard library only.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from evolution.sandbox import inside
from evolution.sandbox.backends.base import RUNNER_SOURCE

HERE = Path(inside.__file__).parent


def _module(name: str) -> ast.Module:
    return ast.parse((HERE / f"{name}.py").read_text())


def _defined(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def test_every_module_is_in_the_bundle_in_order():
    files = sorted(p.stem for p in HERE.glob("*.py") if p.stem != "__init__")
    assert sorted(inside.MODULES) == files
    assert inside.bundle() == RUNNER_SOURCE
    positions = [RUNNER_SOURCE.index(f"# --- inside/{name}.py\n") for name in inside.MODULES]
    assert positions == sorted(positions)
    compile(RUNNER_SOURCE, "<runner>", "exec")
    # The docker backend passes the program as one argument (``-c``); Linux refuses an argument
    # of more than 32 pages (MAX_ARG_STRLEN, 128 KiB).
    assert len(RUNNER_SOURCE.encode()) < 128 * 1024


def test_no_two_modules_define_the_same_name():
    seen: dict[str, str] = {}
    clashes = []
    for name in inside.MODULES:
        for defined in _defined(_module(name)):
            if defined in seen:
                clashes.append(f"{defined}: {seen[defined]} and {name}")
            seen[defined] = name
    assert not clashes, clashes


def test_modules_import_the_standard_library_and_earlier_modules_only():
    wrong = []
    for position, name in enumerate(inside.MODULES):
        for node in ast.walk(_module(name)):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                if node.module not in inside.MODULES[:position]:
                    wrong.append(f"{name} imports .{node.module}")
            elif isinstance(node, ast.ImportFrom) and node.level > 1:
                wrong.append(f"{name} imports from the project")
            elif isinstance(node, ast.Import | ast.ImportFrom):
                roots = (
                    [a.name.split(".")[0] for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module.split(".")[0]]
                )
                wrong += [f"{name} imports {r}" for r in roots if r not in sys.stdlib_module_names]
    assert not wrong, wrong


def test_the_bundle_defines_what_the_modules_define_and_keeps_no_sibling_import():
    bundled = ast.parse(RUNNER_SOURCE)
    expected = set().union(*(_defined(_module(name)) for name in inside.MODULES))
    assert _defined(bundled) == expected
    assert not [n for n in ast.walk(bundled) if isinstance(n, ast.ImportFrom) and n.level]
