from datetime import UTC, datetime

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def epoch_time(value) -> str:
    """A Unix time (as worker heartbeats carry it) in the site's time zone."""
    if value in (None, ""):
        return ""
    moment = datetime.fromtimestamp(float(value), tz=UTC)
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M:%S")
