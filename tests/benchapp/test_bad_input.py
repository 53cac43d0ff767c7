"""Bad input is a 4xx, never a 500: NUL characters anywhere, integers past the database's
range, absurd endpoint settings; API errors are JSON."""

from __future__ import annotations

import pytest
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.converters import IntConverter

from accounts.models import APIToken

pytestmark = pytest.mark.django_db

HUGE = "99999999999999999999"  # past bigint


def _routes(patterns=None, prefix=""):
    for p in get_resolver().url_patterns if patterns is None else patterns:
        if isinstance(p, URLResolver):
            if str(p.pattern).startswith("admin/"):
                continue
            yield from _routes(p.url_patterns, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield prefix + str(p.pattern), getattr(p.pattern, "converters", {})


def _fill(route: str, converters: dict, *, text: str, number: str) -> str:
    import re

    def sub(match):
        name = match.group(2)
        return number if isinstance(converters.get(name), IntConverter) else text

    url = re.sub(r"<(?:(\w+):)?(\w+)>", sub, route)
    return "/" + url.lstrip("^").rstrip("$")


def _urls(text: str, number: str) -> list[str]:
    return sorted({_fill(r, c, text=text, number=number) for r, c in _routes()})


def _bearer(user) -> dict:
    _, raw = APIToken.issue(user=user, name="crawl")
    return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}


@pytest.mark.parametrize("who", ["anonymous", "admin", "reviewer_a"])
def test_no_url_answers_500_to_nul_characters_or_huge_integers(personas, who):
    client = personas.all()[who].client
    failures = []
    for url in _urls("p%00x", HUGE) + _urls("p", "1"):
        for query in ("", "?q=%00&page=%00", f"?page={HUGE}&offset={HUGE}&limit=-1"):
            status = client.get(url + query).status_code
            if status >= 500:
                failures.append((url + query, status))
    assert failures == []


def test_a_nul_in_a_public_url_is_a_400_naming_the_url(client):
    response = client.get("/releases/bench/v1.0.0/items/p%00x/")
    assert response.status_code == 400
    assert "NUL" in response.content.decode()


def test_a_nul_in_a_form_field_is_a_400_naming_the_field(personas):
    response = personas.reviewer_a.client.post("/review/tags/suggest/", {"name": "a\x00b"})
    assert response.status_code == 400
    assert "'name'" in response.content.decode()


def test_a_nul_in_json_is_a_json_400_naming_the_field(personas, client):
    response = client.post(
        "/api/panels",
        '{"name": "p\\u0000", "members": []}',
        content_type="application/json",
        **_bearer(personas.admin.user),
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    assert "'name'" in response.json()["detail"]


@pytest.mark.parametrize(
    "path,payload",
    [
        ("/api/panels", {"name": "p", "members": [{"endpoint_id": 10**20, "attempts": 4}]}),
        ("/api/panels", {"name": "p", "members": [{"endpoint_id": 1, "attempts": 10**12}]}),
        (
            "/api/campaigns",
            {"name": "c", "seed_set": "s", "evolver_id": 10**20, "panel_id": 10**20},
        ),
        (
            "/api/campaigns",
            {"name": "c", "seed_set": "s", "evolver_id": 1, "panel_id": 1, "seed_limit": 10**20},
        ),
    ],
)
def test_integers_past_the_database_range_are_a_4xx(personas, client, path, payload):
    response = client.post(
        path, payload, content_type="application/json", **_bearer(personas.admin.user)
    )
    assert 400 <= response.status_code < 500
    assert response["Content-Type"].startswith("application/json")


@pytest.mark.parametrize(
    "field,value",
    [
        ("max_retries", 99999),
        ("timeout_s", 1e308),
        ("concurrency_limit", 10**9),
        ("temperature", 7.0),
        ("max_tokens", 10**12),
    ],
)
def test_absurd_endpoint_settings_are_refused_with_the_field_named(personas, client, field, value):
    payload = {"name": "e", "base_url": "http://127.0.0.1:9/v1", "model": "m", field: value}
    response = client.post(
        "/api/endpoints", payload, content_type="application/json", **_bearer(personas.admin.user)
    )
    assert 400 <= response.status_code < 500
    assert field in response.content.decode()


def test_api_errors_are_json_even_for_unknown_ids(personas, client):
    auth = _bearer(personas.admin.user)
    for url in ("/api/campaigns/12345", f"/api/campaigns/{HUGE}", "/api/campaigns/x"):
        response = client.get(url, **auth)
        assert 400 <= response.status_code < 500, url
        assert response["Content-Type"].startswith("application/json"), url


def test_an_unexpected_api_failure_is_a_json_500_not_an_html_page(personas, client, monkeypatch):
    from evolution import selectors

    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(selectors, "campaign_list", broken)
    response = client.get("/api/campaigns", **_bearer(personas.admin.user))
    assert response.status_code == 500
    assert response.json() == {"detail": "internal server error"}


def test_an_api_body_past_the_upload_limit_is_a_json_400(personas, client, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    response = client.post(
        "/api/panels",
        '{"name": "' + "x" * 4000 + '", "members": []}',
        content_type="application/json",
        **_bearer(personas.admin.user),
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
