"""The Django admin: every registered model's pages load for admins, and nobody else gets in."""

import pytest
from django.contrib import admin
from django.urls import reverse

from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _admin_url(model, view: str, *args) -> str:
    return reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}", args=args)


@pytest.fixture
def one_of_each():
    """A row for every evolution model, so change pages render real objects."""
    factories.TestCaseFactory()
    factories.PanelMemberFactory()
    factories.SolverAttemptFactory()
    factories.LLMCallFactory()
    factories.GlobalMemoryEntryFactory()
    factories.ProblemSetFactory(problems=[factories.ProblemFactory()])
    factories.APITokenFactory()


def test_every_model_is_registered_in_the_admin():
    registered = {m._meta.label for m in admin.site._registry}
    evolution = {
        "evolution.Problem",
        "evolution.TestCase",
        "evolution.ProblemSet",
        "evolution.ModelEndpoint",
        "evolution.Panel",
        "evolution.Campaign",
        "benchevolver.Lineage",
        "benchevolver.Candidate",
        "benchevolver.SolverAttempt",
        "evolution.LLMCall",
        "benchevolver.GlobalMemoryEntry",
        "evolution.StepFailure",
        "benchapp.SeedImportJob",
    }
    assert evolution <= registered


def test_the_admin_index_loads_for_the_admin_persona(personas):
    response = personas.admin.client.get(reverse("admin:index"))
    assert response.status_code == 200
    assert "Problems" in response.content.decode()


def test_every_admin_page_loads_for_the_admin_persona(personas, one_of_each):
    client = personas.admin.client
    failures = []
    for model, model_admin in admin.site._registry.items():
        urls = [_admin_url(model, "changelist")]
        if model_admin.has_add_permission(client.get("/").wsgi_request):
            urls.append(_admin_url(model, "add"))
        obj = model._default_manager.first()
        if obj is not None:
            urls.append(_admin_url(model, "change", obj.pk))
        for url in urls:
            status = client.get(url).status_code
            if status != 200:
                failures.append((url, status))
    assert failures == []


@pytest.mark.parametrize("persona", ["reviewer_a", "curator", "anonymous"])
def test_the_admin_is_refused_to_everyone_else(personas, persona, one_of_each):
    client = personas.all()[persona].client
    for model in admin.site._registry:
        response = client.get(_admin_url(model, "changelist"))
        assert response.status_code == 302, model
        assert response["Location"].startswith(reverse("admin:login"))
    response = client.get(reverse("admin:index"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("admin:login"))


def test_the_admins_endpoint_form_reads_a_base_url_without_a_scheme_as_https(rf):
    from evolution.models import ModelEndpoint

    model_admin = admin.site._registry[ModelEndpoint]
    form = model_admin.get_form(rf.get("/"))()
    assert form.fields["base_url"].clean("api.example.com/v1") == "https://api.example.com/v1"
