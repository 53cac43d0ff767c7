"""What every kind's pages share (``<method>/views.py``): the creation page made by the kind's
create service (a launch in the same transaction), the list page, a kind's campaign row or a
404, a campaign page whose live poll gets the shared live
section, and the URL of a campaign's page."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse

from accounts.roles import ADMIN, CURATOR, role_required

from .models import Campaign
from .models.campaigns import CampaignKind
from .services import campaigns as campaign_services


def campaign_new_response(request, *, form, template: str, create):
    """The creation page of every kind. On a valid POST the kind's create service ``create``
    makes the campaign from the form (``form.create_kwargs()``, by the requesting user) and,
    when the form asks (its ``launch`` box), it is launched in the same transaction: a launch
    that fails leaves no draft behind. Errors go on the fields they name."""
    if request.method == "POST" and form.is_valid():
        launch = bool(form.cleaned_data.get("launch"))
        try:
            with transaction.atomic():
                campaign = create(**form.create_kwargs(), created_by=request.user)
                if launch:
                    campaign = campaign_services.campaign_launch(campaign_id=campaign.pk)
        except ValidationError as exc:
            form.add_settings_errors(exc)
        else:
            done = " and launched." if launch else ". Launch it when ready."
            messages.success(request, f"Campaign {campaign.name} created{done}")
            return redirect(campaign_page(campaign))
    return render(request, template, {"form": form})


def kind_campaign_list(app: str, campaigns):
    """The campaign list page of a kind: ``<app>/campaign_list.html`` with ``campaigns()``."""

    @role_required(ADMIN, CURATOR)
    def campaign_list(request):
        return render(request, f"{app}/campaign_list.html", {"campaigns": campaigns()})

    return campaign_list


def kind_campaign_new(app: str, form_class, create):
    """The creation page of a kind: ``<app>/campaign_new.html`` with its form, made by the
    kind's create service ``create`` (``campaign_new_response``)."""

    @role_required(ADMIN)
    def campaign_new(request):
        return campaign_new_response(
            request,
            form=form_class(request.POST or None),
            template=f"{app}/campaign_new.html",
            create=create,
        )

    return campaign_new


def kind_campaign_or_404(get, pk: int, does_not_exist, label: str):
    """A kind's campaign row (``get(campaign_id=pk)``), or 404 "No <label> campaign with this
    id."."""
    try:
        return get(campaign_id=pk)
    except does_not_exist:
        raise Http404(f"No {label} campaign with this id.") from None


def render_campaign_page(request, template: str, context: dict, *, live_body: str):
    """A campaign page of any kind; its live-progress poll (an htmx request) gets the shared
    live section (``evolution/_live.html``) filled by the kind's ``live_body`` alone."""
    if request.htmx:
        return render(request, "evolution/_live.html", {**context, "live_body": live_body})
    return render(request, template, context)


def campaign_page(campaign: Campaign) -> str:
    """The URL of a campaign's page: BenchEvolver's here, every other kind's in its own app
    (``<kind>:campaign_detail``)."""
    if campaign.kind == CampaignKind.BENCHEVOLVER:
        return reverse("evolution:campaign_detail", args=[campaign.pk])
    return reverse(f"{campaign.kind}:campaign_detail", args=[campaign.pk])
