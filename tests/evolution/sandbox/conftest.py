"""Helpers for the sandbox tests: the REAL default backend, the real docker engine, and host-side
observers."""

from __future__ import annotations

import os
import uuid

import pytest

from evolution.sandbox import Limits, get_backend


@pytest.fixture(scope="session")
def backend():
    """The backend production uses by default (bwrap). Never substituted: if it cannot run
    here the tests fail, they are not skipped."""
    return get_backend("bwrap")


@pytest.fixture
def limits():
    return Limits(time_s=2.0, memory_mb=256)


@pytest.fixture
def marker():
    """A unique token hostile programs stamp on the processes they start (via their argv or
    comm), so the test can look for survivors on the host."""
    return "bfm" + uuid.uuid4().hex[:10]


# The docker backend's tests run against the real engine, with this image unless
# SANDBOX_DOCKER_IMAGE names another (any image with a python3 3.11+ at /usr/bin/python3 or on
# PATH). scripts/bootstrap.sh test starts the engine and builds it (deploy/images/build.sh).
DOCKER_TEST_IMAGE = "benchforge-local/bookworm:latest"
START_THE_ENGINE = (
    "scripts/bootstrap.sh test (as root) starts the Docker engine and builds the sandbox's "
    f"image {DOCKER_TEST_IMAGE} (deploy/images/build.sh)"
)


def docker_test_image() -> str:
    return os.environ.get("SANDBOX_DOCKER_IMAGE") or DOCKER_TEST_IMAGE


@pytest.fixture(scope="session")
def docker_client():
    """A client of the real Docker engine. Never skipped: without an engine (or without the
    image) the docker backend's tests fail, naming how to get them."""
    try:
        import docker

        client = docker.from_env()
        client.ping()
    except Exception as exc:
        pytest.fail(
            f"the docker backend's tests need a running Docker engine: {exc}. {START_THE_ENGINE}",
            pytrace=False,
        )
    image = docker_test_image()
    try:
        client.images.get(image)
    except Exception as exc:
        pytest.fail(
            f"the docker backend's tests need the image {image} on the engine: {exc}. "
            f"{START_THE_ENGINE}, or set SANDBOX_DOCKER_IMAGE to an image with python3",
            pytrace=False,
        )
    yield client
    client.close()


@pytest.fixture(scope="session")
def docker_backend(docker_client):
    """The docker backend on the real engine, its pool shared by a session's tests."""
    from evolution.sandbox.backends.docker import DockerBackend

    backend = DockerBackend(image=docker_test_image())
    yield backend
    backend.shutdown()
