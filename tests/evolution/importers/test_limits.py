"""Sizes are bounded: statements, solutions, tests, decompressed payloads and import lines
are refused past their settings while decoding, naming the line and the field."""

from __future__ import annotations

import base64
import json
import zlib

import pytest

from evolution.importers import SeedImportError, import_seeds
from evolution.importers.jsonl import FORMAT
from evolution.models import Problem, TestCase

from .conftest import pack_private, write_lines

pytestmark = pytest.mark.django_db


def _lcb(sample: dict, **changes) -> str:
    return json.dumps({**sample, **changes})


def test_a_statement_past_the_limit_is_refused_naming_line_and_field(settings, lcb_sample):
    settings.MAX_STATEMENT_BYTES = 2048
    ok = _lcb(lcb_sample, question_id="ok")
    big = _lcb(lcb_sample, question_id="big", question_content="x" * 2049)
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=ok + "\n" + big)
    assert (caught.value.line, caught.value.field) == (2, "statement")
    assert "MAX_STATEMENT_BYTES" in str(caught.value)
    assert Problem.objects.count() == 0


def test_multibyte_text_is_measured_in_bytes(settings, lcb_sample):
    settings.MAX_STATEMENT_BYTES = 2048
    # 1,100 characters, 2,200 bytes of UTF-8.
    with pytest.raises(SeedImportError, match="MAX_STATEMENT_BYTES"):
        import_seeds(source="lcb", content=_lcb(lcb_sample, question_content="é" * 1100))


def test_a_hidden_test_past_the_limit_is_refused_naming_the_test(settings, lcb_sample):
    settings.MAX_TEST_BYTES = 4096
    private = pack_private(
        json.dumps([{"input": "1\n" * 4000, "output": "x", "testtype": "stdin"}])
    )
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=_lcb(lcb_sample, private_test_cases=private))
    assert caught.value.line == 1
    assert caught.value.field.startswith("tests[") and caught.value.field.endswith("].input")
    assert TestCase.objects.count() == 0


def test_a_compression_bomb_stops_at_the_decompressed_limit(settings, lcb_sample):
    settings.MAX_DECOMPRESSED_BYTES = 1024 * 1024
    bomb = base64.b64encode(zlib.compress(b"\0" * (50 * 1024 * 1024), 9)).decode()
    assert len(bomb) < 100_000  # a small request...
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=_lcb(lcb_sample, private_test_cases=bomb))
    # ...refused while decompressing, naming the field and the setting.
    assert caught.value.field == "private_test_cases"
    assert "MAX_DECOMPRESSED_BYTES" in str(caught.value)


def test_a_reference_solution_past_the_limit_is_refused(settings, tmp_path):
    settings.MAX_SOLUTION_BYTES = 1024
    record = {
        "format": FORMAT,
        "title": "t",
        "statement": "s",
        "reference_solution": "print(1)\n" * 200,
        "harness": "stdio",
        "origin_id": "x",
        "tests": [],
    }
    path = write_lines(tmp_path / "p.jsonl", [json.dumps(record)])
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="jsonl", path=str(path), set_name="x")
    assert (caught.value.line, caught.value.field) == (1, "reference_solution")


def test_a_line_past_the_line_limit_is_refused_before_it_is_parsed(settings, tmp_path, lcb_sample):
    settings.MAX_IMPORT_LINE_BYTES = 4096
    path = write_lines(
        tmp_path / "lcb.jsonl",
        [_lcb(lcb_sample), _lcb(lcb_sample, question_id="q2", question_content="y" * 5000)],
    )
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", path=str(path))
    assert caught.value.line == 2
    assert "MAX_IMPORT_LINE_BYTES" in str(caught.value)
    with pytest.raises(SeedImportError) as caught:
        import_seeds(source="lcb", content=path.read_text())
    assert caught.value.line == 2


def test_the_api_import_answers_400_naming_line_and_field(settings, personas, client, lcb_sample):
    from accounts.models import APIToken

    settings.MAX_STATEMENT_BYTES = 2048
    _, raw = APIToken.issue(user=personas.admin.user, name="t")
    response = client.post(
        "/api/problem-sets/import",
        {"source": "lcb", "content": _lcb(lcb_sample, question_content="z" * 3000)},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code == 400
    body = json.dumps(response.json())
    assert "line 1" in body and "statement" in body
