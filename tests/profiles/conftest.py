"""A template version and a profile of it, made through the services (so every save-time rule ran), and a
third project for the sharing matrix."""

import copy

import pytest

from profiles import services
from studio.models import Level
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

SPEC_TEMPLATE = {
    "image": "{{ image }}",
    "command": "{{ command }}",
    "args": "--epochs {{ epochs }} --run {{ workload.name }}",
    "compute": {"gpuDevicesRequest": "{{ gpus }}", "cpuMemoryRequest": "{{ memory }}"},
    "environmentVariables": [{"name": "API_KEY", "value": "{{ api_key }}"}, {"name": "MODE", "value": "{{ mode }}"}],
    "labels": [{"name": "team", "value": "ml"}],
}
VARIABLES = [
    {"name": "image", "type": "string", "default": "python:3.11", "pattern": r"\S+"},
    {"name": "command", "type": "string", "required": True},
    {"name": "epochs", "type": "integer", "default": 3, "min": 1, "max": 100},
    {"name": "gpus", "type": "integer", "default": 0, "min": 0, "max": 2},
    {"name": "memory", "type": "quantity", "default": "1Gi"},
    {"name": "mode", "type": "enum", "options": ["fast", "slow"], "default": "fast"},
    {"name": "api_key", "type": "secret"},
]
OUTPUTS = [
    {"name": "url", "label": "URL", "expression": "{{ workload.url }}/ui"},
    {"name": "address", "label": "Address", "expression": "{{ workload.serviceAddress }}"},
    {"name": "epochs", "label": "Epochs", "expression": "{{ inputs.epochs }} epochs"},
    {"name": "key", "label": "API key", "expression": "{{ inputs.api_key }}", "sensitive": True},
]


def version_fields(**changes) -> dict:
    fields = {"kind": "training", "spec_template": copy.deepcopy(SPEC_TEMPLATE),
              "variables": copy.deepcopy(VARIABLES), "outputs": copy.deepcopy(OUTPUTS)}
    return {**fields, **changes}


@pytest.fixture
def template(org):
    return services.template_create(actor=org.users.platform_admin, name="trainer", description="Trains.")


@pytest.fixture
def version(org, template):
    return services.version_create(actor=org.users.platform_admin, template=template, version="1.0.0",
                                   state="active", **version_fields())


@pytest.fixture
def make_profile(org, version):
    def make(name="trainer-job", *, owner=None, sharing=None, **fields):
        fields.setdefault("inputs", [{"name": "image", "override": "not-allowed"},
                                     {"name": "mode", "override": "restricted", "allowedValues": ["fast", "slow"]}])
        fields.setdefault("template_version", version)
        fields.setdefault("service_type", "jobs")
        return services.profile_create(
            actor=org.users.platform_admin, name=name, owner_project=owner or org.a,
            sharing=sharing, **fields)

    return make


@pytest.fixture
def profile(make_profile):
    return make_profile(labels={"tier": "gold"}, annotations={"example.com/owner": "ml team"},
                        extra_config={"LOG_LEVEL": "debug"})


@pytest.fixture
def project_c(org):
    """A third project with its own member, `erin`."""
    c = ProjectFactory(name="gamma", department=org.department, cluster=org.cluster)
    MembershipFactory(user=UserFactory(username="erin"), project=c, role=Level.MEMBER)
    return c
