from django import template

register = template.Library()


@register.filter
def pct(value) -> str:
    """0.4567 -> "45.7%" (scores are fractions in [0, 1])."""
    try:
        return f"{float(value) * 100:.1f}%"
    except (TypeError, ValueError):
        return "—"
