"""The leaderboard upload: lines holding U+2028 are valid JSONL; oversized solutions and
files are refused naming the line and the field."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from releases import leaderboard
from releases.models import LeaderboardSample


def test_a_line_holding_u2028_inside_a_string_is_one_valid_line(frozen):
    world, release = frozen
    qid = world.problem("E-OK").public_id
    code = "# a comment\u2028with a line separator\nprint(1)\n"
    content = json.dumps({"question_id": qid, "code_list": [code]}, ensure_ascii=False)
    assert "\u2028" in content

    run = leaderboard.run_create_from_upload(release=release, label="u2028", content=content)

    assert LeaderboardSample.objects.get(run=run).code == code


def test_a_solution_past_the_limit_is_refused_naming_line_and_field(frozen, settings):
    settings.MAX_SOLUTION_BYTES = 1024
    world, release = frozen
    qid = world.problem("E-OK").public_id
    ok = json.dumps({"question_id": world.problem("S2").public_id, "code_list": ["print(1)"]})
    big = json.dumps({"question_id": qid, "code_list": ["x = 1\n", "#" * 2000]})
    with pytest.raises(ValidationError, match=r"line 2: code_list\[1\] is larger than 1024"):
        leaderboard.run_create_from_upload(release=release, label="x", content=ok + "\n" + big)


def test_an_upload_past_the_file_limit_is_refused_with_a_message(frozen, personas, settings):
    settings.MAX_UPLOAD_BYTES = 2048
    world, release = frozen
    upload = SimpleUploadedFile("big.jsonl", b"{}\n" * 1000, content_type="application/json")
    response = personas.curator.client.post(
        f"/curate/releases/{release.pk}/upload/", {"label": "big", "file": upload}, follow=True
    )
    assert response.status_code == 200
    assert "MAX_UPLOAD_BYTES" in response.content.decode()
