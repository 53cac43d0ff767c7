"""`manage.py demo` is composed at the top (benchapp), from each app's part in order: no setting
lists dotted paths for the engine to import, and no app below benchapp imports one above it to
build the demo."""

from __future__ import annotations

from django.conf import settings
from django.core.management import get_commands


def test_the_demo_command_is_the_projects_and_lists_each_apps_part_in_order():
    from benchapp.management.commands import demo

    assert get_commands()["demo"] == "benchapp"
    assert [f"{step.__module__}.{step.__name__}" for step in demo.STEPS] == [
        "reasoning.demo.setup.reasoning_demo",
        # Every kind's campaign before the review round and the release, which take their
        # problems.
        "xcoder.demo.setup.xcoder_demo",
        "evosyn.demo.setup.evosyn_demo",
        "frontiersmith.demo.setup.frontiersmith_demo",
        "review.demo.review_demo_hook",
        "releases.demo.releases_demo",
    ]
    assert not hasattr(settings, "DEMO_EXTENSIONS")
