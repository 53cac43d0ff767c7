"""Campaign pages and API: who may see and control what; the live page in a real browser."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from accounts.models import APIToken
from evolution.benchevolver.services import campaign_create
from evolution.models import Campaign
from evolution.models.campaigns import CampaignState
from tests.factories import (
    CandidateFactory,
    ModelEndpointFactory,
    PanelMemberFactory,
    ProblemFactory,
    ProblemSetFactory,
)
from tests.support.browser import chromium_page, log_in


def make_campaign(created_by=None) -> Campaign:
    seeds = [ProblemFactory() for _ in range(3)]
    member = PanelMemberFactory()
    return campaign_create(
        name="LCB hard",
        seed_set=ProblemSetFactory(problems=seeds),
        evolver=ModelEndpointFactory(),
        panel=member.panel,
        settings={"target_eval_k": 2},
        created_by=created_by,
    )


@pytest.mark.django_db
class TestPermissions:
    def test_admins_and_curators_see_campaigns_reviewers_and_anonymous_do_not(self, personas):
        campaign = make_campaign()
        for url in (
            reverse("evolution:campaign_list"),
            reverse("evolution:campaign_detail", args=[campaign.pk]),
        ):
            assert personas.admin.client.get(url).status_code == 200
            assert personas.curator.client.get(url).status_code == 200
            assert personas.reviewer_a.client.get(url).status_code == 403
            assert personas.anonymous.client.get(url).status_code == 302

    def test_only_admins_launch_pause_or_cancel(self, personas, django_capture_on_commit_callbacks):
        campaign = make_campaign()
        url = reverse("evolution:campaign_control", args=[campaign.pk, "launch"])
        assert personas.curator.client.post(url).status_code == 403
        assert personas.reviewer_a.client.post(url).status_code == 403
        with django_capture_on_commit_callbacks(execute=False):
            assert personas.admin.client.post(url).status_code == 302
        campaign.refresh_from_db()
        assert campaign.state == CampaignState.QUEUED

    def test_an_illegal_transition_is_refused_with_a_message(self, personas):
        campaign = make_campaign()
        response = personas.admin.client.post(
            reverse("evolution:campaign_control", args=[campaign.pk, "resume"]), follow=True
        )
        assert "cannot become queued" in response.content.decode()
        campaign.refresh_from_db()
        assert campaign.state == CampaignState.DRAFT

    def test_the_new_campaign_form_validates_settings_by_name(self, personas):
        seeds = ProblemSetFactory(problems=[ProblemFactory()])
        member = PanelMemberFactory()
        evolver = ModelEndpointFactory()
        response = personas.admin.client.post(
            reverse("evolution:campaign_new"),
            {
                "name": "x",
                "seed_set": seeds.pk,
                "evolver": evolver.pk,
                "panel": member.panel.pk,
                "setting_target_eval_k": "0",
            },
        )
        assert response.status_code == 200
        assert "must be between 1 and 64" in response.content.decode()
        assert not Campaign.objects.exists()
        assert personas.curator.client.get(reverse("evolution:campaign_new")).status_code == 403

    def test_the_campaign_page_shows_every_setting_and_the_replay_label(self, personas):
        campaign = make_campaign()
        Campaign.objects.filter(pk=campaign.pk).update(replayed=True)
        html = personas.admin.client.get(
            reverse("evolution:campaign_detail", args=[campaign.pk])
        ).content.decode()
        for name in (
            "target_eval_k",
            "max_candidate_repairs",
            "global_memory_max_chars",
            "level_thresholds",
        ):
            assert name in html
        assert "replayed responses" in html


@pytest.mark.django_db
class TestApi:
    def token_header(self, user) -> dict:
        _, raw = APIToken.issue(user=user, name="script")
        return {"HTTP_AUTHORIZATION": f"Bearer {raw}"}

    def test_an_admin_script_creates_launches_and_pauses_a_campaign(
        self, personas, client, django_capture_on_commit_callbacks
    ):
        seeds = ProblemSetFactory(problems=[ProblemFactory(), ProblemFactory()])
        member = PanelMemberFactory()
        evolver = ModelEndpointFactory()
        auth = self.token_header(personas.admin.user)
        with django_capture_on_commit_callbacks(execute=False):
            response = client.post(
                "/api/campaigns",
                {
                    "name": "api",
                    "seed_set": seeds.name,
                    "evolver_id": evolver.pk,
                    "panel_id": member.panel.pk,
                    "settings": {"max_iters_per_seed": 2},
                    "launch": True,
                },
                content_type="application/json",
                **auth,
            )
        assert response.status_code == 201, response.content
        body = response.json()
        assert body["state"] == "queued" and body["settings"]["max_iters_per_seed"] == 2
        campaign_id = body["id"]
        progress = client.get(f"/api/campaigns/{campaign_id}/progress", **auth).json()
        assert progress["lineages"]["total"] == 2
        response = client.post(f"/api/campaigns/{campaign_id}/pause", **auth)
        assert response.status_code == 200 and response.json()["state"] == "paused"
        response = client.post(f"/api/campaigns/{campaign_id}/pause", **auth)
        assert response.status_code == 409

    def test_bad_settings_come_back_as_a_400_naming_the_key(self, personas, client):
        seeds = ProblemSetFactory(problems=[ProblemFactory()])
        member = PanelMemberFactory()
        response = client.post(
            "/api/campaigns",
            {
                "name": "api",
                "seed_set": seeds.name,
                "evolver_id": ModelEndpointFactory().pk,
                "panel_id": member.panel.pk,
                "settings": {"temperature": 9},
            },
            content_type="application/json",
            **self.token_header(personas.admin.user),
        )
        assert response.status_code == 400
        assert "temperature" in response.json()["errors"]

    def test_reviewers_cannot_launch_or_see_campaigns(self, personas, client):
        campaign = make_campaign()
        auth = self.token_header(personas.reviewer_a.user)
        assert client.get("/api/campaigns", **auth).status_code == 403
        assert client.get(f"/api/campaigns/{campaign.pk}", **auth).status_code == 403
        assert client.post(f"/api/campaigns/{campaign.pk}/launch", **auth).status_code == 403
        assert client.get("/api/campaigns").status_code == 401

    def test_endpoints_never_return_a_key_only_whether_it_is_set(
        self, personas, client, monkeypatch
    ):
        ModelEndpointFactory(name="remote", api_key_env="BENCHFORGE_KEY_TEST")
        monkeypatch.setenv("BENCHFORGE_KEY_TEST", "sk-very-secret")
        response = client.get("/api/endpoints", **self.token_header(personas.curator.user))
        assert response.status_code == 200
        assert "sk-very-secret" not in response.content.decode()
        row = next(e for e in response.json() if e["name"] == "remote")
        assert row["api_key_set"] is True and row["api_key_env"] == "BENCHFORGE_KEY_TEST"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_campaign_page_updates_itself_while_the_campaign_runs(live_server, personas):
    campaign = make_campaign(created_by=personas.admin.user)
    Campaign.objects.filter(pk=campaign.pk).update(state=CampaignState.RUNNING)
    with chromium_page() as page:
        log_in(page, live_server.url, personas.admin.user.username, personas.admin.password)
        page.goto(f"{live_server.url}{reverse('evolution:campaign_detail', args=[campaign.pk])}")
        expect(page.locator("#stat-accepted")).to_have_text("0")
        lineage = campaign.lineages.first()
        CandidateFactory(
            lineage=lineage, round=1, decision="accepted", accepted_problem=ProblemFactory()
        )
        Campaign.objects.filter(pk=campaign.pk).update(calls_made=42)
        # No reload: the htmx poll (every 2 s) swaps in the new numbers.
        expect(page.locator("#stat-accepted")).to_have_text("1", timeout=10_000)
        expect(page.locator("#stat-calls")).to_have_text("42")
        Campaign.objects.filter(pk=campaign.pk).update(
            state=CampaignState.PAUSED, state_reason="paused by an admin"
        )
        expect(page.locator("#campaign-state")).to_have_text("paused", timeout=10_000)


@pytest.mark.django_db
def test_campaigns_of_other_kinds_open_their_own_page(personas):
    campaign = Campaign.objects.create(name="questions", kind="reasoning")
    response = personas.curator.client.get(reverse("evolution:campaign_detail", args=[campaign.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("reasoning:campaign_detail", args=[campaign.pk])
    progress = personas.curator.client.get(f"/api/campaigns/{campaign.pk}/progress")
    assert progress.status_code == 200 and progress.json()["lineages"]["total"] == 0


@pytest.mark.django_db
def test_the_candidate_page_renders_the_statement_as_markdown_and_escapes_html(personas):
    cand = CandidateFactory(statement="# Pairs\n\n## Input\nTwo numbers <script>alert(1)</script>")
    html = personas.curator.client.get(
        reverse("evolution:candidate_detail", args=[cand.pk])
    ).content.decode()
    assert "<h2>Input</h2>" in html
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert (
        personas.reviewer_a.client.get(
            reverse("evolution:candidate_detail", args=[cand.pk])
        ).status_code
        == 403
    )
