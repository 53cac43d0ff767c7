import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchapp.settings")

app = Celery("benchapp")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
