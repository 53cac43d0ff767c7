"""The contamination screen at corpus scale: indexing, loading and one screening query at 50,000
indexed public problems (target: a query under 50 ms).

The index holds HumanEval (164 real problems, imported through ``import_seeds``) and 49,836
**simulated** public problems, labelled ``simulated`` in their dataset: competitive-programming
statements (Input / Output / Constraints / Sample sections around 60-160 words drawn from a
4,000-word vocabulary) and Python programs of 8-40 lines built from templates with random names,
so shingle counts are those of real records. They are written as seed problems and indexed by
``screening.rebuild`` (what ``manage.py screening_index --rebuild`` runs). A query is a real
statement and program (the labelled set's rewrites and different problems,
``tests/evolution/screening/data/labelled_pairs.txt``) screened with ``screen_record``: the
state check against the stored index, shingling, MinHash, the scan of every row, the names of
the neighbours; median and p95 of 50 queries on a warm process. "cold" is the first query of a
process (the whole stored index read into memory). For comparison, datasketch's in-memory
``MinHashLSH`` (threshold 0.4) built from the same stored signatures of ``LSH_ROWS`` problems,
one field: its build time and the memory it holds (tracemalloc), which the scan avoids
(docs/screening.md, "Why a scan").

Runs in a throwaway database (created and dropped here) so it never touches real data.
"""

from __future__ import annotations

import random
import statistics
import time
import tracemalloc

from bench.support import ROOT, throwaway_database

NAME = "Contamination screen (bench_screening)"
TOTAL = 50_000
QUERY_TARGET_MS = 50.0
QUERIES = 50
LSH_ROWS = 10_000
BATCH = 2_000

_SECTIONS = (
    "Input\n\nThe first line contains {n}. The next line contains {m}.\n\n"
    "Output\n\nPrint {o}.\n\nConstraints\n\n- 1 \\le N \\le {c}\n- All input values are integers."
)


def vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnoprstuvwyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(4000)]


def statement_text(rng: random.Random, words: list[str]) -> str:
    def phrase(lo: int, hi: int) -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(lo, hi)))

    body = ". ".join(phrase(6, 18) for _ in range(rng.randint(4, 8)))
    sections = _SECTIONS.format(
        n=phrase(3, 8), m=phrase(3, 8), o=phrase(3, 8), c=rng.choice([100, 1000, "2 \\times 10^5"])
    )
    sample = " ".join(str(rng.randint(0, 99)) for _ in range(rng.randint(2, 8)))
    return f"{body}.\n\n{sections}\n\nSample Input 1\n\n{sample}\n\nSample Output 1\n\n{rng.randint(0, 9)}\n"


_LINES = (
    "{a} = {b} + {c}",
    "{a} = max({a}, {b} * {c})",
    "{a} = min({b}, {c} - {k})",
    "if {a} > {b}:\n        {c} += {k}",
    "for {a} in range({b}):\n        {c} = ({c} + {a}) % {k}",
    "{a} = sorted({b})",
    "{a}.append({b} // {k})",
    "while {a} > {k}:\n        {a} //= 2",
    "{a} = [{b} * {k} for {b} in {c}]",
    "{a} = sum({b}) - {c}",
)


def _program(rng: random.Random, words: list[str]) -> str:
    names = rng.sample(words, 6)
    lines = ["import sys", "", "", "def main():", "    data = sys.stdin.read().split()"]
    for _ in range(rng.randint(6, 34)):
        a, b, c = rng.sample(names, 3)
        line = rng.choice(_LINES).format(a=a, b=b, c=c, k=rng.randint(1, 1000))
        lines.append("    " + line)
    lines += [f"    print({names[0]})", "", "", "main()"]
    return "\n".join(lines) + "\n"


def _simulated(count: int, *, seed: int = 7) -> None:
    from evolution.models import Problem

    rng = random.Random(seed)
    words = vocabulary(rng)
    rows = [
        Problem(
            title=f"simulated {i}",
            statement=statement_text(rng, words),
            reference_solution=_program(rng, words),
            harness="stdio",
            origin_dataset="simulated",
            origin_id=f"sim-{i}",
        )
        for i in range(count)
    ]
    for start in range(0, len(rows), BATCH):
        Problem.objects.bulk_create(rows[start : start + BATCH])


