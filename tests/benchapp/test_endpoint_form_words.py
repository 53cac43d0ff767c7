"""The endpoint form says what is wrong in words, on the field, never a constraint's name
(issue: "Constraint “endpoint_remote_needs_url” is violated")."""

from __future__ import annotations

import pytest

from benchapp.staff.forms import EndpointForm

pytestmark = pytest.mark.django_db

BASE = {
    "name": "x",
    "provider": "openai",
    "model": "m",
    "concurrency_limit": 4,
    "timeout_s": 10,
    "max_retries": 1,
    "price_in_per_1k": 0,
    "price_out_per_1k": 0,
    "extra_params": "{}",
}


def test_a_remote_endpoint_without_a_url_is_told_so_on_the_field():
    form = EndpointForm(BASE)
    assert not form.is_valid()
    assert form.errors["base_url"] == [
        "a remote endpoint needs its base URL (only a replayed one has none)"
    ]
    assert "__all__" not in form.errors


def test_a_negative_price_is_told_so_on_the_field():
    form = EndpointForm({**BASE, "base_url": "https://api.example.com/v1", "price_in_per_1k": -1})
    assert not form.is_valid()
    assert form.errors["price_in_per_1k"] == ["a price cannot be negative"]
    assert not any("Constraint" in e for errors in form.errors.values() for e in errors)
