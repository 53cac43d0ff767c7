"""Curator safety without a browser: the gate rules form built from GateRules' fields, the JSON
view's errors with line and column, confirmations for freeze and publish, the next free
version, and evolved problems labelled with their measured difficulty."""

from __future__ import annotations

import dataclasses
import json

import pytest
from django.urls import reverse

from evolution.models import Problem
from releases import difficulty, exports, selectors, services
from releases.gate import GateRules
from releases.gate import form as gate_form
from releases.gate.form import GateRulesForm, RulesJSONError, parse_rules_json
from releases.models import Release
from tests.support.gate_rules import SELECTION_TIME_OK

from .builders import crafted_world

pytestmark = pytest.mark.django_db


def test_the_form_has_one_field_per_rule_with_its_default_and_help():
    form = GateRulesForm.for_rules({})
    names = [f.name for f in dataclasses.fields(GateRules)]
    assert list(form.fields) == names
    defaults = GateRules().to_dict()
    for name in names:
        field = form.fields[name]
        assert field.help_text.endswith(f"Default: {gate_form._shown(defaults[name])}.")
        assert form.initial[name] == defaults[name]
    assert form.fields["min_quality"].label == "Least mean review quality"
    quality = form["min_quality"].as_widget()
    assert 'min="1.0"' in quality and 'max="5.0"' in quality and 'data-kind="float"' in quality
    assert 'data-kind="bool"' in form["reject_invalid"].as_widget()
    assert 'step="1"' in form["min_reviews"].as_widget()


def test_a_rule_added_to_gate_rules_appears_in_the_form_without_more_work(monkeypatch):
    @dataclasses.dataclass(frozen=True)
    class Extended(GateRules):
        min_fresh_samples: int = 16
        evaluation_panel: str | None = dataclasses.field(
            default=None, metadata={"help": "The panel that re-measures."}
        )

    monkeypatch.setattr(gate_form, "GateRules", Extended)
    form = GateRulesForm.for_rules({})
    assert form.fields["min_fresh_samples"].label == "Min fresh samples"
    assert form.fields["min_fresh_samples"].help_text == "Default: 16."
    assert form.fields["evaluation_panel"].help_text == (
        "The panel that re-measures. Default: empty (off)."
    )
    bound = GateRulesForm({**_post(GateRules().to_dict()), "min_fresh_samples": "32"})
    assert bound.is_valid(), bound.errors
    assert bound.rules()["min_fresh_samples"] == 32
    assert bound.rules()["evaluation_panel"] is None


def _post(rules: dict) -> dict:
    data = {}
    for name, value in rules.items():
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        else:
            data[name] = "" if value is None else str(value)
    return data


def test_the_form_checks_what_gate_rules_checks_and_names_the_field():
    rules = GateRules().to_dict()
    form = GateRulesForm(_post({**rules, "min_pass_at_1": 0.8, "max_pass_at_1": 0.6}))
    assert not form.is_valid()
    assert form.errors["min_pass_at_1"] == ["must not exceed max_pass_at_1"]
    form = GateRulesForm(_post({**rules, "min_quality": None}))
    assert not form.is_valid() and form.errors["min_quality"] == ["must not be empty"]
    form = GateRulesForm(_post({**rules, "min_novelty": None, "reject_invalid": False}))
    assert form.is_valid(), form.errors
    assert form.rules()["min_novelty"] is None and form.rules()["reject_invalid"] is False


