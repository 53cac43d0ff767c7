"""Structured output helpers: JSON objects and code blocks out of model answers."""

from __future__ import annotations

import pytest

from evolution.llm import LLMError, ParseError, extract_code, extract_json, mark_unparsable
from evolution.models import LLMCall
from tests.factories import LLMCallFactory


def test_it_reads_json_from_a_fenced_block():
    text = 'Here is the plan:\n```json\n{"idea": "add a modulus", "level": 3}\n```\nDone.'
    assert extract_json(text) == {"idea": "add a modulus", "level": 3}


def test_it_prefers_the_json_tagged_block_over_other_blocks():
    text = '```python\nx = {"a": 1}\n```\n```json\n{"b": 2}\n```'
    assert extract_json(text) == {"b": 2}


def test_it_reads_a_bare_json_object_surrounded_by_prose():
    text = 'Sure! {"verdict": "valid", "notes": "braces } inside strings"} Hope this helps.'
    assert extract_json(text) == {"verdict": "valid", "notes": "braces } inside strings"}


def test_it_reads_an_answer_that_is_only_json():
    assert extract_json('  {"ok": true}\n') == {"ok": True}


def test_it_rejects_an_answer_without_a_json_object():
    with pytest.raises(ParseError, match="no JSON object"):
        extract_json("I cannot help with that.")


def test_it_rejects_json_that_is_not_an_object():
    with pytest.raises(ParseError, match="list"):
        extract_json("[1, 2, 3]")


def test_it_returns_the_only_python_block():
    text = "Solution:\n```python\ndef f(x):\n    return x * 2\n```\n"
    assert extract_code(text) == "def f(x):\n    return x * 2\n"


def test_it_returns_the_last_python_block_when_the_answer_revises_itself():
    text = "```python\nprint(1)\n```\nWait, fix:\n```py\nprint(2)\n```"
    assert extract_code(text) == "print(2)\n"


def test_it_ignores_blocks_in_other_languages():
    text = "```text\n3\n```\n```\nprint(3)\n```"
    assert extract_code(text) == "print(3)\n"


def test_it_rejects_several_untagged_blocks_as_ambiguous():
    text = "```\nprint(1)\n```\nor\n```\nprint(2)\n```"
    with pytest.raises(ParseError, match="2 untagged code blocks"):
        extract_code(text)


def test_it_rejects_an_answer_without_a_code_block():
    with pytest.raises(ParseError, match="no fenced python code block"):
        extract_code("def f(): pass")


def test_it_rejects_an_answer_with_only_other_languages():
    with pytest.raises(ParseError, match="only: cpp"):
        extract_code("```cpp\nint main(){}\n```")


def test_it_rejects_a_code_block_cut_off_mid_answer():
    with pytest.raises(ParseError, match="never closed"):
        extract_code("```python\ndef f():\n    return")


def test_it_keeps_backticks_inside_a_longer_fence():
    text = "````python\ns = '```'\nprint(s)\n````"
    assert extract_code(text) == "s = '```'\nprint(s)\n"


def test_a_parse_error_is_an_llm_error():
    assert issubclass(ParseError, LLMError)


@pytest.mark.django_db
def test_it_marks_a_call_unparsable_with_the_reason():
    call = LLMCallFactory(status="ok")

    mark_unparsable(call.pk, "no fenced python code block in the answer")

    call.refresh_from_db()
    assert call.status == LLMCall.Status.UNPARSABLE
    assert call.error == "no fenced python code block in the answer"


@pytest.mark.django_db
def test_it_reports_marking_an_unknown_call():
    with pytest.raises(LLMError, match="does not exist"):
        mark_unparsable(987654321, "whatever")
