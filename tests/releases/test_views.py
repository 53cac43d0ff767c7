"""Curator pages and API operations: roles, forms, and clear errors for bad input."""

from __future__ import annotations

from django.urls import reverse

from releases.models import Benchmark, Release

from .builders import crafted_world


def test_curator_pages_are_for_curators_and_admins_only(personas):
    url = reverse("releases:curate_list")
    assert personas.reviewer_a.client.get(url).status_code == 403
    assert personas.curator.client.get(url).status_code == 200
    assert personas.admin.client.get(url).status_code == 200
    post = reverse("releases:benchmark_new")
    assert personas.reviewer_a.client.post(post, {"name": "X"}).status_code == 403
    assert not Benchmark.objects.exists()


def test_a_curator_builds_a_draft_and_gets_clear_errors(personas):
    world = crafted_world()
    client = personas.curator.client
    client.post(reverse("releases:benchmark_new"), {"name": "LiveCodeBench-Plus"})
    bench = Benchmark.objects.get()
    response = client.post(
        reverse("releases:release_new"),
        {"benchmark": bench.pk, "version": "1.0.0", "campaigns": [world.campaign.pk]},
    )
    release = Release.objects.get()
    assert response["Location"] == reverse("releases:curate_detail", args=[release.pk])

    bad = client.post(
        reverse("releases:release_rules", args=[release.pk]), {"mode": "json", "rules": "{nope"}
    )
    assert bad.status_code == 400
    assert "Line 1, column 2: Expecting property name enclosed in double quotes." in (
        bad.content.decode()
    )
    bad = client.post(
        reverse("releases:release_rules", args=[release.pk]),
        {"mode": "json", "rules": '{\n  "max_pass_at_1": 2\n}'},
    )
    assert bad.status_code == 400
    assert "Line 2, column 3: &quot;max_pass_at_1&quot; must be between 0.0 and 1.0" in (
        bad.content.decode()
    )
    unconfirmed = client.post(reverse("releases:release_freeze", args=[release.pk]), follow=True)
    assert "Freezing cannot be undone: confirm it" in unconfirmed.content.decode()
    early = client.post(
        reverse("releases:release_freeze", args=[release.pk]), {"confirm": "freeze"}, follow=True
    )
    assert "Run the gate before freezing" in early.content.decode()

    # By default the gate reads only independent figures (the selection-time pass@1 is biased
    # low by selection): with no independent evaluation, no evolved problem passes.
    api = client.post(f"/api/releases/{release.pk}/gate")
    assert api.status_code == 200 and api.json()["passed"] == 0
    page = client.get(reverse("releases:curate_detail", args=[release.pk])).content.decode()
    assert "this release requires the independent pass@1" in page
    # The curator lets it read the selection-time figure, saying why; the report shows why.
    reason = "pilot release: independent evaluation scheduled for v1.1"
    rules = f'{{"require_independent": false, "selection_time_reason": "{reason}"}}'
    ok = client.post(
        reverse("releases:release_rules", args=[release.pk]), {"mode": "json", "rules": rules}
    )
    assert ok.status_code in (200, 302), ok.content.decode()[:2000]
    api = client.post(f"/api/releases/{release.pk}/gate")
    assert api.status_code == 200 and api.json()["passed"] == 3
    page = client.get(reverse("releases:curate_detail", args=[release.pk])).content.decode()
    assert "3 of 12 candidates pass" in page
    assert f"selection-time figure read by the curator&#x27;s choice: {reason}" in page
    lowq = world.problem("E-LOWQ")
    unjustified = client.post(
        reverse("releases:release_decide", args=[release.pk]),
        {"problem": lowq.pk, "include": "1", "justification": ""},
        follow=True,
    )
    assert "Say why you go against the gate" in unjustified.content.decode()
    frozen = client.post(f"/api/releases/{release.pk}/freeze").json()
    assert frozen["state"] == "frozen" and frozen["item_count"] == 3
    assert client.post(f"/api/releases/{release.pk}/gate").status_code == 400
    assert personas.reviewer_a.client.post(f"/api/releases/{release.pk}/publish").status_code == 403
    assert client.post(f"/api/releases/{release.pk}/publish").json()["state"] == "published"
    upload = client.post(
        reverse("releases:release_upload", args=[release.pk]),
        {"label": "m", "file": _file("not json")},
        follow=True,
    )
    assert "line 1: not JSON" in upload.content.decode()


def _file(text: str):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("solutions.jsonl", text.encode(), content_type="application/json")
