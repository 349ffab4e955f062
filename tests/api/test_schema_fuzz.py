"""Every operation of `/api/schema/`, fuzzed with schemathesis as a project member and as a platform admin:
no server error, and every response (status code, content type, body) is what the document says.

Half the examples aim path parameters at real objects of project alpha (tests/api/world.py), so
that detail operations answer 200s and role refusals, not only 404s; the other half keep the generated
values, to fuzz path parsing too. The world is built once for the module; each test runs in a savepoint inside
it (the `db` fixture), rolled back, and no on-commit callback runs, so nothing reaches a cluster or the broker."""

import os
from contextlib import contextmanager

import pytest
import schemathesis
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.specs.openapi.references import ConvertingResolver
from schemathesis.specs.openapi.schemas import BaseOpenAPISchema, in_scopes

from studio.iam.auth import issue_token
from tests.api.world import path_values

CHECKS = (not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance)
# Few, so that ~100 operations x 2 callers take about a minute in CI; SCHEMA_FUZZ_EXAMPLES=50 digs deeper.
# Operations that read the cluster as they answer (alpha's cluster, 127.0.0.1:1, is down in these tests).
LIVE_FROM_THE_CLUSTER = {"/api/v1/clusters/{clusterUuid}/nodes", "/api/v1/nodes", "/api/v1/nodes/count",
                         "/api/v1/nodes/telemetry",
                         "/api/v1/workloads/{workloadId}/pods/{podId}/logs", "/api/v1/storage-classes",
                         "/api/v2/storage-classes", "/v1/k8s/clusters/{uuid}/storage-classes"}
# Operations that ask an outside service as they answer: Slack's API, which nothing serves here (tests/settings.py),
# and alpha's registry (port 9 of loopback: tests/api/world.py).
ASK_OUTSIDE = {"/api/v1/notification-channels/slack/create-app", "/api/v1/asset/registries/{AssetId}/repositories",
               "/api/v1/asset/registries/{AssetId}/repositories/tags"}
EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", "8"))
# The single sign-on grants ask the world's identity provider, which is down (port 9 of loopback): their
# documented 503 saying so, and no other server error.
ASK_THE_PROVIDER = {"/api/v1/token", "/api/v2/token"}


def no_server_error_but_the_provider_down(ctx, response, case):
    if response.status_code == 503 and "identity provider" in response.text:
        return None
    return not_a_server_error(ctx, response, case)

schema = schemathesis.from_wsgi("/api/schema/?format=json", get_wsgi_application())
# Updating the identity provider reads the discovery document at the URL of the body (tests/iam/test_idps_api.py
# covers it against Dex): fuzzed, that would be a request to whatever host the fuzzer writes.
FUZZED = schema.exclude(operation_id="update_idp")


@pytest.fixture(autouse=True, scope="module")
def _one_reference_resolver():
    """Every response is checked with one reference resolver, not a new one each time: a new resolver walks the whole
    document once, looking for `$id`s it does not hold, about 0.1 s a response and most of this module's time. The
    resolver copies each schema it hands out, so reusing it changes no check."""
    resolver = ConvertingResolver(schema.location or "", schema.raw_schema, nullable_name=schema.nullable_name,
                                  is_response_schema=True)

    @contextmanager
    def validating_response(openapi, scopes):
        assert openapi.raw_schema is schema.raw_schema
        with in_scopes(resolver, scopes):
            yield resolver

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(BaseOpenAPISchema, "_validating_response", validating_response)
        yield


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    # Django's WSGI handler closes the database connection after each request, which would end the test's
    # transaction; Django's own test client disconnects this handler for the same reason.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.fixture
def world(world_of_the_module, db):  # built once for the module (tests/api/conftest.py)
    return world_of_the_module


@pytest.fixture(params=["member", "platform_admin"])
def caller(request, world):
    user = getattr(world.org.users, request.param)
    return {"Authorization": "Bearer " + issue_token(user=user)["accessToken"]}


@FUZZED.parametrize()
@FUZZED.given(data=st.data())
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          # Generated cases only: the documented examples (the seeds' bodies) run in test_documented_example,
          # since schemathesis cannot mix them with @schema.given.
          phases=[Phase.generate, Phase.target, Phase.shrink],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.filter_too_much, HealthCheck.data_too_large])
def test_operation(case, data, world, caller):
    if case.path_parameters and data.draw(st.booleans(), label="real objects"):
        real = path_values(world, case.operation.path)
        case.path_parameters = {name: real.get(name, value) for name, value in case.path_parameters.items()}
    if case.operation.path.startswith("/api/v1/catalog") and data.draw(st.booleans(), label="alpha's catalog"):
        case.query = {**(case.query or {}), "projectId": world.org.a.pk}
    checks = CHECKS
    if case.operation.path in LIVE_FROM_THE_CLUSTER | ASK_OUTSIDE:  # unreachable here: a documented 503
        checks = tuple(check for check in CHECKS if check is not not_a_server_error)
    elif case.operation.path in ASK_THE_PROVIDER:
        checks = tuple(no_server_error_but_the_provider_down if check is not_a_server_error else check
                       for check in CHECKS)
    case.call_and_validate(headers=caller, checks=checks)


@schema.include(path_regex=r"^/api/v1/workloads/(trainings|workspaces|inferences)$", method="POST").parametrize()
@settings(phases=[Phase.explicit], deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_documented_example(case, world, caller):
    """The document's examples (the seeds' create bodies, on the three create operations) sent as written:
    answered as documented."""
    case.call_and_validate(headers=caller, checks=CHECKS)
