"""Login resists guessing without locking people out: a lock per (username, address) pair on
the app login, the admin login and API token issuance; past the limit, guessing spread over
addresses or usernames meets growing delays (no password hash), which never apply to an address
the user logged in from before; password change and reset work."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

pytestmark = pytest.mark.django_db

LIMIT = 3


@pytest.fixture(autouse=True)
def _small_limit(settings):
    settings.AXES_FAILURE_LIMIT = LIMIT


def _login(client, username, password, path="/accounts/login/", **extra):
    return client.post(path, {"username": username, "password": password}, **extra)


def test_the_right_password_after_the_limit_of_wrong_ones_is_refused(personas):
    user = personas.curator.user.username
    client = Client()
    for _ in range(LIMIT - 1):
        assert _login(client, user, "wrong-guess").status_code == 200
    # The failure that reaches the limit is already answered with the lockout.
    assert _login(client, user, "wrong-guess").status_code == 429

    response = _login(client, user, personas.curator.password)

    assert response.status_code == 429
    assert "Too many failed login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_guessing_flood_from_many_addresses_leaves_the_real_user_able_to_log_in(personas):
    """(issue: five wrong passwords locked any account, admins included, from everywhere.)"""
    admin = personas.admin
    name = admin.user.username
    home = "10.0.0.50"
    assert _login(Client(), name, admin.password, REMOTE_ADDR=home).status_code == 302
    for n in range(LIMIT * 4):
        _login(Client(), name, "wrong", REMOTE_ADDR=f"10.0.1.{n + 1}")

    # A new address meets the delay, with the seconds to wait, and no password is checked.
    delayed = _login(Client(), name, admin.password, REMOTE_ADDR="10.0.0.99")
    assert delayed.status_code == 429
    assert "try again in" in delayed.content.decode() and int(delayed["Retry-After"]) >= 1
    # The admin's own address is not delayed.
    assert _login(Client(), name, admin.password, REMOTE_ADDR=home).status_code == 302


def test_the_delay_grows_with_failures_and_is_bounded(personas, settings):
    settings.LOGIN_MAX_DELAY_SECONDS = 8
    name = personas.curator.user.username
    waits = []
    for n in range(LIMIT + 6):
        response = _login(Client(), name, "wrong", REMOTE_ADDR=f"10.0.2.{n + 1}")
        if response.status_code == 429 and response.has_header("Retry-After"):
            waits.append(int(response["Retry-After"]))
    assert waits and max(waits) <= 8


def test_a_flood_of_usernames_from_one_address_does_not_lock_its_known_users(personas):
    """(issue: fuzzing the anonymous token endpoint locked every login from 127.0.0.1.)"""
    reviewer = personas.reviewer_a
    shared = "10.0.0.7"  # one address for everyone: a NAT, a proxy, localhost
    assert (
        _login(Client(), reviewer.user.username, reviewer.password, REMOTE_ADDR=shared).status_code
        == 302
    )
    for n in range(LIMIT * 3):
        _login(Client(), f"nobody-{n}", "wrong", REMOTE_ADDR=shared)

    known = _login(Client(), reviewer.user.username, reviewer.password, REMOTE_ADDR=shared)
    assert known.status_code == 302
    stranger = _login(Client(), "someone-new", "x", REMOTE_ADDR=shared)
    assert stranger.status_code == 429  # the flood's address is slowed for new names
    other = _login(
        Client(), personas.curator.user.username, personas.curator.password, REMOTE_ADDR="10.0.0.8"
    )
    assert other.status_code == 302


def test_a_forwarded_for_header_cannot_dodge_the_address_delay_without_a_trusted_proxy(
    personas,
):
    for n in range(LIMIT):
        _login(Client(), f"nobody-{n}", "wrong", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}")
    response = _login(Client(), "someone-else", "x", HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert response.status_code == 429


def test_behind_one_trusted_proxy_the_forwarded_address_is_the_client(personas, settings):
    settings.TRUSTED_PROXY_COUNT = 1
    for n in range(LIMIT):
        _login(Client(), f"nobody-{n}", "wrong", HTTP_X_FORWARDED_FOR="198.51.100.1")
    user = personas.curator
    elsewhere = _login(
        Client(), user.user.username, user.password, HTTP_X_FORWARDED_FOR="198.51.100.2"
    )
    assert elsewhere.status_code == 302


def test_the_admin_login_is_throttled_too(personas):
    user = personas.admin.user.username
    client = Client()
    for _ in range(LIMIT):
        _login(client, user, "wrong", path="/admin/login/")
    response = _login(client, user, personas.admin.password, path="/admin/login/")
    assert response.status_code == 429
    assert "Too many failed login attempts" in response.content.decode()


def test_api_token_issuance_answers_json_and_is_throttled(personas):
    client = Client()
    user = personas.admin.user.username

    ok = client.post(
        "/api/tokens",
        {"username": user, "password": personas.admin.password, "name": "ci"},
        content_type="application/json",
    )
    assert ok.status_code == 201
    token = ok.json()["token"]
    assert client.get("/api/endpoints", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 200

    for _ in range(LIMIT - 1):
        wrong = client.post(
            "/api/tokens", {"username": user, "password": "nope"}, content_type="application/json"
        )
        assert wrong.status_code == 401 and wrong["Content-Type"].startswith("application/json")
    client.post(
        "/api/tokens", {"username": user, "password": "nope"}, content_type="application/json"
    )
    locked = client.post(
        "/api/tokens",
        {"username": user, "password": personas.admin.password},
        content_type="application/json",
    )
    assert locked.status_code == 429
    assert locked["Content-Type"].startswith("application/json")
    assert "Too many failed login attempts" in locked.json()["detail"]


def test_a_success_resets_the_failure_count(personas):
    user = personas.curator
    client = Client()
    for _ in range(LIMIT - 1):
        _login(client, user.user.username, "wrong")
    assert _login(client, user.user.username, user.password).status_code == 302
    for _ in range(LIMIT - 1):
        _login(Client(), user.user.username, "wrong")
    assert _login(Client(), user.user.username, user.password).status_code == 302


def test_a_user_changes_their_password(personas):
    persona = personas.reviewer_a
    client = persona.client
    assert client.get("/accounts/password_change/").status_code == 200
    response = client.post(
        "/accounts/password_change/",
        {
            "old_password": persona.password,
            "new_password1": "a-new-long-passphrase",
            "new_password2": "a-new-long-passphrase",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/accounts/password_change/done/"
    persona.user.refresh_from_db()
    assert persona.user.check_password("a-new-long-passphrase")


def test_a_wrong_old_password_is_refused_with_the_field_named(personas):
    response = personas.reviewer_a.client.post(
        "/accounts/password_change/",
        {
            "old_password": "wrong",
            "new_password1": "x-long-pass-1",
            "new_password2": "x-long-pass-1",
        },
    )
    assert response.status_code == 200
    assert "Old password:" in response.content.decode()


def test_password_reset_sends_a_working_link_by_email(personas, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    persona = personas.curator
    persona.user.email = "cory@example.org"
    persona.user.save()
    client = Client()

    response = client.post("/accounts/password_reset/", {"email": "cory@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/]+(/accounts/reset/\S+)", mail.outbox[0].body).group(1)

    form = client.get(link, follow=True)
    assert form.status_code == 200 and "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "reset-long-passphrase", "new_password2": "reset-long-passphrase"},
    )
    assert done.status_code == 302
    persona.user.refresh_from_db()
    assert persona.user.check_password("reset-long-passphrase")


def test_an_unknown_email_gets_the_same_answer_and_no_mail(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    response = Client().post("/accounts/password_reset/", {"email": "ghost@example.org"})
    assert response.status_code == 302 and response["Location"] == "/accounts/password_reset/done/"
    assert mail.outbox == []


def test_the_email_backend_is_chosen_from_the_environment(monkeypatch):
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django,os;django.setup();from django.conf import settings;print(settings.EMAIL_BACKEND, settings.EMAIL_FILE_PATH)",
        ],
        env={
            **__import__("os").environ,
            "EMAIL_BACKEND": "file",
            "EMAIL_FILE_PATH": "/tmp/bf-mail",
            "DJANGO_SETTINGS_MODULE": "benchapp.settings",
        },
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == ["django.core.mail.backends.file.EmailBackend", "/tmp/bf-mail"]