def test_json_errors_name_the_line_and_column():
    with pytest.raises(RulesJSONError) as exc:
        parse_rules_json('{\n  "min_quality": 3.5,\n  "max_pass_at_1": 0.7\n  "min_reviews": 2\n}')
    assert (exc.value.line, exc.value.column) == (4, 3)
    assert str(exc.value) == "Line 4, column 3: Expecting ',' delimiter."
    with pytest.raises(RulesJSONError) as exc:
        parse_rules_json('{\n  "min_quality": 3.5,\n  "min_reviews": 9.5\n}')
    assert str(exc.value) == 'Line 3, column 3: "min_reviews" must be a whole number, got 9.5.'
    with pytest.raises(RulesJSONError) as exc:
        parse_rules_json('{\n  "min_quality": 3,\n  "min_quality": 4\n}')
    assert str(exc.value) == 'Line 3, column 3: "min_quality" is given twice.'
    with pytest.raises(RulesJSONError) as exc:
        parse_rules_json('{\n  "min_qualiti": 3\n}')
    assert str(exc.value).startswith('Line 2, column 3: "min_qualiti" unknown rule;')
    with pytest.raises(RulesJSONError) as exc:
        parse_rules_json("\n  [1, 2]")
    assert str(exc.value) == "Line 2, column 3: the rules must be a JSON object, {...}."
    assert parse_rules_json('{"min_quality": 3.5}') == {**GateRules().to_dict(), "min_quality": 3.5}


def _draft(personas):
    world = crafted_world()
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="LiveCodeBench-Plus")
    release = services.release_create(benchmark=bench, campaigns=[world.campaign])
    return world, release, personas.curator.client


def test_saving_the_form_and_a_refused_form_keeps_the_values_sent(personas):
    _, release, client = _draft(personas)
    url = reverse("releases:release_rules", args=[release.pk])
    rules = {**GateRules().to_dict(), "min_quality": 3.5, "include_originals": False}
    saved = client.post(url, {**_post(rules), "mode": "form", "notes": "Kept notes."})
    assert saved.status_code == 302
    release.refresh_from_db()
    assert release.gate_rules["min_quality"] == 3.5
    assert release.gate_rules["include_originals"] is False
    assert release.notes == "Kept notes."
    refused = client.post(
        url, {**_post({**rules, "max_pass_at_1": "1.5"}), "mode": "form", "notes": "New notes."}
    )
    assert refused.status_code == 400
    page = refused.content.decode()
    assert 'value="1.5"' in page and "New notes." in page
    assert "must be between 0.0 and 1.0, got 1.5" in page
    release.refresh_from_db()
    assert release.gate_rules["max_pass_at_1"] == 0.75


def test_a_refused_json_keeps_the_text_and_says_where(personas):
    _, release, client = _draft(personas)
    url = reverse("releases:release_rules", args=[release.pk])
    text = '{\n  "min_quality": 4,\n  "max_pass_at_1": 0.7,,\n}'
    refused = client.post(url, {"mode": "json", "rules": text})
    assert refused.status_code == 400
    page = refused.content.decode()
    assert 'data-line="3" data-column="24"' in page
    assert "Line 3, column 24: Expecting property name enclosed in double quotes." in page
    assert "  &quot;max_pass_at_1&quot;: 0.7,,\n}</textarea>" in page
    assert '<details id="rules-advanced" open>' in page
    saved = client.post(url, {"mode": "json", "rules": '{"min_quality": 4}'})
    assert saved.status_code == 302
    release.refresh_from_db()
    assert release.gate_rules == {**GateRules().to_dict(), "min_quality": 4}


def test_freeze_and_publish_need_the_confirmation_and_say_what_becomes_immutable(personas):
    _, release, client = _draft(personas)
    services.gate_run_create(release=release)
    page = client.get(reverse("releases:curate_detail", args=[release.pk])).content.decode()
    assert 'id="freeze-dialog"' in page
    assert (
        "Freezing snapshots the 3 included problems (2 evolved, 1 original) with their 12 tests"
        in page
    )
    assert "What becomes immutable" in page
    url = reverse("releases:release_freeze", args=[release.pk])
    refused = client.post(url, follow=True)
    assert "Freezing cannot be undone" in refused.content.decode()
    assert Release.objects.get(pk=release.pk).state == "draft"
    client.post(url, {"confirm": "freeze"})
    assert Release.objects.get(pk=release.pk).state == "frozen"
    page = client.get(reverse("releases:curate_detail", args=[release.pk])).content.decode()
    assert 'id="publish-dialog"' in page and "cannot be withdrawn" in page
    url = reverse("releases:release_publish", args=[release.pk])
    client.post(url)
    assert Release.objects.get(pk=release.pk).state == "frozen"
    client.post(url, {"confirm": "publish"})
    assert Release.objects.get(pk=release.pk).state == "published"


