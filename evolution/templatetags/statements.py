from django import template
from django.utils.safestring import mark_safe

from evolution.rendering import render_statement

register = template.Library()


@register.filter
def markdown(text: str) -> str:
    """A statement as safe HTML (raw HTML escaped, code escaped, math kept as text)."""
    return mark_safe(render_statement(text or ""))  # noqa: S308 - render_statement escapes
