"""The session guard: an htmx request from a logged-out browser gets a 401 it will not swap,
never the login form; ordinary page loads still redirect to the login page."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_an_htmx_request_without_a_session_gets_401_instead_of_the_login_form():
    response = Client().post("/review/g/abc/draft/", HTTP_HX_REQUEST="true")
    assert response.status_code == 401
    assert response["HX-Reswap"] == "none"
    assert "session has ended" in response.content.decode()
    assert b"password" not in response.content


def test_a_plain_page_load_without_a_session_still_goes_to_the_login_page():
    response = Client().get("/review/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_session_state_says_who_is_logged_in_and_hands_out_a_csrf_token(personas):
    anonymous = Client().get("/accounts/session/").json()
    assert anonymous["authenticated"] is False and anonymous["csrf_token"]
    mine = personas.reviewer_a.client.get("/accounts/session/")
    assert mine["Cache-Control"].startswith("max-age=0")
    assert mine.json()["authenticated"] is True
    assert mine.json()["username"] == "rae_reviewer"
