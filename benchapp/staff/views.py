"""The admin pages: model endpoints (with a connection test and their last errors), panels,
users and roles. Admin role only; every form posts with Django's CSRF token."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Count, Max, Prefetch, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from accounts.roles import ADMIN, ROLES, role_required, user_roles
from accounts.services import RoleChangeRefused, user_add, user_set_active, user_set_roles
from benchapp.models import SeedImportJob
from evolution.models import Campaign, LLMCall, ModelEndpoint, Panel, PanelMember
from evolution.models.campaigns import CampaignState

from .connection import endpoint_test_connection, key_status
from .forms import EndpointForm, PanelForm, UserCreateForm, UserRolesForm

LAST_ERRORS = 10


@role_required(ADMIN)
def index(request):
    User = get_user_model()
    return render(
        request,
        "benchapp/staff/index.html",
        {
            "endpoint_count": ModelEndpoint.objects.count(),
            "panel_count": Panel.objects.count(),
            "user_count": User.objects.filter(is_active=True).count(),
            "import_count": SeedImportJob.objects.count(),
        },
    )


# --------------------------------------------------------------------------- endpoints


def _errors_of(endpoint_ids) -> dict[int, dict]:
    rows = (
        LLMCall.objects.filter(endpoint_id__in=endpoint_ids, status=LLMCall.Status.ERROR)
        .values("endpoint_id")
        .annotate(n=Count("id"), last=Max("created_at"))
    )
    return {row["endpoint_id"]: row for row in rows}


@role_required(ADMIN)
def endpoint_list(request):
    endpoints = list(ModelEndpoint.objects.annotate(panel_count=Count("panels", distinct=True)))
    errors = _errors_of([e.pk for e in endpoints])
    for endpoint in endpoints:
        endpoint.key_status = key_status(endpoint)
        endpoint.errors = errors.get(endpoint.pk)
    return render(request, "benchapp/staff/endpoint_list.html", {"endpoints": endpoints})


@role_required(ADMIN)
def endpoint_new(request):
    return _endpoint_form(request, EndpointForm(request.POST or None), created=True)


@role_required(ADMIN)
def endpoint_edit(request, pk: int):
    endpoint = get_object_or_404(ModelEndpoint, pk=pk)
    return _endpoint_form(
        request, EndpointForm(request.POST or None, instance=endpoint), created=False
    )


def _endpoint_form(request, form: EndpointForm, *, created: bool):
    if request.method == "POST" and form.is_valid():
        endpoint = form.save()
        verb = "created" if created else "saved"
        messages.success(request, f"Endpoint {endpoint.name} {verb}. Test its connection below.")
        return redirect("staff:endpoint_detail", pk=endpoint.pk)
    return render(
        request,
        "benchapp/staff/endpoint_form.html",
        {"form": form, "endpoint": None if created else form.instance},
    )


def _error_context(endpoint: ModelEndpoint) -> dict:
    errors = LLMCall.objects.filter(endpoint=endpoint, status=LLMCall.Status.ERROR)
    return {
        "endpoint": endpoint,
        "last_errors": errors.order_by("-id")[:LAST_ERRORS],
        "error_count": errors.count(),
        # Not the endpoint's failures (it answered), but answers its callers could not read.
        "unparsable_count": LLMCall.objects.filter(
            endpoint=endpoint, status=LLMCall.Status.UNPARSABLE
        ).count(),
    }


def _endpoint_page(request, endpoint: ModelEndpoint, result=None):
    return render(
        request,
        "benchapp/staff/endpoint_detail.html",
        {
            **_error_context(endpoint),
            "key_status": key_status(endpoint),
            "panels": Panel.objects.filter(members__endpoint=endpoint).distinct(),
            "campaigns": Campaign.objects.filter(
                Q(evolver=endpoint) | Q(panel__members__endpoint=endpoint)
            )
            .distinct()
            .order_by("-created_at")[:10],
            "result": result,
        },
    )


@role_required(ADMIN)
def endpoint_detail(request, pk: int):
    return _endpoint_page(request, get_object_or_404(ModelEndpoint, pk=pk))


@role_required(ADMIN)
@require_POST
def endpoint_test(request, pk: int):
    """One small chat call; htmx gets the result alone, a plain POST the whole page."""
    endpoint = get_object_or_404(ModelEndpoint, pk=pk)
    result = endpoint_test_connection(endpoint)
    if request.htmx:
        response = render(request, "benchapp/staff/_connection_result.html", {"result": result})
        # A failed test is one more error: the page reloads its errors table.
        response["HX-Trigger"] = "endpoint-tested"
        return response
    return _endpoint_page(request, endpoint, result=result)


def endpoint_uses(endpoint: ModelEndpoint) -> list[str]:
    """What keeps an endpoint: its calls in the cost ledger and every row of any model that
    names it (panels, campaigns, attempts, runs, including relations without a reverse
    accessor). An endpoint with any of them is not deleted."""
    uses = []
    for relation in endpoint._meta.get_fields(include_hidden=True):
        if not (relation.auto_created and not relation.concrete and relation.is_relation):
            continue
        model = relation.related_model
        if model._meta.auto_created:  # a many-to-many's own table: counted by its relation
            continue
        count = model._default_manager.filter(**{relation.field.name: endpoint}).count()
        if count:
            if model is LLMCall:
                label = "call in the cost ledger" if count == 1 else "calls in the cost ledger"
            else:
                meta = model._meta
                label = meta.verbose_name if count == 1 else meta.verbose_name_plural
            uses.append(f"{count} {label}")
    return sorted(uses)


@role_required(ADMIN)
@require_POST
def endpoint_delete(request, pk: int):
    """Delete an endpoint nothing refers to (a typo, a test); one with history stays, named
    by what keeps it."""
    endpoint = get_object_or_404(ModelEndpoint, pk=pk)
    if request.POST.get("confirm") != endpoint.name:
        messages.error(request, f"Type the endpoint's name, {endpoint.name}, to delete it.")
        return redirect("staff:endpoint_detail", pk=endpoint.pk)
    uses = endpoint_uses(endpoint)
    if uses:
        messages.error(
            request,
            f"Endpoint {endpoint.name} is kept: {'; '.join(uses)} refer to it.",
        )
        return redirect("staff:endpoint_detail", pk=endpoint.pk)
    name = endpoint.name
    endpoint.delete()
    messages.success(request, f"Endpoint {name} deleted.")
    return redirect("staff:endpoint_list")


@role_required(ADMIN)
def endpoint_errors(request, pk: int):
    """The last errors table alone (reloaded after a connection test)."""
    endpoint = get_object_or_404(ModelEndpoint, pk=pk)
    return render(request, "benchapp/staff/_endpoint_errors.html", _error_context(endpoint))


# --------------------------------------------------------------------------- panels


@role_required(ADMIN)
def panel_list(request):
    panels = Panel.objects.prefetch_related(
        Prefetch("members", queryset=PanelMember.objects.select_related("endpoint"))
    ).annotate(campaign_count=Count("campaigns", distinct=True))
    return render(request, "benchapp/staff/panel_list.html", {"panels": panels})


@role_required(ADMIN)
def panel_new(request):
    form = PanelForm(request.POST or None, endpoints=ModelEndpoint.objects.order_by("name"))
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            panel = Panel.objects.create(
                name=form.cleaned_data["name"], description=form.cleaned_data["description"]
            )
            for endpoint, attempts in form.members():
                PanelMember.objects.create(panel=panel, endpoint=endpoint, attempts=attempts)
        messages.success(request, f"Panel {panel.name} created.")
        return redirect("staff:panel_detail", pk=panel.pk)
    return render(request, "benchapp/staff/panel_form.html", {"form": form})


def _launched_campaigns(panel: Panel):
    """Campaigns past their draft that measure with ``panel``: their recorded difficulty
    depends on its members, so the panel is no longer edited in place."""
    return panel.campaigns.exclude(state=CampaignState.DRAFT).order_by("-created_at")


@role_required(ADMIN)
def panel_detail(request, pk: int):
    panel = get_object_or_404(Panel, pk=pk)
    return render(
        request,
        "benchapp/staff/panel_detail.html",
        {
            "panel": panel,
            "members": panel.members.select_related("endpoint"),
            "campaigns": panel.campaigns.order_by("-created_at")[:20],
            "locked_by": _launched_campaigns(panel)[:5],
        },
    )


@role_required(ADMIN)
def panel_edit(request, pk: int):
    """Members, K and name of a panel no launched campaign uses (a launched campaign's
    difficulty figures were measured by the members it had: create a new panel instead)."""
    panel = get_object_or_404(Panel, pk=pk)
    locked = list(_launched_campaigns(panel)[:5])
    if locked:
        names = ", ".join(c.name for c in locked)
        messages.error(
            request,
            f"Panel {panel.name} measures launched campaigns ({names}); its members are fixed. "
            "Create a new panel for new campaigns.",
        )
        return redirect("staff:panel_detail", pk=panel.pk)
    form = PanelForm(
        request.POST or None, endpoints=ModelEndpoint.objects.order_by("name"), panel=panel
    )
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            panel.name = form.cleaned_data["name"]
            panel.description = form.cleaned_data["description"]
            panel.save(update_fields=["name", "description"])
            panel.members.all().delete()
            for endpoint, attempts in form.members():
                PanelMember.objects.create(panel=panel, endpoint=endpoint, attempts=attempts)
        messages.success(request, f"Panel {panel.name} saved.")
        return redirect("staff:panel_detail", pk=panel.pk)
    return render(request, "benchapp/staff/panel_form.html", {"form": form, "panel": panel})


# --------------------------------------------------------------------------- users


@role_required(ADMIN)
def user_list(request):
    users = list(
        get_user_model().objects.prefetch_related("groups").order_by("-is_active", "username")
    )
    for user in users:
        user.role_names = sorted(user_roles(user) & set(ROLES))
    return render(request, "benchapp/staff/user_list.html", {"users": users})


@role_required(ADMIN)
def user_new(request):
    form = UserCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        user = user_add(
            username=data["username"],
            password=data["password"],
            email=data.get("email") or "",
            roles=data["roles"],
        )
        messages.success(request, f"User {user.username} created.")
        return redirect("staff:user_detail", pk=user.pk)
    return render(request, "benchapp/staff/user_form.html", {"form": form})


@role_required(ADMIN)
def user_detail(request, pk: int):
    user = get_object_or_404(get_user_model(), pk=pk)
    current = sorted(user_roles(user) & set(ROLES))
    if user.is_superuser and ADMIN not in current:
        current.append(ADMIN)
    form = UserRolesForm(request.POST or None, initial={"roles": current})
    if request.method == "POST" and form.is_valid():
        try:
            user_set_roles(user=user, roles=form.cleaned_data["roles"], acting_user=request.user)
        except RoleChangeRefused as exc:
            form.add_error("roles", str(exc))
        else:
            roles = ", ".join(form.cleaned_data["roles"]) or "no role"
            messages.success(request, f"{user.username} now has: {roles}.")
            return redirect("staff:user_detail", pk=user.pk)
    return render(
        request,
        "benchapp/staff/user_detail.html",
        {
            "account": user,
            "form": form,
            "roles": current,
            "token_count": user.api_tokens.count(),
            "is_self": user.pk == request.user.pk,
        },
    )


@role_required(ADMIN)
@require_POST
def user_active(request, pk: int):
    user = get_object_or_404(get_user_model(), pk=pk)
    active = request.POST.get("active") == "1"
    try:
        user_set_active(user=user, active=active, acting_user=request.user)
    except RoleChangeRefused as exc:
        messages.error(request, str(exc))
    else:
        state = "reactivated" if active else "deactivated: they can no longer log in"
        messages.success(request, f"{user.username} {state}.")
    return redirect(reverse("staff:user_detail", args=[user.pk]))
