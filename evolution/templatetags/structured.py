"""Structured values (dicts, lists, nested JSON) shown as tables or collapsible JSON, never as
Python dumps (``{'key': ...}``).

- ``{{ value|data_table }}``: a dict as a two-column table, a list of dicts as a table with a
  column per key, a list of plain values as a comma-separated line; nested values recurse,
  deeper than ``MAX_DEPTH`` they fold into collapsible JSON.
- ``{{ value|json_details:"summary" }}``: a ``<details>`` with the value as indented JSON.
- ``{{ value|inline_facts }}``: a small dict as one line, ``key value · key value``.
"""

from __future__ import annotations

import json

from django import template
from django.utils.html import conditional_escape, format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

register = template.Library()
MAX_DEPTH = 3
MAX_ROWS = 200


def _label(key) -> str:
    return str(key).replace("_", " ")


def _scalar(value) -> SafeString:
    if value is None:
        return mark_safe('<span class="muted">—</span>')
    if isinstance(value, bool):
        return mark_safe("yes" if value else "no")
    if isinstance(value, float):
        return conditional_escape(f"{value:.4g}")
    return conditional_escape(str(value))


def _json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def _details(value, summary: str) -> SafeString:
    return format_html(
        '<details class="json"><summary>{}</summary><pre class="json">{}</pre></details>',
        summary,
        _json(value),
    )


def _is_record_list(value) -> bool:
    return bool(value) and isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _render(value, depth: int) -> SafeString:
    if isinstance(value, dict | list) and depth >= MAX_DEPTH:
        size = len(value)
        noun = "key" if isinstance(value, dict) else "item"
        return _details(value, f"{size} {noun}{'s' if size != 1 else ''} (JSON)")
    if isinstance(value, dict):
        if not value:
            return mark_safe('<span class="muted">none</span>')
        rows = format_html_join(
            "",
            '<tr><th scope="row">{}</th><td>{}</td></tr>',
            ((_label(k), _render(v, depth + 1)) for k, v in list(value.items())[:MAX_ROWS]),
        )
        return format_html('<table class="data-table kv-table"><tbody>{}</tbody></table>', rows)
    if _is_record_list(value):
        keys: list = []
        for row in value:
            keys.extend(k for k in row if k not in keys)
        head = format_html_join("", '<th scope="col">{}</th>', ((_label(k),) for k in keys))
        body = format_html_join(
            "",
            "<tr>{}</tr>",
            (
                (
                    format_html_join(
                        "", "<td>{}</td>", ((_render(row.get(k), depth + 1),) for k in keys)
                    ),
                )
                for row in value[:MAX_ROWS]
            ),
        )
        more = (
            format_html('<p class="muted">{} more not shown</p>', len(value) - MAX_ROWS)
            if len(value) > MAX_ROWS
            else ""
        )
        return format_html(
            '<table class="data-table"><thead><tr>{}</tr></thead><tbody>{}</tbody></table>{}',
            head,
            body,
            more,
        )
    if isinstance(value, list):
        if not value:
            return mark_safe('<span class="muted">none</span>')
        if all(not isinstance(v, dict | list) for v in value):
            return format_html_join(", ", "{}", ((_scalar(v),) for v in value))
        return format_html(
            '<ol class="data-list">{}</ol>',
            format_html_join("", "<li>{}</li>", ((_render(v, depth + 1),) for v in value)),
        )
    return _scalar(value)


@register.filter
def data_table(value) -> SafeString:
    """A structured value as HTML tables (see the module docstring)."""
    return _render(value, 0)


@register.filter
def json_details(value, summary: str = "JSON") -> SafeString:
    """The value as indented JSON inside a collapsed ``<details>``."""
    return _details(value, summary)


@register.filter
def inline_facts(value) -> SafeString:
    """A small dict as ``key value · key value`` (a nested dict in parentheses, a list
    comma-separated); anything else as ``data_table`` shows it."""
    if isinstance(value, list) and all(not isinstance(v, dict | list) for v in value):
        return _render(value, 0)
    if not isinstance(value, dict):
        return _render(value, 0)
    if not value:
        return mark_safe('<span class="muted">—</span>')
    parts = []
    for key, item in value.items():
        if isinstance(item, dict):
            shown = format_html("({})", inline_facts(item))
        elif isinstance(item, list):
            shown = format_html("[{}]", inline_facts(item)) if item else _render(item, 0)
        else:
            shown = _scalar(item)
        parts.append((_label(key), shown))
    return format_html_join(
        " · ", '<span class="fact"><span class="muted">{}</span> {}</span>', parts
    )


def _tree(value) -> SafeString:
    if isinstance(value, dict):
        items = []
        for key, child in value.items():
            if isinstance(child, dict | list) and child:
                items.append(format_html("<li>{}{}</li>", _label(key), _tree(child)))
            elif isinstance(child, dict | list):
                items.append(format_html("<li>{}</li>", _label(key)))
            else:
                items.append(format_html("<li>{}: {}</li>", _label(key), _scalar(child)))
        return format_html('<ul class="tree">{}</ul>', mark_safe("".join(items)))
    if isinstance(value, list):
        return format_html(
            '<ul class="tree">{}</ul>',
            format_html_join(
                "",
                "<li>{}</li>",
                ((_tree(v) if isinstance(v, dict | list) else _scalar(v),) for v in value),
            ),
        )
    return _scalar(value)


@register.filter
def nested_list(value) -> SafeString:
    """A tree of dicts and lists (a feature tree) as nested lists."""
    if not value:
        return mark_safe('<span class="muted">none</span>')
    return _tree(value)
