"""The OpenAPI document is true: one schema per name, the error answers documented, and a
bounded schemathesis run over every operation finds no server error."""

from __future__ import annotations

import collections
import typing

import pydantic
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from benchapp.api import api
from benchapp.models import APIToken
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
            need = set()
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
    from benchapp.services import user_create

    user = user_create(username="fuzz_admin", password="fuzz-admin-password", role="admin")
    return APIToken.issue(user=user, name="fuzz")[1]


EXAMPLES_PER_OPERATION = 6


def _fuzzer(operation, headers, statuses, failures, unauthorized):
    @given(case=operation.as_strategy())
    @settings(
        max_examples=EXAMPLES_PER_OPERATION,
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
            case.validate_response(response, checks=[not_a_server_error], headers=headers)
        except Exception as exc:  # the check's failure carries the reproduction
            failures.append(f"{operation.label}: {response.status_code} {str(exc)[:300]}")

    return fuzz


@pytest.mark.slow
def test_the_api_never_answers_a_server_error(admin_token):
    """Every documented operation, fed schema-generated input (bounded: a few examples each,
    derandomized so a failure reproduces) as an admin, answers below 500."""
    headers = {"Authorization": f"Bearer {admin_token}"}
    # The schema is for admins and curators (tests/benchapp/test_closed_endpoints.py).
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", application, headers=headers)
    failures = []
    unauthorized = []
    statuses = collections.Counter()
    operations = 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1

        fuzz = _fuzzer(operation, headers, statuses, failures, unauthorized)
        fuzz()
    assert operations > 40
    assert failures == []
    # The token works: no operation refused it, and generated requests did succeed.
    assert unauthorized == []
    assert statuses[2] > 0, statuses
