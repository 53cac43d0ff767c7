"""The OpenAPI document is true: one schema per name, the error answers documented, and a
bounded schemathesis run over every operation finds no server error and no answer the schema
does not document (status code, content type, headers, body), and invalid input refused."""

from __future__ import annotations

import collections
import typing

import pydantic
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    negative_data_rejection,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.models import APIToken
from benchapp.api import api
from benchapp.wsgi import application


def _models(annotation, depth=0):
    if depth > 8:
        return
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        yield annotation
        for field in annotation.model_fields.values():
            yield from _models(field.annotation, depth + 1)
    for arg in typing.get_args(annotation):
        yield from _models(arg, depth + 1)


def test_no_two_different_schemas_share_a_name():
    by_name = collections.defaultdict(dict)
    for _, router in api._routers:
        for view in router.path_operations.values():
            for op in view.operations:
                roots = list(op.models) + list((op.response_models or {}).values())
                for root in roots:
                    for model in _models(root):
                        if model.__module__ == "abc":  # the framework's per-operation wrappers
                            continue
                        by_name[model.__name__][model] = model.model_json_schema()
    clashes = {
        name: sorted(f"{m.__module__}.{m.__qualname__}" for m in models)
        for name, models in by_name.items()
        # Same name is harmless only when the documented shape is the same.
        if len({repr(sorted(s.items())) for s in models.values()}) > 1
    }
    assert clashes == {}


def test_every_operation_documents_its_error_answers():
    schema = api.get_openapi_schema()
    missing = []
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            codes = {str(code) for code in op["responses"]}
            # Every operation may meet the edge's 400 (a NUL in the URL, query or body).
            need = {"400"}
            if op.get("security"):
                need |= {"401", "403"}
            if "{" in path:
                need.add("404")
            if op.get("parameters") or op.get("requestBody"):
                need.add("422")
            if need - codes:
                missing.append((method, path, sorted(need - codes)))
    assert missing == []
    # The control operations keep their own 409.
    launch = schema["paths"]["/api/campaigns/{campaign_id}/launch"]["post"]["responses"]
    assert "409" in {str(code) for code in launch}


@pytest.fixture
def admin_token(transactional_db):
    from accounts.services import user_create

    user = user_create(username="fuzz_admin", password="fuzz-admin-password", role="admin")
    return APIToken.issue(user=user, name="fuzz")[1]


@pytest.fixture
def references(transactional_db, monkeypatch):
    """Rows the generated requests may name, so they reach past "does not exist": a loopback
    endpoint, a panel, a seed set of tested problems and a draft campaign. A launch starts no
    tick chain (nothing consumes it here)."""
    from evolution.benchevolver.services import campaign_create
    from tests.factories import (
        ModelEndpointFactory,
        PanelFactory,
        PanelMemberFactory,
        ProblemSetFactory,
        TestCaseFactory,
    )

    monkeypatch.setattr("evolution.streams.lifecycle.start_ticking", lambda *a, **k: None)
    endpoint = ModelEndpointFactory(name="fuzz-endpoint")
    panel = PanelFactory(name="fuzz-panel")
    PanelMemberFactory(panel=panel, endpoint=endpoint)
    seeds = ProblemSetFactory(
        name="fuzz-seeds", problems=[TestCaseFactory().problem, TestCaseFactory().problem]
    )
    campaign = campaign_create(name="fuzz", seed_set=seeds, evolver=endpoint, panel=panel)
    return {
        "endpoint": endpoint.pk,
        "endpoints": [endpoint.pk],
        "panel": panel.pk,
        "set": seeds.name,
        "campaign": campaign.pk,
    }


# Which field of a request names which of the rows above.
BODY_REFERENCES = {
    **dict.fromkeys(
        (
            "evolver_id",
            "endpoint_id",
            "generator_endpoint_id",
            "mutator_endpoint_id",
            "solver_endpoint_id",
            "generation_endpoint_id",
            "answering_endpoint_id",
            "quality_endpoint_id",
        ),
        "endpoint",
    ),
    **dict.fromkeys(("solver_endpoint_ids", "judge_endpoint_ids", "endpoint_ids"), "endpoints"),
    "panel_id": "panel",
    **dict.fromkeys(("seed_set", "calibration_open", "calibration_closed"), "set"),
}
PATH_REFERENCES = {"campaign_id": "campaign", "endpoint_id": "endpoint"}

POSITIVE_EXAMPLES = 10
NEGATIVE_EXAMPLES = 5
# The response must be what the schema documents: no server error, a documented status code,
# content type, headers and body.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def _referring(case, rows: dict):
    """``case`` naming existing rows wherever a field names one."""
    if isinstance(case.body, dict):
        for field, row in BODY_REFERENCES.items():
            if field in case.body:
                case.body[field] = rows[row]
    for field, row in PATH_REFERENCES.items():
        if case.path_parameters and field in case.path_parameters:
            case.path_parameters[field] = rows[row]
    return case


def _fuzzer(operation, mode, headers, rows, statuses, failures, unauthorized):
    strategy = operation.as_strategy(generation_mode=mode)
    if mode == GenerationMode.POSITIVE:
        # Half the requests name existing rows: the code behind the references runs too.
        strategy = st.tuples(strategy, st.booleans()).map(
            lambda pair: _referring(pair[0], rows) if pair[1] else pair[0]
        )
        checks, examples = CHECKS, POSITIVE_EXAMPLES
    else:
        checks, examples = [*CHECKS, negative_data_rejection], NEGATIVE_EXAMPLES

    @given(case=strategy)
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case):
        response = case.call(headers=headers)
        statuses[response.status_code // 100] += 1
        # Token issuance authenticates by password (fuzzed, so refused); every other operation
        # takes the admin's bearer token, which must always be accepted.
        if response.status_code == 401 and not operation.path.endswith("/tokens"):
            unauthorized.append(operation.label)
        try:
            case.validate_response(response, checks=checks, headers=headers)
        except (Exception, BaseExceptionGroup) as exc:  # each failure carries its reproduction
            failures.append(f"{operation.label} ({mode.value}): {str(exc)[:1500]}")

    return fuzz


@pytest.mark.slow
def test_the_api_answers_as_its_schema_says(admin_token, references):
    """Every documented operation, fed schema-generated input as an admin (bounded: a few
    positive and negative examples each, derandomized so a failure reproduces; half the valid
    ones naming existing rows), answers below 500 and exactly as the schema documents: status
    code, content type, headers and body; invalid input is refused."""
    headers = {"Authorization": f"Bearer {admin_token}"}
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application, headers=headers)
    failures = []
    unauthorized = []
    statuses = collections.Counter()
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            fuzz = _fuzzer(operation, mode, headers, references, statuses, failures, unauthorized)
            try:
                fuzz()
            except Unsatisfiable:  # an operation without input has nothing to make invalid
                assert mode == GenerationMode.NEGATIVE, operation.label
    assert operations > 40
    assert failures == [], "\n\n".join(failures)
    # The token works: no operation refused it, and generated requests did succeed.
    assert unauthorized == []
    assert statuses[2] > 0, statuses
