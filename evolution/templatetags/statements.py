from django import template
from django.utils.safestring import mark_safe

from evolution.rendering import render_statement

register = template.Library()


@register.filter
def markdown(text: str, title: str = "") -> str:
    """A statement as safe HTML (raw HTML escaped, code escaped, math kept as text);
    ``{{ statement|markdown:title }}`` drops a leading heading that repeats the page's title."""
    return mark_safe(render_statement(text or "", title=title or ""))  # noqa: S308 - escapes
