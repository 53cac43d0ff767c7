"""What ``make test``'s xdist workers are given so that they never share Redis or files."""

from __future__ import annotations

import os

import pytest
from django.conf import settings

from tests.shards import shard_environment, worker_number

BASE = {"REDIS_URL": "redis://127.0.0.1:6379/0", "BENCHFORGE_DATA_DIR": "/srv/bf/var/test"}


def test_the_first_worker_and_a_run_without_xdist_keep_the_environment():
    assert shard_environment(BASE, 0) == {}


def test_a_later_worker_gets_the_next_redis_index_and_its_own_data_directory():
    assert shard_environment(BASE, 1) == {
        "REDIS_URL": "redis://127.0.0.1:6379/1",
        "BENCHFORGE_DATA_DIR": "/srv/bf/var/test-gw1",
    }
    with_password = {"REDIS_URL": "redis://:secret@db.example:6380/3"}
    assert shard_environment(with_password, 2) == {"REDIS_URL": "redis://:secret@db.example:6380/5"}
    assert shard_environment({"REDIS_URL": "redis://127.0.0.1:6379"}, 1) == {
        "REDIS_URL": "redis://127.0.0.1:6379/1"
    }


def test_a_worker_whose_index_would_reach_the_rehearsals_indexes_is_refused():
    # Indexes 8 and up are the production rehearsal's (its own index plus eight).
    with pytest.raises(RuntimeError, match="no room for xdist worker gw3"):
        shard_environment({"REDIS_URL": "redis://127.0.0.1:6379/5"}, 3)


def test_this_process_runs_with_its_workers_settings():
    number = worker_number()
    assert os.environ.get("PYTEST_XDIST_WORKER", "gw0") == f"gw{number}"
    if number:
        assert int(settings.REDIS_URL.rsplit("/", 1)[1]) >= number
        assert str(settings.DATA_DIR).endswith(f"-gw{number}")
    else:
        assert not str(settings.DATA_DIR).endswith("-gw0")
