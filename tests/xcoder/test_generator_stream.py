"""The tool-based generator's output (D.2) at the document's stress sizes: the run's framed test
files are streamed from the sandbox into a temporary file and read back a frame at a time, so a
run may write far more than the 64 MB that used to come back as one string (the real sandbox;
nothing is mocked)."""

from __future__ import annotations

import hashlib
import tracemalloc
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from evolution.llm.parsing import ParseError
from xcoder import services
from xcoder.config import XcoderSettings
from xcoder.engine import cyaron
from xcoder.models import SynthTask, TaskStatus
from xcoder.stages.common import Ctx
from xcoder.stages.generate import generator_limits, run_generator
from xcoder.stages.testfiles import input_of

from .helpers import endpoint, seed_set

MB = 1_000_000
OLD_IN_MEMORY_CAP = 64 * MB  # generator_output_mb's default while a run came back as a string

# Writes ``files`` stress files of ``chars`` characters each, every one different.
MANY_FILES = """
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--seed", type=int, default=42)
parser.add_argument("--files", type=int, default=%d)
args = parser.parse_args()
for k in range(args.files):
    with open("stress_%%02d.in" %% k, "w") as out:
        out.write(("%%02d " %% k) * %d)
"""


def _ctx_and_task(fake_server, **settings) -> tuple[Ctx, SynthTask]:
    campaign = services.xcoder_campaign_create(
        name="generator output",
        seed_set=seed_set(),
        generator_endpoint=endpoint(fake_server, "generator"),
        solver_endpoints=[endpoint(fake_server, "solver-a"), endpoint(fake_server, "solver-b")],
        settings=settings,
    )
    xc = campaign.xcoder
    task = SynthTask.objects.create(
        xcoder=xc, index=0, style="codeforces", status=TaskStatus.WRITTEN
    )
    return Ctx(xc=xc, settings=XcoderSettings.from_dict(campaign.settings)), task


def _scratch_left(data_dir: Path) -> list[Path]:
    return list((data_dir / "xcoder" / "tmp").iterdir())


