import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")
# Celery's Django fix-up runs every system check when a worker loads its tasks; the URL checks
# import the whole web layer (the API, every app's routers and services) into each worker, which
# serves none of it. Deployments run `python manage.py check` instead.
os.environ.setdefault("CELERY_SKIP_CHECKS", "1")

app = Celery("benchapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Each worker records Celery's heartbeat with its queues for the workers page (evolution.workers).
from evolution.workers import connect_worker_signals  # noqa: E402

connect_worker_signals()
