"""Create a target panel from the terminal, validated as the admin page validates it
(``PanelForm``)::

    python manage.py panel frontier --member gpt --member claude:8
    python manage.py panel --list

``--member NAME[:K]``: an endpoint and, optionally, its own attempts per problem (else the
campaign's target_eval_k). A panel is not edited here: a panel's members fix the difficulty
it measured, so change one on the admin page or make a new panel."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from benchapp.staff.forms import PanelForm
from evolution.models import ModelEndpoint, Panel, PanelMember

from ._forms import refusal


class Command(BaseCommand):
    help = "Create a target panel from named endpoints (validated as the admin page does), or list them."

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?")
        parser.add_argument("--list", action="store_true", help="list the panels and stop")
        parser.add_argument(
            "--member", action="append", default=[], help="NAME or NAME:K (repeat for each)"
        )
        parser.add_argument("--description", default="")

    def handle(self, *args, name, member, description, **options):
        if options["list"]:
            for panel in Panel.objects.order_by("name").prefetch_related("members__endpoint"):
                members = ", ".join(
                    m.endpoint.name + (f":{m.attempts}" if m.attempts else "")
                    for m in panel.members.all()
                )
                self.stdout.write(f"{panel.name}\t{members}")
            return
        if not name:
            raise CommandError("name the panel (or --list)")
        endpoints = list(ModelEndpoint.objects.order_by("name"))
        by_name = {e.name: e for e in endpoints}
        data = {"name": name, "description": description}
        for spec in member:
            endpoint_name, _, k = spec.partition(":")
            endpoint = by_name.get(endpoint_name)
            if endpoint is None:
                raise CommandError(f"--member: no endpoint named {endpoint_name!r}")
            data[f"member_{endpoint.pk}"] = "on"
            data[f"attempts_{endpoint.pk}"] = k
        form = PanelForm(data, endpoints=endpoints)
        if not form.is_valid():
            raise refusal(form, options={}, whole="panel")
        with transaction.atomic():
            panel = Panel.objects.create(
                name=form.cleaned_data["name"], description=form.cleaned_data["description"]
            )
            for endpoint, attempts in form.members():
                PanelMember.objects.create(panel=panel, endpoint=endpoint, attempts=attempts)
        self.stdout.write(f"panel {panel.name} created with {len(form.members())} member(s)")
