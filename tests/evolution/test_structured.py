"""Structured values render as tables, lists or collapsible JSON, never as Python dumps; the
crawl's dump check finds a dump and leaves program code alone."""

from __future__ import annotations

from django.template import Context, Template

from evolution.rendering import examples_to_show, shown_in_statement
from evolution.templatetags.structured import data_table, inline_facts, json_details, nested_list
from tests.support.crawl import dumps_in

MEMORY = [
    {"kind": "digest", "counts": {}, "families": {}},
    {"round": 1, "decision": "accepted", "errors": {"WA": 3, "TLE": 5}, "idea": "<b>sort</b>"},
]


def test_a_list_of_records_is_a_table_with_a_column_per_key():
    html = str(data_table(MEMORY))
    assert html.startswith('<table class="data-table"><thead><tr><th scope="col">kind</th>')
    assert '<th scope="col">decision</th>' in html
    assert '<table class="data-table kv-table"><tbody><tr><th scope="row">WA</th><td>3</td>' in html
    assert "&lt;b&gt;sort&lt;/b&gt;" in html  # escaped
    assert dumps_in(f"<main>{html}</main>") == []


def test_deep_values_fold_into_collapsible_json_and_scalars_read_as_words():
    deep = {"a": {"b": {"c": {"d": 1}}}}
    html = str(data_table(deep))
    assert (
        '<details class="json"><summary>1 key (JSON)</summary><pre class="json">{\n  &quot;d&quot;: 1\n}</pre></details>'
        in html
    )
    assert str(data_table({"ok": True, "none": None, "rate": 0.123456})) == (
        '<table class="data-table kv-table"><tbody><tr><th scope="row">ok</th><td>yes</td></tr>'
        '<tr><th scope="row">none</th><td><span class="muted">—</span></td></tr>'
        '<tr><th scope="row">rate</th><td>0.1235</td></tr></tbody></table>'
    )
    assert str(json_details({"x": [1, 2]}, "raw")).startswith(
        '<details class="json"><summary>raw</summary>'
    )


def test_inline_facts_and_trees():
    facts = str(inline_facts({"seed": 1000, "tier": "small", "where": {"file": "g.py"}}))
    assert "seed</span> 1000" in facts and "where</span> (<span" in facts
    assert dumps_in(f"<p>{facts}</p>") == []
    assert str(inline_facts({"source": "writer example"})) == (
        '<span class="fact"><span class="muted">source</span> writer example</span>'
    )
    tree = str(nested_list({"algorithm": {"sorting": ["merge sort"]}, "note": "x"}))
    assert tree == (
        '<ul class="tree"><li>algorithm<ul class="tree"><li>sorting<ul class="tree">'
        "<li>merge sort</li></ul></li></ul></li><li>note: x</li></ul>"
    )


def test_the_dump_check_finds_what_pprint_and_default_reprs_print():
    pprinted = Template("<pre>{{ v|pprint }}</pre>").render(Context({"v": MEMORY}))
    assert dumps_in(pprinted)
    assert dumps_in("<td>{'source': 'writer example'}</td>")
    assert dumps_in("<p>&lt;Problem object at 0x7f3a2b1c&gt;</p>")
    assert dumps_in('<td>{"source": "writer example"}</td>')
    # Program code and test data may hold dict literals.
    assert dumps_in("<pre class=\"code\">d = {'a': 1}</pre><pre class=\"io\">{'x'}</pre>") == []
    assert dumps_in("<pre><code>d = {'a': 1}</code></pre><textarea>{'a': 1}</textarea>") == []


def test_examples_the_statement_already_shows_are_not_repeated():
    statement = "Sum them.\n\nSample Input 1\n\n3\n1 2 3\n\nSample Output 1\n\n6\n"
    assert shown_in_statement(statement, "3\n1 2 3\n", "6\n")
    assert not shown_in_statement(statement, "2\n5 5\n", "10\n")
    # The same numbers elsewhere in the text are not an example.
    assert not shown_in_statement("N is 3 and 1 2 3 then 6", "3\n1 2 3", "6")
    fenced = "## Example\n```\n3\n1 2 3\n```\nOutput:\n```\n6\n```"
    assert shown_in_statement(fenced, "3\n1 2 3", "6")
    examples = [{"input": "3\n1 2 3\n", "output": "6\n"}, {"input": "1\n9\n", "output": "9\n"}]
    assert examples_to_show(statement, examples) == [examples[1]]
