"""A NUL inside an uploaded or imported file is a 4xx naming the file, the line and the field,
never a 500 or an import that dies on the database (issue #34, finding 5). PostgreSQL stores
no U+0000 in text: a JSON line's ``\\u0000`` escape decodes to one just as a raw NUL byte is
one."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from benchapp.models import SeedImportJob
from benchapp.staff import imports
from evolution.models import Problem

DATA = Path(__file__).resolve().parents[1] / "evolution" / "importers" / "data"
LCB = DATA / "lcb_sample.jsonl"
QUESTION = json.loads(LCB.read_text().splitlines()[0])["question_id"]


def _upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


def _solutions(**changes) -> bytes:
    line = {"question_id": QUESTION, "solution": "print('YES')\n", **changes}
    return (json.dumps(line) + "\n").encode()


def _lcb_with_nul_title() -> bytes:
    row = json.loads(LCB.read_text().splitlines()[0])
    row["question_title"] += "\u0000"
    return (json.dumps(row) + "\n").encode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("solutions", "where"),
    [
        (b'{"question_id": "1873_A", "solution": "x\x00"}\n', "uploaded file 'sols.jsonl', line 1"),
        (
            _solutions(solution="print(1)\u0000"),
            "uploaded file 'sols.jsonl', line 1, field 'solution'",
        ),
        (
            b"\n" + _solutions(**{"note\u0000": 1}),
            "uploaded file 'sols.jsonl', line 2, field 'note\\x00'",
        ),
    ],
    ids=["raw-byte", "escaped-in-a-value", "escaped-in-a-key"],
)
def test_the_import_page_refuses_a_solutions_file_holding_a_nul(personas, solutions, where):
    response = personas.admin.client.post(
        reverse("staff:import_new"),
        {
            "source": "lcb",
            "file": _upload("lcb.jsonl", LCB.read_bytes()),
            "solutions": _upload("sols.jsonl", solutions),
        },
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert where in text and "contains a NUL character (U+0000)" in text, text
    assert not SeedImportJob.objects.exists()


@pytest.mark.django_db
def test_the_import_page_refuses_a_seed_file_holding_a_nul(personas):
    response = personas.admin.client.post(
        reverse("staff:import_new"),
        {"source": "lcb", "file": _upload("lcb.jsonl", _lcb_with_nul_title())},
    )
    assert response.status_code == 400
    assert "uploaded file 'lcb.jsonl', line 1, field 'question_title'" in response.content.decode()
    assert not SeedImportJob.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_gzipped_upload_holding_a_nul_fails_its_import_naming_line_and_field():
    """A .gz upload is bytes to the edge: its importer refuses the NUL, naming where, instead
    of dying on the database with nothing said."""
    job = imports.import_job_create(
        source="lcb", upload=_upload("lcb.jsonl.gz", gzip.compress(_lcb_with_nul_title()))
    )
    assert imports.import_job_run(job.pk) == "failed"
    job.refresh_from_db()
    assert (job.error_line, job.error_field) == (1, "question_title")
    assert "NUL character" in job.error
    assert not Problem.objects.exists()


@pytest.mark.django_db
def test_the_import_api_names_the_line_and_field_of_an_escaped_nul(personas):
    url = "/api/problem-sets/import"
    seeds = personas.admin.client.post(
        url,
        json.dumps({"source": "lcb", "content": _lcb_with_nul_title().decode()}),
        content_type="application/json",
    )
    assert seeds.status_code == 400
    assert seeds.json()["line"] == 1 and seeds.json()["field"] == "question_title"
    assert "NUL character" in seeds.json()["detail"]
    solutions = personas.admin.client.post(
        url,
        json.dumps(
            {
                "source": "lcb",
                "content": LCB.read_text(),
                "solutions": _solutions(solution="print(1)\u0000").decode(),
            }
        ),
        content_type="application/json",
    )
    assert solutions.status_code == 400
    body = solutions.json()
    assert body["field"] == "solutions" and "solutions line 1" in body["detail"]
    assert "NUL character" in body["detail"]
    assert not Problem.objects.exists()


@pytest.mark.django_db
def test_a_leaderboard_upload_holding_a_nul_is_a_400_not_a_500(personas):
    from releases.models import Benchmark, Release
    from tests.releases.builders import crafted_world

    world = crafted_world()
    client = personas.curator.client
    client.post(reverse("releases:benchmark_new"), {"name": "NUL bench"})
    client.post(
        reverse("releases:release_new"),
        {
            "benchmark": Benchmark.objects.get().pk,
            "version": "1.0.0",
            "campaigns": [world.campaign.pk],
        },
    )
    release = Release.objects.get()
    rules = '{"require_independent": false, "selection_time_reason": "pilot"}'
    client.post(
        reverse("releases:release_rules", args=[release.pk]), {"mode": "json", "rules": rules}
    )
    client.post(f"/api/releases/{release.pk}/gate")
    assert client.post(f"/api/releases/{release.pk}/freeze").status_code == 200
    item = release.items.first()
    line = {"question_id": item.public_id, "code_list": ["print(1)\n", "print(2)\u0000\n"]}
    response = client.post(
        reverse("releases:release_upload", args=[release.pk]),
        {"label": "nul-model", "file": _upload("solutions.jsonl", json.dumps(line).encode())},
    )
    assert response.status_code == 400
    assert "uploaded file 'solutions.jsonl', line 1, field 'code_list[1]'" in (
        response.content.decode()
    )
