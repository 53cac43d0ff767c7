"""The statement floor counts words and punctuation marks, not tokens, and is named for it:
``min_statement_words``. Stored campaigns are migrated; the former name is refused with the new
one named."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError

from evolution.models import Campaign
from xcoder.config import XcoderSettings

migration = importlib.import_module("xcoder.migrations.0004_min_statement_words")


def test_the_floor_is_named_for_what_it_counts():
    assert XcoderSettings().min_statement_words == 200
    assert "words and punctuation marks" in XcoderSettings.HELP["min_statement_words"]
    assert XcoderSettings.from_dict({"min_statement_words": 150}).min_statement_words == 150


def test_the_former_name_is_refused_naming_the_new_one():
    with pytest.raises(ValidationError) as refused:
        XcoderSettings.from_dict({"min_statement_tokens": 150})
    (message,) = refused.value.message_dict["min_statement_tokens"]
    assert message.startswith("'min_statement_tokens' is now called 'min_statement_words': ")


@pytest.mark.django_db
def test_stored_campaigns_are_migrated_to_the_new_name_and_back():
    old = Campaign.objects.create(
        name="x", kind="xcoder", settings={"min_statement_tokens": 150, "num_tasks": 3}
    )
    other = Campaign.objects.create(
        name="b", kind="benchevolver", settings={"min_statement_tokens": 7}
    )
    migration.rename(apps, None)
    old.refresh_from_db()
    other.refresh_from_db()
    assert old.settings == {"min_statement_words": 150, "num_tasks": 3}
    assert other.settings == {"min_statement_tokens": 7}  # not an X-Coder campaign: untouched
    assert XcoderSettings.from_dict(old.settings).min_statement_words == 150
    migration.rename_back(apps, None)
    old.refresh_from_db()
    assert old.settings == {"min_statement_tokens": 150, "num_tasks": 3}
