"""Celery discovers ``<app>.tasks``: the evolution app's tasks are the one stream task module
(every kind's steps, the campaign tick, and the older task names as aliases)."""

from evolution.sandbox import tasks as sandbox_tasks  # noqa: F401 - registers the judge's chunk task
from evolution.streams import tasks as stream_tasks  # noqa: F401 - registers them with Celery