@pytest.mark.django_db
def test_a_run_above_the_old_in_memory_cap_is_kept_test_by_test(fake_server, settings, tmp_path):
    settings.DATA_DIR = str(tmp_path)
    ctx, task = _ctx_and_task(fake_server)  # the defaults: generator_output_mb 256
    files, chars = 24, 3 * MB
    assert files * chars > OLD_IN_MEMORY_CAP
    assert ctx.settings.generator_output_mb * MB >= files * chars
    tracemalloc.start()
    try:
        tests, errors = run_generator(ctx, task, MANY_FILES % (files, chars // 3))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert errors == []
    assert [t["file_name"] for t in tests] == [f"stress_{k:02d}.in" for k in range(files)]
    for k, test in enumerate(tests):
        expected = (f"{k:02d} " * (chars // 3) + "\n").encode()
        assert test["category"] == "stress"
        assert test["bytes"] == len(expected)
        assert test["sha256"] == hashlib.sha256(expected).hexdigest()
        assert (tmp_path / test["file"]).stat().st_size == len(expected)
    # One test file (its text, its encoding for the file) at a time, not the 72 MB run.
    assert peak < 4 * chars, f"peak {peak / MB:.1f} MB while reading a {files * chars / MB} MB run"
    assert _scratch_left(tmp_path) == []  # the run's temporary file is gone


@pytest.mark.django_db
def test_texts_cross_the_stream_intact(fake_server, settings, tmp_path):
    # Multibyte characters across the 1 MiB pieces of the stream and of the frame reader,
    # bytes that are not UTF-8, and line ends as the wrapper reads its files (universal
    # newlines, as before).
    settings.DATA_DIR = str(tmp_path)
    ctx, task = _ctx_and_task(fake_server)
    code = (
        "with open('stress_accents.in', 'w', encoding='utf-8') as f:\n"
        "    f.write('é€𝄞' * 700_001 + '\\n')\n"
        "with open('nominal_crlf.in', 'wb') as f:\n"
        "    f.write(b'2 3\\r\\n4 5\\r\\n')\n"
        "with open('boundary_bytes.in', 'wb') as f:\n"
        "    f.write(b'\\xff\\xfe 1\\n')\n"
    )
    tests, errors = run_generator(ctx, task, code)
    assert errors == []
    by_name = {t["file_name"]: t for t in tests}
    assert set(by_name) == {"stress_accents.in", "nominal_crlf.in", "boundary_bytes.in"}
    assert input_of(by_name["stress_accents.in"]) == "é€𝄞" * 700_001 + "\n"
    assert input_of(by_name["nominal_crlf.in"]) == "2 3\n4 5\n"
    assert input_of(by_name["boundary_bytes.in"]) == "\ufffd\ufffd 1\n"


@pytest.mark.django_db
def test_a_test_file_above_max_test_mb_is_dropped_the_rest_kept(fake_server, settings, tmp_path):
    settings.DATA_DIR = str(tmp_path)
    ctx, task = _ctx_and_task(fake_server, max_test_mb=1, generator_output_mb=16)
    code = (
        "open('nominal_a.in', 'w').write('1 2\\n')\n"
        "open('stress_big.in', 'w').write('7 ' * 2_500_000)\n"
        "open('complex_b.in', 'w').write('3 4\\n')\n"
    )
    tests, errors = run_generator(ctx, task, code)
    assert [t["file_name"] for t in tests] == ["complex_b.in", "nominal_a.in"]
    assert errors == ["test file stress_big.in dropped: 5,000,000 characters > max_test_mb"]


@pytest.mark.django_db
def test_a_run_above_generator_output_mb_is_refused(fake_server, settings, tmp_path):
    settings.DATA_DIR = str(tmp_path)
    ctx, task = _ctx_and_task(fake_server, max_test_mb=1, generator_output_mb=2)
    tests, errors = run_generator(ctx, task, MANY_FILES % (3, 300_000))  # 2.7 MB
    assert tests == []
    [error] = errors
    assert error.startswith("generator OLE with --seed 42: wrote more than generator_output_mb")
    assert _scratch_left(tmp_path) == []


def test_the_generators_memory_covers_its_output(settings):
    # In the sandbox the files and the stdout memory file are memory of the sandbox.
    s = XcoderSettings.from_dict({"generator_output_mb": 1000, "memory_mb": 768})
    ctx = Ctx(xc=None, settings=s)
    limits = generator_limits(ctx)
    assert limits.memory_mb == 1024 + 1000 + s.max_test_mb
    assert limits.max_output_bytes > 1000 * MB
    # D.2's largest suites (27 tests) at stress sizes of 5 * 10^5 numbers up to 10^9 fit.
    assert XcoderSettings().generator_output_mb * MB > 27 * 5 * 10**5 * 11
    for bad in (1025, 8):
        with pytest.raises(ValidationError, match="generator_output_mb"):
            XcoderSettings.from_dict({"generator_output_mb": bad, "max_test_mb": 16})


FRAMED = (
    "#XCODER-CASE 4 a.in\n1\r\n2"
    "#XCODER-CASE 6 stress_big.in\néééééé"
    "#XCODER-CASE 3 b.in\n€𝄞\n"
    "#XCODER-END 3\n"
)


def test_the_file_reader_reads_the_frames_the_string_reader_reads(tmp_path):
    path = tmp_path / "run.out"
    path.write_bytes(FRAMED.encode())
    from_string = list(cyaron.frames(FRAMED))
    from_file = [(k, n, t) for k, n, _, t in cyaron.frames_in_file(path)]
    assert from_file == from_string
    assert from_string == [
        ("case", "a.in", "1\r\n2"),
        ("case", "stress_big.in", "éééééé"),
        ("case", "b.in", "€𝄞\n"),
    ]
    # Above max_chars a frame is skipped, its size reported.
    skipped = list(cyaron.frames_in_file(path, max_chars=5))
    assert [(n, size, t) for _, n, size, t in skipped] == [
        ("a.in", 4, "1\r\n2"),
        ("stress_big.in", 6, None),
        ("b.in", 3, "€𝄞\n"),
    ]
    for cut in (30, len(FRAMED.encode()) - len("#XCODER-END 3\n")):
        path.write_bytes(FRAMED.encode()[:cut])
        with pytest.raises(ParseError):
            list(cyaron.frames_in_file(path))


def test_the_file_reader_holds_one_frame_and_skips_a_large_one_in_pieces(tmp_path):
    path = tmp_path / "run.out"
    size = 8 * MB
    with open(path, "w", encoding="utf-8") as out:
        for name in ("stress_1.in", "stress_2.in", "stress_3.in"):
            out.write(f"#XCODER-CASE {size} {name}\n")
            out.write("9" * size)
        out.write("#XCODER-END 3\n")
    expected = "9" * size
    tracemalloc.start()
    try:
        for _, _, _, text in cyaron.frames_in_file(path):
            assert text == expected
            del text
        _, read_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        sizes = [size for _, _, size, _ in cyaron.frames_in_file(path, max_chars=MB)]
        _, skip_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sizes == [size] * 3
    assert read_peak < 3 * size  # one frame (and the check's copy), never the 24 MB file
    assert skip_peak < size // 2  # skipped in 1 MiB pieces