def test_the_next_version_defaults_to_the_next_free_number(personas):
    client = personas.curator.client
    bench = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Bench A")
    other = services.benchmark_create(default_rules=SELECTION_TIME_OK, name="Bench B")
    assert selectors.next_free_version(benchmark=bench) == "1.0.0"
    client.post(reverse("releases:release_new"), {"benchmark": bench.pk})
    assert Release.objects.get(benchmark=bench).version == "1.0.0"
    assert selectors.next_free_version(benchmark=bench) == "1.1.0"
    page = client.get(reverse("releases:curate_list")).content.decode()
    assert f'<option value="{bench.pk}" data-next-version="1.1.0">' in page
    assert f'<option value="{other.pk}" data-next-version="1.0.0">' in page
    client.post(reverse("releases:release_new"), {"benchmark": bench.pk, "version": ""})
    assert sorted(r.version for r in Release.objects.filter(benchmark=bench)) == [
        "1.0.0",
        "1.1.0",
    ]
    # After v1.0.0 with v1.1.0 taken: patch is the default, minor is marked as existing.
    first = Release.objects.get(benchmark=bench, minor=0)
    options = selectors.release_next_versions(release=first)
    assert [(o["version"], o["free"], o["default"]) for o in options] == [
        ("1.0.1", True, True),
        ("1.1.0", False, False),
        ("2.0.0", True, False),
    ]
    Release.objects.create(benchmark=bench, major=1, minor=0, patch=1)
    options = selectors.release_next_versions(release=first)
    assert [o["default"] for o in options] == [False, False, True]


def test_evolved_items_carry_their_measured_difficulty_not_the_seeds(personas, client):
    world, release, _ = _draft(personas)
    # The engine copies the seed's dataset label onto its evolved problems.
    Problem.objects.filter(kind="evolved").update(origin_difficulty="hard")
    services.gate_run_create(release=release)
    release = services.release_publish(release=services.release_freeze(release=release))
    labels = {i.public_id: (i.difficulty, i.provenance["difficulty"]) for i in release.items.all()}
    ok = world.problem("E-OK").public_id  # 3 of 8 panel attempts pass
    s2 = world.problem("S2").public_id
    assert labels[ok] == (
        "medium",
        {
            "source": "measured",
            "pass_at_1": 0.375,
            "passes": 3,
            "attempts": 8,
            "easy_from": difficulty.EASY_FROM,
            "hard_below": difficulty.HARD_BELOW,
        },
    )
    assert labels[s2] == ("hard", {"source": "dataset", "dataset": "livecodebench"})
    url = reverse("releases:public_item", args=[release.benchmark.slug, release.version, ok])
    page = client.get(url).content.decode()
    assert '<span class="badge difficulty" id="difficulty"' in page and ">medium</span>" in page
    assert "measured: 3 of 8 panel attempts pass (pass@1 0.38)" in page
    export = [
        json.loads(line) for line in exports.export_bytes(release, "jsonl").decode().splitlines()
    ]
    assert {r["problem"]["public_id"]: r["difficulty"] for r in export if "problem" in r}[ok] == (
        "medium"
    )


@pytest.mark.parametrize(
    ("rate", "label"),
    [(0.0, "hard"), (0.29, "hard"), (0.3, "medium"), (0.69, "medium"), (0.7, "easy")],
)
def test_measured_labels_cut_at_the_documented_points(rate, label):
    assert difficulty.measured_label(rate) == label
