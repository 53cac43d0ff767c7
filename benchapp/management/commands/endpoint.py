"""Register or update a model endpoint from the terminal, validated as the admin page validates
it (``EndpointForm``: the model's bounds, the key-variable and cassette policy, the URL policy)::

    python manage.py endpoint gpt --base-url https://api.example.com/v1 --model gpt-x --api-key-env BENCHFORGE_KEY_GPT
    python manage.py endpoint --list

An existing endpoint of that name is updated with the options given; the others keep their
values."""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from benchapp.staff.forms import EndpointForm
from evolution.models import ModelEndpoint

from ._forms import refusal

# option -> form field; an option left out keeps the field's value (or its default).
OPTIONS = {
    "provider": "provider",
    "base_url": "base_url",
    "model": "model",
    "api_key_env": "api_key_env",
    "temperature": "temperature",
    "max_tokens": "max_tokens",
    "reasoning_effort": "reasoning_effort",
    "concurrency": "concurrency_limit",
    "timeout": "timeout_s",
    "max_retries": "max_retries",
    "price_in": "price_in_per_1k",
    "price_out": "price_out_per_1k",
    "cassette": "cassette",
    "release_date": "release_date",
}


def form_data(instance: ModelEndpoint | None) -> dict:
    """The form's fields as the page would post them for ``instance`` (defaults when None)."""
    form = EndpointForm(instance=instance)
    data = {}
    for name, field in form.fields.items():
        value = form.initial.get(name, field.initial)
        if callable(value):  # a model default such as dict
            value = value()
        if name == "extra_params":
            value = json.dumps(value if value is not None else {})
        if isinstance(value, bool):
            if value:
                data[name] = "on"
            continue
        data[name] = "" if value is None else value
    return data


class Command(BaseCommand):
    help = "Register or update a model endpoint (validated as the admin page does), or list them."

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?", help="the endpoint's unique name")
        parser.add_argument("--list", action="store_true", help="list the endpoints and stop")
        parser.add_argument("--provider", help="openai (default) or replay")
        parser.add_argument("--base-url", dest="base_url")
        parser.add_argument("--model")
        parser.add_argument(
            "--api-key-env",
            dest="api_key_env",
            help="the NAME of the environment variable holding the key, never the key",
        )
        parser.add_argument("--temperature", type=float)
        parser.add_argument("--omit-temperature", action="store_true", dest="omit_temperature")
        parser.add_argument("--max-tokens", type=int, dest="max_tokens")
        parser.add_argument("--reasoning-effort", dest="reasoning_effort")
        parser.add_argument("--concurrency", type=int, help="concurrent calls at most")
        parser.add_argument("--timeout", type=float, help="request time-out in seconds")
        parser.add_argument("--max-retries", type=int, dest="max_retries")
        parser.add_argument("--price-in", dest="price_in", help="price per 1k input tokens")
        parser.add_argument("--price-out", dest="price_out", help="price per 1k output tokens")
        parser.add_argument("--cassette", help="a replay endpoint's cassette (.jsonl)")
        parser.add_argument("--release-date", dest="release_date", help="YYYY-MM-DD")

    def handle(self, *args, name, **options):
        if options["list"]:
            for e in ModelEndpoint.objects.order_by("name"):
                where = e.base_url or f"cassette {e.cassette}"
                self.stdout.write(f"{e.name}\t{e.provider}\t{e.model}\t{where}")
            return
        if not name:
            raise CommandError("name the endpoint (or --list)")
        instance = ModelEndpoint.objects.filter(name=name).first()
        data = form_data(instance)
        data["name"] = name
        for option, field in OPTIONS.items():
            if options.get(option) is not None:
                data[field] = options[option]
        if options.get("omit_temperature"):
            data["omit_temperature"] = "on"
        form = EndpointForm(data, instance=instance)
        if not form.is_valid():
            fields = {field: option for option, field in OPTIONS.items()}
            raise refusal(form, options=fields, whole="endpoint")
        endpoint = form.save()
        verb = "updated" if instance else "registered"
        self.stdout.write(f"endpoint {endpoint.name} {verb} (id {endpoint.pk})")
