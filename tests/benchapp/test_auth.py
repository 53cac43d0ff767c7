"""Log in / log out for every persona, roles as groups, and the create_user command."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.core.management.base import CommandError
from django.http import HttpRequest
from django.test import Client

from accounts.roles import user_roles

pytestmark = pytest.mark.django_db

ACCOUNTS = ("admin", "curator", "reviewer_a", "reviewer_b")


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _session_user_id(client) -> str | None:
    return client.session.get("_auth_user_id")


def test_the_login_page_uses_the_app_layout():
    response = Client().get("/accounts/login/")
    assert response.status_code == 200
    assert [t.name for t in response.templates][:2] == ["benchapp/login.html", "base.html"]
    page = response.content.decode()
    assert '<header class="topbar">' in page
    assert 'name="csrfmiddlewaretoken"' in page
    assert 'name="username"' in page and 'type="password"' in page


@pytest.mark.parametrize("name", ACCOUNTS)
def test_each_persona_logs_in_and_out(personas, name):
    persona = personas.all()[name]
    client = Client(enforce_csrf_checks=True)
    client.get("/accounts/login/")
    token = client.cookies["csrftoken"].value

    response = client.post(
        "/accounts/login/",
        {
            "username": persona.user.username,
            "password": persona.password,
            "csrfmiddlewaretoken": token,
        },
    )
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert _session_user_id(client) == str(persona.user.pk)
    home = client.get("/").content.decode()
    assert persona.user.username in home and "Log out" in home

    token = client.cookies["csrftoken"].value
    response = client.post("/accounts/logout/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert _session_user_id(client) is None
    assert 'href="/accounts/login/"' in client.get("/").content.decode()


def test_login_follows_next(personas):
    client = Client()
    response = client.post(
        "/accounts/login/",
        {"username": "cory_curator", "password": personas.curator.password, "next": "/healthz"},
    )
    assert response["Location"] == "/healthz"


def test_login_refuses_a_redirect_to_another_host(personas):
    client = Client()
    response = client.post(
        "/accounts/login/",
        {
            "username": "cory_curator",
            "password": personas.curator.password,
            "next": "https://evil.example/",
        },
    )
    assert response["Location"] == "/"


def test_the_anonymous_visitor_cannot_log_in_without_an_account(personas):
    client = personas.anonymous.client
    response = client.post("/accounts/login/", {"username": "nobody", "password": "guess-123456"})
    assert response.status_code == 200
    assert "did not match" in response.content.decode()
    assert _session_user_id(client) is None


def test_a_wrong_password_is_refused(personas):
    client = Client()
    response = client.post(
        "/accounts/login/", {"username": "rae_reviewer", "password": "wrong-password"}
    )
    assert response.status_code == 200
    assert "did not match" in response.content.decode()
    assert _session_user_id(client) is None


def test_logout_is_post_only(personas):
    response = personas.reviewer_a.client.get("/accounts/logout/")
    assert response.status_code == 405
    assert _session_user_id(personas.reviewer_a.client) == str(personas.reviewer_a.user.pk)


def test_roles_are_django_groups():
    """The roles migration makes the three groups (run here on an empty table: a transactional
    test earlier in the run may have flushed the ones the test database was migrated with)."""
    from importlib import import_module

    from django.apps import apps

    Group.objects.all().delete()
    import_module("benchapp.migrations.0002_roles").create_roles(apps, None)
    assert set(Group.objects.values_list("name", flat=True)) == {"admin", "curator", "reviewer"}


def test_personas_hold_their_roles(personas):
    assert user_roles(personas.admin.user) == {"admin", "curator"}
    assert user_roles(personas.curator.user) == {"curator"}
    assert user_roles(personas.reviewer_a.user) == {"reviewer"}
    assert user_roles(personas.anonymous.client.get("/").wsgi_request.user) == set()


def test_create_user_makes_a_reviewer_who_can_log_in(capsys):
    call_command("create_user", "rita", "--role", "reviewer", "--password", "rita-pass-123")
    assert "reviewer rita ready." in capsys.readouterr().out
    user = get_user_model().objects.get(username="rita")
    assert list(user.groups.values_list("name", flat=True)) == ["reviewer"]
    assert not user.is_staff and not user.is_superuser
    client = Client()
    # Login throttling authenticates against the request (its address), so pass one.
    assert client.login(request=HttpRequest(), username="rita", password="rita-pass-123")


def test_create_user_prints_a_generated_password_that_works(capsys):
    call_command("create_user", "adam", "--role", "admin")
    out = capsys.readouterr().out
    password = out.rsplit("password: ", 1)[1].strip()
    user = get_user_model().objects.get(username="adam")
    assert user.is_staff and user.is_superuser
    assert Client().login(request=HttpRequest(), username="adam", password=password)


def test_create_user_again_changes_the_role_instead_of_adding_one():
    call_command("create_user", "carl", "--role", "reviewer", "--password", "carl-pass-123")
    call_command("create_user", "carl", "--role", "curator", "--password", "carl-pass-123")
    user = get_user_model().objects.get(username="carl")
    assert list(user.groups.values_list("name", flat=True)) == ["curator"]
    assert get_user_model().objects.filter(username="carl").count() == 1


def test_create_user_rejects_an_unknown_role():
    with pytest.raises(CommandError, match="invalid choice: 'owner'"):
        call_command("create_user", "oscar", "--role", "owner")
    assert not get_user_model().objects.filter(username="oscar").exists()


def test_login_lives_where_django_users_expect_it(settings):
    from django.urls import reverse

    assert reverse(settings.LOGIN_URL) == "/accounts/login/"
    response = Client().get("/accounts/login/")
    assert response.status_code == 200


def test_the_old_login_address_redirects_with_its_next_parameter():
    response = Client().get("/login/?next=/review/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/review/"


def test_a_protected_page_sends_anonymous_visitors_to_accounts_login():
    response = Client().get("/campaigns/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/?next=")


def test_logout_is_a_post(personas):
    client = personas.admin.client
    assert client.get("/accounts/logout/").status_code == 405
    assert _session_user_id(client) == str(personas.admin.user.pk)
    assert client.post("/accounts/logout/").status_code == 302
    assert _session_user_id(client) is None
