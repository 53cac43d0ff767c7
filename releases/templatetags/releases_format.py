from django import template

register = template.Library()


@register.filter
def pct(value) -> str:
    """0.4567 -> "45.7%" (scores are fractions in [0, 1])."""
    try:
        return f"{float(value) * 100:.1f}%"
    except (TypeError, ValueError):
        return "—"


@register.filter
def too_few_for_interval(estimate) -> bool:
    """A mean over fewer than two problems: its bootstrap interval is the value itself
    ("[0.0%, 0.0%]"), which says nothing, so the page says n is too small instead."""
    n = estimate.get("n") if isinstance(estimate, dict) else None
    return isinstance(n, int) and n < 2
