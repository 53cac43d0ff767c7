"""The navigation and the landing page as each visitor sees them: the public first (most
visitors have no account), a curator's release work one click away."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from accounts.roles import CURATOR
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_landing_page_puts_the_public_first():
    html = Client().get("/").content.decode()
    public, admins = html.index('id="public"'), html.index("<h2>Admins</h2>")
    assert public < admins
    assert reverse("releases:public_list") in html[public:admins]


def test_a_curator_reaches_release_curation_from_every_page():
    curator = UserFactory()
    curator.groups.add(Group.objects.get_or_create(name=CURATOR)[0])
    client = Client()
    client.force_login(curator)
    curate = reverse("releases:curate_list")
    for page in ("/", reverse("releases:public_list")):
        html = client.get(page).content.decode()
        assert f'href="{curate}" id="nav-curate"' in html, page
    anonymous = Client().get("/").content.decode()
    assert 'id="nav-curate"' not in anonymous
