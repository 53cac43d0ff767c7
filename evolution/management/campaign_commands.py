"""What the methods' commands over one campaign share (``evosyn_ablation``,
``frontiersmith_ablation``, ``xcoder_difficulty``): choosing the campaign (``--campaign ID`` or
``--demo``, the demo's campaign built and run from its cassette when missing), naming a model
endpoint, and writing the result's JSON copy (``--json``)."""

from __future__ import annotations

import json
from collections.abc import Callable

from django.core.management.base import CommandError

from evolution.models import ModelEndpoint


def add_campaign_choice(parser, *, label: str, demo_help: str) -> None:
    """``--campaign ID`` or ``--demo``, one of them required."""
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--campaign", type=int, help=f"the {label} campaign's id")
    which.add_argument("--demo", action="store_true", help=demo_help)


def campaign_chosen(options, *, model, label: str, demo: Callable, stderr):
    """The ``model`` row (keyed by its campaign's id) that ``--campaign`` names, or the demo's,
    which ``demo(stdout=stderr)`` builds and runs when missing; CommandError when there is no
    such campaign."""
    if options["demo"]:
        campaign = demo(stdout=stderr)
        stderr.write("")
        return model.objects.get(pk=campaign.pk)
    try:
        return model.objects.get(pk=options["campaign"])
    except model.DoesNotExist:
        raise CommandError(f"no {label} campaign {options['campaign']}") from None


def endpoint_named(name: str) -> ModelEndpoint:
    try:
        return ModelEndpoint.objects.get(name=name)
    except ModelEndpoint.DoesNotExist:
        raise CommandError(f"no model endpoint {name!r}") from None


def write_json(path: str, data) -> None:
    with open(path, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=1)
