"""Production headers: HSTS, the HTTPS redirect and the proxy's TLS header come from the
environment; every page carries a Content Security Policy that the pages pass in a real
browser (htmx and plotly.js are served locally, inline scripts carry the nonce)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.urls import reverse

from tests.support.browser import chromium_page, log_in

SETTINGS_PROBE = (
    "import django;django.setup();from django.conf import settings as s;"
    "print(s.SECURE_HSTS_SECONDS, s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER)"
)


def _settings_with(**env) -> str:
    import os

    return subprocess.run(
        [sys.executable, "-c", SETTINGS_PROBE],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "benchapp.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_https_settings_come_from_the_environment():
    assert _settings_with() == "0 False None"
    assert (
        _settings_with(
            SECURE_HSTS_SECONDS="31536000", SECURE_SSL_REDIRECT="1", SECURE_PROXY_SSL_HEADER="1"
        )
        == "31536000 True ('HTTP_X_FORWARDED_PROTO', 'https')"
    )


def test_behind_a_tls_proxy_the_app_redirects_plain_http_and_sends_hsts(client, settings, db):
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_HSTS_SECONDS = 3600
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

    plain = client.get("/releases/")
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    secure = client.get("/releases/", HTTP_X_FORWARDED_PROTO="https")
    assert secure.status_code == 200
    assert secure["Strict-Transport-Security"] == "max-age=3600"
    # The health probe answers over plain HTTP inside the network.
    assert client.get("/healthz").status_code in (200, 503)


def test_every_page_carries_the_policy(client, db):
    response = client.get("/accounts/login/")
    policy = response["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "'unsafe-eval'" not in policy
    assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
    assert response["X-Content-Type-Options"] == "nosniff"


VIOLATIONS = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__csp.push(e.violatedDirective + " " + e.blockedURI + " " + e.sourceFile + ":" + e.lineNumber);
});
"""


@pytest.mark.browser
@pytest.mark.slow
def test_the_pages_pass_the_policy_in_a_real_browser(transactional_db, live_server):
    from accounts.services import user_create
    from tests.releases.helpers import frozen_release

    world, release = frozen_release(publish=True)
    user_create(username="csp_admin", password="csp-admin-password", role="admin")
    slug, version = release.benchmark.slug, release.version
    item = release.items.first().public_id
    campaign = world.campaign.pk
    public = [
        "/",
        "/accounts/login/",
        "/releases/",
        f"/releases/{slug}/v{version}/",
        f"/releases/{slug}/v{version}/leaderboard/",
        f"/releases/{slug}/v{version}/items/{item}/",
    ]
    admin = [
        reverse("evolution:campaign_detail", args=[campaign]),
        reverse("evolution:campaign_heatmap", args=[campaign]),
        reverse("evolution:campaign_analytics", args=[campaign]),
        reverse("evolution:problem_list"),
        f"/curate/releases/{release.pk}/",
    ]
    seen = {}
    with chromium_page() as page:
        page.add_init_script(VIOLATIONS)
        for url in public:
            page.goto(live_server.url + url)
            page.wait_for_load_state("networkidle")
            seen[url] = page.evaluate("window.__csp")
        log_in(page, live_server.url, "csp_admin", "csp-admin-password")
        for url in admin:
            page.goto(live_server.url + url)
            page.wait_for_load_state("networkidle")
            seen[url] = page.evaluate("window.__csp")
        # The charts did draw: plotly ran under the policy.
        page.goto(live_server.url + reverse("evolution:campaign_analytics", args=[campaign]))
        page.wait_for_load_state("networkidle")
        charts = page.locator(".js-plotly-plot").count()
    assert {url: v for url, v in seen.items() if v} == {}
    assert charts >= 1