def _queries():
    import sys

    sys.path.insert(0, str(ROOT))
    from tests.evolution.screening.corpus import labelled_entries

    return labelled_entries()


def _query_ms(entries) -> list[float]:
    from evolution.screening import services

    times = []
    for i in range(QUERIES):
        e = entries[i % len(entries)]
        started = time.perf_counter()
        services.screen_record(statement=e.statement, code=e.code)
        times.append((time.perf_counter() - started) * 1000)
    return times


def _lsh(rows: int) -> tuple[float, float]:
    """Seconds and MB to build datasketch's MinHashLSH over ``rows`` stored statement
    signatures (threshold 0.4, the index's permutations): timed, then built again under
    tracemalloc for its memory."""
    from datasketch import MinHash, MinHashLSH

    from evolution.screening import signatures
    from evolution.screening.models import IndexedProblem

    template = MinHash(
        num_perm=signatures.NUM_PERM, seed=signatures.SEED, scheme=signatures.PERMUTATIONS
    )
    stored = [
        (pk, signatures.from_bytes(data))
        for pk, data in IndexedProblem.objects.order_by("id").values_list(
            "id", "statement_signature"
        )[:rows]
    ]

    def build():
        lsh = MinHashLSH(threshold=0.4, num_perm=signatures.NUM_PERM)
        for pk, values in stored:
            lsh.insert(
                pk,
                MinHash(
                    num_perm=signatures.NUM_PERM,
                    hashvalues=values,
                    permutations=template.permutations,
                    scheme=signatures.PERMUTATIONS,
                ),
            )
        return lsh

    started = time.perf_counter()
    build()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    kept = build()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    return seconds, peak / 2**20


def run(args) -> list[dict]:
    quick = bool(getattr(args, "quick", False))
    total = 5_000 if quick else TOTAL
    lsh_rows = 2_000 if quick else LSH_ROWS
    with throwaway_database("screening"):
        from evolution.importers import import_seeds
        from evolution.screening import index, services

        import_seeds(source="humaneval")
        simulated = total - 164
        started = time.perf_counter()
        _simulated(simulated)
        written = time.perf_counter() - started
        started = time.perf_counter()
        report = services.rebuild()
        indexed = time.perf_counter() - started
        entries = _queries()
        index.forget()
        started = time.perf_counter()
        services.screen_record(statement=entries[0].statement, code=entries[0].code)
        cold = (time.perf_counter() - started) * 1000
        warm = _query_ms(entries)
        matrix, state = index.current()
        mb = matrix.nbytes / 2**20
        started = time.perf_counter()
        import_seeds(
            source="lcb", path=str(ROOT / "tests/evolution/importers/data/lcb_sample.jsonl")
        )
        imported = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        after = services.screen_record(statement=entries[0].statement, code=entries[0].code)
        refreshed = (time.perf_counter() - started) * 1000
        lsh_s, lsh_mb = _lsh(lsh_rows)
    median, p95 = statistics.median(warm), sorted(warm)[int(0.95 * len(warm)) - 1]
    size = f"{state.rows:,} indexed (164 HumanEval + {simulated:,} simulated)"
    return [
        {"measure": "write the simulated problems", "size": size, "value": f"{written:.1f} s"},
        {
            "measure": "index them (screening.rebuild)",
            "size": size,
            "value": f"{indexed:.1f} s ({report.added / indexed:,.0f} problems/s)",
        },
        {
            "measure": "signatures held in memory (both fields, exact and byte copies)",
            "size": size,
            "value": f"{mb:.1f} MB",
        },
        {
            "measure": "screening query, cold (reads the index)",
            "size": size,
            "value": f"{cold:.0f} ms",
        },
        {
            "measure": "screening query, warm: median / p95",
            "size": size,
            "value": f"{median:.1f} / {p95:.1f} ms",
            "target": f"< {QUERY_TARGET_MS:.0f} ms",
            "met": "yes" if median < QUERY_TARGET_MS else "NO",
        },
        {
            "measure": "import one record, then the next query (incremental refresh)",
            "size": f"{after['index']['problems']:,} indexed",
            "value": f"{imported:.0f} ms + {refreshed:.1f} ms",
        },
        {
            "measure": "datasketch MinHashLSH in memory (threshold 0.4, statement field only)",
            "size": f"{lsh_rows:,} problems",
            "value": f"{lsh_s:.1f} s to build, {lsh_mb:.0f} MB",
        },
    ]
