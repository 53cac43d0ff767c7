"""Errors are pages with the site's layout and a way back, never Django's bare defaults."""

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import server_error

pytestmark = pytest.mark.django_db


def test_an_unknown_address_is_a_styled_404_with_navigation():
    response = Client().get("/no/such/page/")
    assert response.status_code == 404
    page = response.content.decode()
    assert '<header class="topbar">' in page and "Not found" in page
    assert 'href="/"' in page and "favicon.svg" in page


def test_a_forbidden_page_is_a_styled_403(personas):
    response = personas.reviewer_a.client.get("/campaigns/")
    assert response.status_code == 403
    page = response.content.decode()
    assert '<header class="topbar">' in page and "Not allowed" in page


def test_the_500_page_needs_no_database_or_request_context(django_assert_num_queries):
    request = RequestFactory().get("/broken/")
    with django_assert_num_queries(0):
        response = server_error(request)
    assert response.status_code == 500
    page = response.content.decode()
    assert "Something went wrong on our side" in page and 'href="/"' in page


def test_the_favicon_is_served_from_the_static_files():
    response = Client().get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"] == "/static/img/favicon.svg"
