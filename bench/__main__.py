"""Run the benchmarks: ``python -m bench [name ...]``."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")


def _print_table(title: str, rows: list[dict]) -> None:
    print(f"\n## {title}\n")
    if not rows:
        print("(no rows)")
        return
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)

    def fmt(value) -> str:
        if isinstance(value, float):
            return f"{value:.3f}" if abs(value) < 100 else f"{value:.1f}"
        return str(value)

    cells = [[fmt(r.get(c, "")) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("| " + " | ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print("| " + " | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) + " |")


def main() -> int:
    parser = argparse.ArgumentParser(description="BenchForge benchmarks")
    parser.add_argument("names", nargs="*", help="benchmark module names (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    args = parser.parse_args()

    import django

    django.setup()
    import bench

    modules = sorted(
        m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_")
    )
    if args.names:
        modules = [m for m in modules if any(n in m for n in args.names)]
    failed = 0
    for name in modules:
        module = importlib.import_module(f"bench.{name}")
        started = time.perf_counter()
        try:
            rows = module.run(args)
        except Exception as exc:  # one broken benchmark must not hide the others
            print(
                f"\n## {getattr(module, 'NAME', name)}\n\nFAILED: {exc.__class__.__name__}: {exc}"
            )
            failed += 1
            continue
        _print_table(getattr(module, "NAME", name), rows)
        print(f"\n({time.perf_counter() - started:.1f} s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
