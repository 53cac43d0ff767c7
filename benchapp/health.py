from __future__ import annotations

from django.conf import settings


def broker_reachable() -> tuple[bool, str]:
    """Ask the configured Celery broker for a connection, with a short timeout."""
    from kombu import Connection

    try:
        with Connection(
            settings.CELERY_BROKER_URL,
            transport_options=settings.CELERY_BROKER_TRANSPORT_OPTIONS,
            connect_timeout=2,
        ) as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
        return True, ""
    except Exception as exc:  # any failure means "not reachable"
        return False, exc.__class__.__name__
