"""The admin pages through Django's test client: who may open them, endpoint validation and
the connection test against the loopback server (answering and failing), panels, users and
roles, and the import job's own logic (progress, counts, skipped rows, the line-numbered
error, re-import, Parquet). The same pages in Chromium: test_staff_browser.py."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import APIToken
from accounts.roles import user_roles
from benchapp.models import SeedImportJob
from benchapp.staff import imports
from evolution.models import LLMCall, ModelEndpoint, Panel, Problem
from tests.factories import ModelEndpointFactory, PanelMemberFactory
from tests.support.fake_openai import FakeOpenAI, Fault

HUB = Path(__file__).resolve().parents[1] / "evolution" / "importers" / "data" / "hub"

PAGES = [
    ("staff:index", []),
    ("staff:endpoint_list", []),
    ("staff:endpoint_new", []),
    ("staff:panel_list", []),
    ("staff:panel_new", []),
    ("staff:import_new", []),
    ("staff:user_list", []),
    ("staff:user_new", []),
    ("staff:workers", []),
]


@pytest.fixture
def server():
    with FakeOpenAI() as fake:
        yield fake


@pytest.mark.django_db
@pytest.mark.parametrize("name,args", PAGES)
def test_only_admins_open_the_admin_pages(personas, name, args):
    url = reverse(name, args=args)
    assert personas.admin.client.get(url).status_code == 200
    assert personas.curator.client.get(url).status_code == 403
    assert personas.reviewer_a.client.get(url).status_code == 403
    anonymous = personas.anonymous.client.get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


@pytest.mark.django_db
def test_the_navigation_and_the_landing_page_link_the_admin_pages(personas):
    admin_home = personas.admin.client.get("/").content.decode()
    for name, _ in PAGES[1:]:
        if name.endswith("_new") and name != "staff:import_new":
            continue
        assert reverse(name) in admin_home, name
    curator_home = personas.curator.client.get("/").content.decode()
    assert reverse("staff:index") not in curator_home
    assert reverse("staff:workers") not in curator_home


@pytest.mark.django_db
def test_posts_need_the_csrf_token(personas):
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(personas.admin.user)
    response = strict.post(reverse("staff:panel_new"), {"name": "x"})
    assert response.status_code == 403


# --------------------------------------------------------------------------- endpoints


def _endpoint_form(**changes) -> dict:
    data = {
        "name": "loopback",
        "provider": "openai",
        "base_url": "http://127.0.0.1:9/v1",
        "model": "small-model",
        "api_key_env": "",
        "extra_params": "{}",
        "concurrency_limit": 4,
        "timeout_s": 30,
        "max_retries": 2,
        "price_in_per_1k": 0,
        "price_out_per_1k": 0,
    }
    data.update(changes)
    return data


@pytest.mark.django_db
def test_an_endpoint_is_created_with_the_apis_own_validation(personas, monkeypatch):
    client = personas.admin.client
    url = reverse("staff:endpoint_new")
    for variable in ("SECRET_KEY", "OPENAI_API_KEY"):
        refused = client.post(url, _endpoint_form(api_key_env=variable))
        assert refused.status_code == 200
        assert "API key variables must start with BENCHFORGE_KEY_" in refused.content.decode()
    out_of_bounds = client.post(url, _endpoint_form(max_retries=99)).content.decode()
    assert "must be between 0 and 20, got 99" in out_of_bounds
    assert not ModelEndpoint.objects.exists()

    monkeypatch.setenv("BENCHFORGE_KEY_LOOPBACK", "sk-very-secret-value")
    created = client.post(url, _endpoint_form(api_key_env="BENCHFORGE_KEY_LOOPBACK"))
    endpoint = ModelEndpoint.objects.get(name="loopback")
    assert created["Location"] == reverse("staff:endpoint_detail", args=[endpoint.pk])
    for page in (
        reverse("staff:endpoint_detail", args=[endpoint.pk]),
        reverse("staff:endpoint_list"),
    ):
        html = client.get(page).content.decode()
        assert "BENCHFORGE_KEY_LOOPBACK" in html and "(set)" in html
        assert "sk-very-secret-value" not in html

    edited = client.post(
        reverse("staff:endpoint_edit", args=[endpoint.pk]),
        _endpoint_form(api_key_env="BENCHFORGE_KEY_LOOPBACK", model="bigger-model"),
    )
    assert edited.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.model == "bigger-model"


@pytest.mark.django_db(transaction=True)
def test_test_connection_answers_with_latency_through_the_model_client(personas, server):
    server.responder = lambda body, headers: "ready"
    endpoint = ModelEndpointFactory(base_url=server.base_url, model="loop-ok", max_retries=4)
    url = reverse("staff:endpoint_test", args=[endpoint.pk])

    response = personas.admin.client.post(url, HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 200
    assert 'data-ok="true"' in html and "connected" in html
    # What came back, classified; never the reply itself (issue #34).
    assert "an OpenAI-compatible reply; the model answered as asked" in html
    assert "HTTP 200" in html and " ms</b>" in html
    (call,) = LLMCall.objects.filter(endpoint=endpoint)
    assert (call.role, call.status, call.campaign_id) == ("connection-test", "ok", None)
    assert server.request_count == 1
    assert json.loads(call.request_text)["model"] == "loop-ok"


@pytest.mark.django_db(transaction=True)
def test_a_failing_endpoint_says_why_once_and_joins_the_last_errors(personas, server):
    server.responder = lambda body, headers: Fault.server_error(503)
    endpoint = ModelEndpointFactory(base_url=server.base_url, max_retries=5)

    page = personas.admin.client.post(reverse("staff:endpoint_test", args=[endpoint.pk]))

    html = page.content.decode()
    assert 'data-ok="false"' in html and "failed" in html
    assert "HTTP 503" in html
    assert server.request_count == 1  # one call: the test does not retry
    errors = personas.admin.client.get(reverse("staff:endpoint_errors", args=[endpoint.pk]))
    assert "connection-test" in errors.content.decode()
    assert "1 in all" in errors.content.decode()
    listing = personas.admin.client.get(reverse("staff:endpoint_list")).content.decode()
    assert 'class="badge error">1<' in listing


@pytest.mark.django_db(transaction=True)
def test_an_endpoint_nobody_listens_on_is_a_failure_not_a_500(personas):
    endpoint = ModelEndpointFactory(base_url="http://127.0.0.1:9/v1")
    response = personas.admin.client.post(
        reverse("staff:endpoint_test", args=[endpoint.pk]), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    assert 'data-ok="false"' in response.content.decode()


# --------------------------------------------------------------------------- panels


@pytest.mark.django_db
def test_a_panel_is_created_from_the_ticked_endpoints_with_their_k(personas):
    a = ModelEndpointFactory(name="model-a")
    b = ModelEndpointFactory(name="model-b")
    ModelEndpointFactory(name="model-c")
    url = reverse("staff:panel_new")
    empty = personas.admin.client.post(url, {"name": "nobody"})
    assert "A panel needs at least one target endpoint" in empty.content.decode()
    bad_k = personas.admin.client.post(
        url, {"name": "targets", f"member_{a.pk}": "on", f"attempts_{a.pk}": "0"}
    )
    assert "K for model-a: Ensure this value is greater than or equal to 1." in (
        bad_k.content.decode()
    )
    assert not Panel.objects.exists()

    created = personas.admin.client.post(
        url,
        {
            "name": "targets",
            f"member_{a.pk}": "on",
            f"attempts_{a.pk}": "8",
            f"member_{b.pk}": "on",
        },
    )
    panel = Panel.objects.get(name="targets")
    assert created["Location"] == reverse("staff:panel_detail", args=[panel.pk])
    assert {(m.endpoint.name, m.attempts) for m in panel.members.all()} == {
        ("model-a", 8),
        ("model-b", None),
    }
    again = personas.admin.client.post(url, {"name": "targets", f"member_{a.pk}": "on"})
    assert "a panel with this name exists" in again.content.decode()
    listing = personas.admin.client.get(reverse("staff:panel_list")).content.decode()
    assert "model-a" in listing and "(K 8)" in listing


@pytest.mark.django_db
def test_the_panel_and_endpoint_pages_link_each_other(personas):
    member = PanelMemberFactory()
    panel_page = personas.admin.client.get(reverse("staff:panel_detail", args=[member.panel_id]))
    assert (
        reverse("staff:endpoint_detail", args=[member.endpoint_id]) in panel_page.content.decode()
    )
    endpoint_page = personas.admin.client.get(
        reverse("staff:endpoint_detail", args=[member.endpoint_id])
    )
    assert reverse("staff:panel_detail", args=[member.panel_id]) in endpoint_page.content.decode()


# --------------------------------------------------------------------------- users and roles


def _log_in(client: Client, username: str, password: str) -> bool:
    """Through the login page (the throttled backend needs the request)."""
    response = client.post("/accounts/login/", {"username": username, "password": password})
    return response.status_code == 302


@pytest.mark.django_db
def test_users_are_created_given_roles_and_deactivated(personas):
    client = personas.admin.client
    created = client.post(
        reverse("staff:user_new"),
        {
            "username": "rita",
            "email": "rita@example.org",
            "password": "a-long-enough-pass-1",
            "roles": ["reviewer"],
        },
    )
    rita = get_user_model().objects.get(username="rita")
    assert created["Location"] == reverse("staff:user_detail", args=[rita.pk])
    assert user_roles(rita) == {"reviewer"} and not rita.is_staff

    page = reverse("staff:user_detail", args=[rita.pk])
    client.post(page, {"roles": ["curator", "reviewer"]})
    rita = get_user_model().objects.get(pk=rita.pk)
    assert user_roles(rita) == {"curator", "reviewer"}
    client.post(page, {"roles": ["admin"]})
    rita = get_user_model().objects.get(pk=rita.pk)
    assert user_roles(rita) == {"admin", "curator"} and rita.is_staff and rita.is_superuser
    client.post(page, {"roles": ["reviewer"]})
    rita = get_user_model().objects.get(pk=rita.pk)
    assert user_roles(rita) == {"reviewer"} and not rita.is_superuser

    her = Client()
    assert _log_in(her, "rita", "a-long-enough-pass-1")
    token, raw = APIToken.issue(user=rita, name="script")
    deactivate = client.post(reverse("staff:user_active", args=[rita.pk]), {"active": "0"})
    assert deactivate.status_code == 302
    assert not get_user_model().objects.get(pk=rita.pk).is_active
    # Her open session ends, she cannot log in again, and her token is refused.
    assert her.get(reverse("review:queue")).status_code == 302
    assert not _log_in(Client(), "rita", "a-long-enough-pass-1")
    assert Client().get("/api/endpoints", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code == 401
    listing = client.get(reverse("staff:user_list")).content.decode()
    assert "deactivated" in listing


@pytest.mark.django_db
def test_an_admin_cannot_lock_themself_out(personas):
    me = personas.admin.user
    page = reverse("staff:user_detail", args=[me.pk])
    refused = personas.admin.client.post(page, {"roles": ["curator"]})
    assert "you cannot take the admin role from yourself" in refused.content.decode()
    personas.admin.client.post(reverse("staff:user_active", args=[me.pk]), {"active": "0"})
    me.refresh_from_db()
    assert me.is_active and "admin" in user_roles(get_user_model().objects.get(pk=me.pk))


@pytest.mark.django_db
def test_a_new_user_needs_a_free_name_and_a_valid_password(personas):
    response = personas.admin.client.post(
        reverse("staff:user_new"),
        {"username": "ada_admin", "password": "short", "roles": ["reviewer"]},
    )
    html = response.content.decode()
    assert "a user with this name exists" in html
    assert "This password is too short" in html


# --------------------------------------------------------------------------- seed import


def _upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


@pytest.mark.django_db(transaction=True)
def test_an_import_job_reports_progress_counts_and_skipped_rows(personas):
    content = (HUB / "apps.jsonl").read_bytes()
    job = imports.import_job_create(source="apps", upload=_upload("apps.jsonl", content))
    assert (job.state, job.lines_total, job.size_bytes) == ("queued", 3, len(content))
    seen = []
    original = imports.import_seeds

    def watched(**kwargs):
        progress = kwargs["progress"]
        kwargs["progress"] = lambda line: (seen.append(line), progress(line))
        return original(**kwargs)

    imports.import_seeds, saved = watched, imports.import_seeds
    try:
        assert imports.import_job_run(job.pk) == "done"
    finally:
        imports.import_seeds = saved
    assert seen == [1, 2, 3]
    job.refresh_from_db()
    assert job.content is None and job.lines_read == 3
    report = job.report
    assert (report["imported"], report["created"], report["with_reference"]) == (2, 2, 1)
    assert report["skipped"] == 1 and report["skipped_reasons"][0][0] == 3
    assert report["skipped_reasons"][0][1].startswith("call-based (fn_name ")
    page = personas.admin.client.get(reverse("staff:import_detail", args=[job.pk]))
    html = page.content.decode()
    assert 'id="count-imported">2<' in html and 'id="count-skipped">1<' in html
    assert "call-based (fn_name" in html
    # The same file again: nothing new, nothing duplicated.
    again = imports.import_job_create(source="apps", upload=_upload("apps.jsonl", content))
    assert imports.import_job_run(again.pk) == "done"
    again.refresh_from_db()
    assert (again.report["created"], again.report["unchanged"]) == (0, 2)
    assert Problem.objects.filter(origin_dataset="apps").count() == 2
    # A redelivered message for a finished job does nothing.
    assert imports.import_job_run(job.pk) == "done"


@pytest.mark.django_db(transaction=True)
def test_a_bad_line_fails_the_import_naming_line_field_and_showing_it(personas):
    rows = [json.loads(line) for line in (HUB / "taco.jsonl").read_text().splitlines()]
    del rows[1]["question"]
    text = "".join(json.dumps(r) + "\n" for r in rows).encode()
    job = imports.import_job_create(source="taco", upload=_upload("taco.jsonl", text))

    assert imports.import_job_run(job.pk) == "failed"

    job.refresh_from_db()
    assert (job.error_line, job.error_field, job.error) == (2, "question", "is missing")
    assert job.error_excerpt.startswith("{") and '"question"' not in job.error_excerpt
    assert not Problem.objects.filter(origin_dataset="taco").exists()
    html = personas.admin.client.get(reverse("staff:import_detail", args=[job.pk])).content
    assert b"Line 2, field <code>question</code>:</b> is missing" in html
    assert b"Nothing was written" in html


@pytest.mark.django_db(transaction=True)
def test_parquet_uploads_and_lcb_solutions_are_imported():
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in (HUB / "codecontests.jsonl").read_text().splitlines()]
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer)
    job = imports.import_job_create(
        source="codecontests", upload=_upload("cc.parquet", buffer.getvalue())
    )
    assert job.lines_total == len(rows)
    assert imports.import_job_run(job.pk) == "done"
    job.refresh_from_db()
    assert job.report["imported"] == len(rows)

    sample = HUB.parent / "lcb_sample.jsonl"
    first = json.loads(sample.read_text().splitlines()[0])
    right = "for _ in range(int(input())):\n    print('YES' if input().strip() in ('abc', 'acb', 'bac', 'cba') else 'NO')\n"
    solution = json.dumps({"question_id": first["question_id"], "solution": right})
    with_solutions = imports.import_job_create(
        source="lcb",
        set_name="lcb-page",
        upload=_upload(sample.name, sample.read_bytes()),
        solutions_upload=_upload("sols.jsonl", solution.encode()),
    )
    assert imports.import_job_run(with_solutions.pk) == "done"
    with_solutions.refresh_from_db()
    assert with_solutions.report["with_reference"] == 1
    assert with_solutions.report["problem_set"] == "lcb-page"


@pytest.mark.django_db(transaction=True)
def test_the_import_page_refuses_a_wrong_reference_and_replaces_references_when_asked(personas):
    sample = HUB.parent / "lcb_sample.jsonl"
    wrong = json.dumps({"question_id": "1873_A", "solution": 'print("YES")\n'}).encode()
    page = personas.admin.client.get(reverse("staff:import_new")).content.decode()
    assert 'name="replace_references"' in page

    personas.admin.client.post(
        reverse("staff:import_new"),
        {
            "source": "lcb",
            "file": _upload("lcb.jsonl", sample.read_bytes()),
            "solutions": _upload("wrong.jsonl", wrong),
        },
    )
    job = SeedImportJob.objects.get()
    assert imports.import_job_run(job.pk) == "done"
    job.refresh_from_db()
    assert (job.report["with_reference"], job.report["references_refused"]) == (0, 1)
    (note,) = job.report["references"]
    assert (note["origin_id"], note["action"], note["test"]) == (
        "1873_A",
        "refused",
        "public test #0",
    )
    html = personas.admin.client.get(reverse("staff:import_detail", args=[job.pk])).content
    html = html.decode()
    assert 'id="reference-notes"' in html and "public test #0" in html
    assert "solutions file wrong.jsonl, line 1" in html

    Problem.objects.filter(origin_id="1873_A").update(
        reference_solution="print('kept')\n", reference_provenance={"source": "record"}
    )
    personas.admin.client.post(
        reverse("staff:import_new"),
        {
            "source": "lcb",
            "file": _upload("lcb.jsonl", sample.read_bytes()),
            "replace_references": "on",
        },
    )
    replacing = SeedImportJob.objects.order_by("-pk").first()
    assert replacing.replace_references is True
    assert imports.import_job_run(replacing.pk) == "done"
    replacing.refresh_from_db()
    assert replacing.report["references_dropped"] == 1
    assert Problem.objects.get(origin_id="1873_A").reference_solution == ""


@pytest.mark.django_db
def test_a_running_import_shows_the_line_it_reached_and_keeps_polling(personas):
    job = SeedImportJob.objects.create(
        source="codecontests", file_name="big.jsonl", state="running", lines_total=400
    )
    SeedImportJob.objects.filter(pk=job.pk).update(lines_read=100)
    url = reverse("staff:import_detail", args=[job.pk])
    html = personas.admin.client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "Reading line 100 of 400" in html
    assert 'style="width: 25.0%"' in html
    assert 'hx-trigger="every 1s"' in html  # polls until the job is finished
    SeedImportJob.objects.filter(pk=job.pk).update(state="done", report={"imported": 3})
    done = personas.admin.client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-trigger="every 1s"' not in done and 'id="count-imported">3<' in done


@pytest.mark.django_db
def test_a_queued_import_without_a_live_worker_says_it_waits(personas):
    job = SeedImportJob.objects.create(source="humaneval")
    html = personas.admin.client.get(reverse("staff:import_detail", args=[job.pk])).content
    assert b"No live worker for the default queue." in html
    assert b"Waiting for a worker" in html


@pytest.mark.django_db
def test_the_upload_form_checks_its_inputs_before_queueing(personas, settings):
    url = reverse("staff:import_new")
    no_file = personas.admin.client.post(url, {"source": "taco"})
    assert "the taco importer needs a file" in no_file.content.decode()
    wrong = personas.admin.client.post(
        url,
        {
            "source": "taco",
            "file": _upload("t.jsonl", b"{}\n"),
            "solutions": _upload("s.jsonl", b"{}\n"),
        },
    )
    assert "a solutions file goes with the LiveCodeBench importer" in wrong.content.decode()
    settings.MAX_UPLOAD_BYTES = 1024
    big = personas.admin.client.post(
        url, {"source": "taco", "file": _upload("t.jsonl", b"x" * 2048)}
    )
    assert "uploads are limited to 1024 bytes" in big.content.decode()
    assert not SeedImportJob.objects.exists()
    page = personas.admin.client.get(url).content.decode()
    from evolution.importers import SOURCES

    for source in SOURCES:  # every importer the HTTP API lists is offered
        assert f'value="{source}"' in page


@pytest.mark.django_db
def test_a_panel_is_edited_until_a_launched_campaign_was_measured_by_it(personas):
    from evolution.models.campaigns import CampaignState
    from tests.factories import CampaignFactory

    a = ModelEndpointFactory(name="model-a")
    b = ModelEndpointFactory(name="model-b")
    member = PanelMemberFactory(endpoint=a, attempts=4)
    panel = member.panel
    CampaignFactory(panel=panel, state=CampaignState.DRAFT)
    edit = reverse("staff:panel_edit", args=[panel.pk])
    form = personas.admin.client.get(edit).content.decode()
    assert re.search(rf'name="member_{a.pk}"[^>]*checked', form)
    assert re.search(rf'name="attempts_{a.pk}"[^>]*value="4"', form)
    assert not re.search(rf'name="member_{b.pk}"[^>]*checked', form)
    assert personas.curator.client.get(edit).status_code == 403
    saved = personas.admin.client.post(
        edit,
        {"name": panel.name, f"member_{b.pk}": "on", f"attempts_{b.pk}": "6"},
    )
    assert saved["Location"] == reverse("staff:panel_detail", args=[panel.pk])
    assert [(m.endpoint.name, m.attempts) for m in panel.members.all()] == [("model-b", 6)]
    # The same name is the panel's own; another panel's name is refused.
    other = PanelMemberFactory(endpoint=a).panel
    taken = personas.admin.client.post(edit, {"name": other.name, f"member_{a.pk}": "on"})
    assert "a panel with this name exists" in taken.content.decode()

    launched = CampaignFactory(panel=panel, state=CampaignState.RUNNING, name="live one")
    refused = personas.admin.client.post(edit, {"name": panel.name, f"member_{a.pk}": "on"})
    assert refused["Location"] == reverse("staff:panel_detail", args=[panel.pk])
    assert [m.endpoint.name for m in panel.members.all()] == ["model-b"]
    page = personas.admin.client.get(refused["Location"]).content.decode()
    assert "measures launched campaigns (live one)" in page
    assert 'id="panel-locked"' in page and 'id="edit-panel"' not in page
    assert launched.panel_id == panel.pk


@pytest.mark.django_db
def test_an_endpoint_is_deleted_only_when_nothing_refers_to_it(personas):
    spare = ModelEndpointFactory(name="typo-endpoint")
    used = PanelMemberFactory(endpoint=ModelEndpointFactory(name="in-use")).endpoint
    LLMCall.objects.create(endpoint=used, role="solver")
    client = personas.admin.client
    delete = reverse("staff:endpoint_delete", args=[used.pk])
    assert personas.curator.client.post(delete, {"confirm": "in-use"}).status_code == 403
    assert client.get(delete).status_code == 405
    kept = client.post(delete, {"confirm": "in-use"}, follow=True).content.decode()
    assert (
        "Endpoint in-use is kept: 1 call in the cost ledger; 1 panel; 1 panel member refer to it."
        in kept
    )
    assert ModelEndpoint.objects.filter(pk=used.pk).exists()

    unconfirmed = reverse("staff:endpoint_delete", args=[spare.pk])
    page = client.post(unconfirmed, {"confirm": "typo"}, follow=True).content.decode()
    assert "Type the endpoint&#x27;s name, typo-endpoint, to delete it." in page
    done = client.post(unconfirmed, {"confirm": "typo-endpoint"})
    assert done["Location"] == reverse("staff:endpoint_list")
    assert not ModelEndpoint.objects.filter(pk=spare.pk).exists()
