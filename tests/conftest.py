"""Shared fixtures: the database must be PostgreSQL; personas for permission tests."""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from unittest import mock

import pytest
from django.conf import settings
from django.test import Client

from accounts.services import user_create

# The suite's model endpoints are the loopback fake server (tests/support/fake_openai.py):
# loopback is allowed explicitly, here and in every process the tests start (workers, the
# documented commands), and nothing else private (docs/security.md, "Model endpoints").
LOOPBACK_NETWORKS = "127.0.0.0/8,::1/128"


def pytest_configure(config):
    engine = settings.DATABASES["default"]["ENGINE"]
    if not engine.endswith("postgresql"):
        raise pytest.UsageError(
            "The test suite runs against PostgreSQL only. Set DATABASE_URL=postgres://postgres@127.0.0.1:5432/benchforge "
            "(make test does this)."
        )
    _flush_as_owner()
    _allow_loopback_endpoints()
    _patient_browsers()
    _browser_blocks_close_their_connections()


# On a loaded machine (load 10 on two cores) a cold chart page took more than Playwright's
# 30 s to load and an assertion more than its 5 s to come true: every page the browser tests
# open waits up to BROWSER_WAIT_MS for navigation and actions, every expect() up to
# BROWSER_EXPECT_MS. A broken page still fails, later.
BROWSER_WAIT_MS = 120_000
BROWSER_EXPECT_MS = 30_000


def _patient_browsers() -> None:
    from playwright.sync_api import Browser, BrowserContext, expect

    expect.set_options(timeout=BROWSER_EXPECT_MS)
    for owner in (Browser, BrowserContext):
        if getattr(owner.new_page, "patient", False):
            continue

        def new_page(self, *args, _original=owner.new_page, **kwargs):
            page = _original(self, *args, **kwargs)
            page.set_default_timeout(BROWSER_WAIT_MS)
            page.set_default_navigation_timeout(BROWSER_WAIT_MS)
            return page

        new_page.patient = True
        owner.new_page = new_page


def _browser_blocks_close_their_connections() -> None:
    """Inside ``sync_playwright()`` an event loop is marked running in the test's thread, so the
    ORM calls a browser test makes there get connections of their own (asgiref's thread-critical
    Local turns into a context variable), which nothing closed: each outlived its test and the
    run ended unable to drop the test database. They are closed as the block ends, while the
    loop is still marked running and they can be reached."""
    from django.db import connections
    from playwright.sync_api import sync_playwright

    PlaywrightContextManager = type(sync_playwright())  # constructing it starts nothing
    if getattr(PlaywrightContextManager.__exit__, "closes_connections", False):
        return
    original = PlaywrightContextManager.__exit__

    def __exit__(self, *args):
        try:
            opened = [c for c in connections.all(initialized_only=True) if c.connection]
            # Only a test that allowed DJANGO_ALLOW_ASYNC_UNSAFE could open them here.
            with mock.patch.dict(os.environ, {"DJANGO_ALLOW_ASYNC_UNSAFE": "true"}):
                for conn in opened:
                    conn.close()
        finally:
            original(self, *args)

    __exit__.closes_connections = True
    PlaywrightContextManager.__exit__ = __exit__


def _allow_loopback_endpoints() -> None:
    os.environ["ENDPOINT_ALLOWED_PRIVATE_NETWORKS"] = LOOPBACK_NETWORKS
    settings.ENDPOINT_ALLOWED_PRIVATE_NETWORKS = [
        ipaddress.ip_network(n) for n in LOOPBACK_NETWORKS.split(",")
    ]


def pytest_collection_modifyitems(config, items):
    """Test files with a ``slow`` test run first (their order otherwise kept): ``make test``
    hands whole files to two xdist workers in this order, and a long file started last would
    keep one worker busy while the other has nothing left."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)


def _flush_as_owner() -> None:
    """Transactional tests end with Django's flush, a TRUNCATE of every table, which the
    release guards refuse while a frozen release exists. The suite runs as the database's
    owner (a superuser), who may switch triggers off for its own transaction: exactly what
    the application's production role cannot do (docs/security.md)."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    original = DatabaseOperations.execute_sql_flush

    def execute_sql_flush(self, sql_list):
        return original(self, ["SET LOCAL session_replication_role = replica", *sql_list])

    DatabaseOperations.execute_sql_flush = execute_sql_flush


@pytest.fixture(autouse=True)
def _broker_setting_survives():
    """A test must leave the broker URL in place. Celery reads Django's settings live: once
    ``monkeypatch.setattr(settings, "CELERY_BROKER_URL", ...)`` on pytest-django's ``settings``
    fixture had removed it at teardown, every later publish of this process went to Celery's
    default broker (``amqp://localhost``), silently, and a test far later in the run waited
    for a message that never reached Redis. Assign ``settings.X = ...`` instead. (Checked as
    each test starts: pytest-django's own monkeypatch is undone after every fixture here.)"""
    assert hasattr(settings, "CELERY_BROKER_URL"), (
        "a test before this one removed CELERY_BROKER_URL from the settings for the rest of "
        "the run (monkeypatch.setattr on pytest-django's settings fixture)"
    )
    yield


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2 at production strength costs ~0.3 s per user; tests need correctness, not cost.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@dataclass
class Persona:
    user: object | None
    client: Client
    password: str = "persona-password-1"


@dataclass
class Personas:
    admin: Persona
    curator: Persona
    reviewer_a: Persona
    reviewer_b: Persona
    anonymous: Persona

    def all(self) -> dict[str, Persona]:
        return {
            "admin": self.admin,
            "curator": self.curator,
            "reviewer_a": self.reviewer_a,
            "reviewer_b": self.reviewer_b,
            "anonymous": self.anonymous,
        }


def _persona(username: str, role: str) -> Persona:
    password = "persona-password-1"
    user = user_create(username=username, password=password, role=role)
    client = Client()
    client.force_login(user)
    return Persona(user=user, client=client, password=password)


@pytest.fixture
def personas(db) -> Personas:
    """admin, curator, two reviewers and an anonymous visitor, each with a logged-in client."""
    return Personas(
        admin=_persona("ada_admin", "admin"),
        curator=_persona("cory_curator", "curator"),
        reviewer_a=_persona("rae_reviewer", "reviewer"),
        reviewer_b=_persona("rob_reviewer", "reviewer"),
        anonymous=Persona(user=None, client=Client()),
    )
