"""The spec of each workload kind and the create body around it. Field sets follow the seeds' examples."""

from rest_framework import serializers

from workloads.specs.fields import Boolean, Choice, Integer, StrictSerializer, Text, texts
from workloads.specs.parts import (
    Annotation,
    Autoscaling,
    Compute,
    EnvironmentVariable,
    ExposedUrl,
    InferenceSecurity,
    InferenceStorage,
    Label,
    PodAffinity,
    Probes,
    Security,
    ServicePort,
    ServingPort,
    Storage,
    Toleration,
)
from workloads.specs.rules import (
    ABSOLUTE,
    DNS_SUBDOMAIN,
    LABEL_VALUE,
    NAME,
    NAME_MAX,
    NO_SPACES,
    PREFIX_SUFFIX,
    UUID,
)


class InferenceSpec(StrictSerializer):
    """Exactly the fields of seed 001's example; trainings and workspaces add theirs below."""

    command = Text(required=False, allow_blank=True)
    args = Text(required=False, allow_blank=True)
    image = Text(validators=[NO_SPACES])
    imagePullPolicy = Choice(["Always", "IfNotPresent", "Never"], required=False)
    workingDir = Text(required=False, validators=[ABSOLUTE])
    createHomeDir = Boolean(required=False)
    probes = Probes(required=False)
    nodeType = Text(required=False, validators=[LABEL_VALUE])
    nodePools = texts(NAME, required=False)
    podAffinity = PodAffinity(required=False)
    environmentVariables = EnvironmentVariable(many=True, required=False)
    annotations = Annotation(many=True, required=False)
    labels = Label(many=True, required=False)
    tolerations = Toleration(many=True, required=False)
    ports = ServicePort(many=True, required=False)
    exposedUrls = ExposedUrl(many=True, required=False)
    compute = Compute(required=False)
    storage = InferenceStorage(required=False)
    security = InferenceSecurity(required=False)
    servingPort = ServingPort(required=False)
    autoscaling = Autoscaling(required=False)


class WorkspaceSpec(InferenceSpec):
    """Seed 003's training fields less completions, parallelism and backoffLimit (CONTRACT §3)."""

    servingPort = None  # DRF's way to drop an inherited field
    autoscaling = None
    tty = Boolean(required=False)
    stdin = Boolean(required=False)
    terminateAfterPreemption = Boolean(required=False)
    autoDeletionTimeAfterCompletionSeconds = Integer(required=False, min_value=0)
    priorityClass = Text(required=False, validators=[DNS_SUBDOMAIN])
    storage = Storage(required=False)
    security = Security(required=False)


class TrainingSpec(WorkspaceSpec):
    # Kubernetes' Job defaults, which Run:ai keeps: one pod to completion, six retries.
    completions = Integer(required=False, min_value=1, default=1)
    parallelism = Integer(required=False, min_value=1, default=1)
    backoffLimit = Integer(required=False, min_value=0, default=6)


SPECS = {"training": TrainingSpec, "workspace": WorkspaceSpec, "inference": InferenceSpec}


class ProjectId(serializers.Field):
    """The seeds send 1; newer Run:ai APIs send "1". Both are taken and answered as a string."""

    default_error_messages = {
        "invalid": "Must be a project id: a non-negative integer or a string of digits."
    }

    def to_internal_value(self, data):
        if isinstance(data, int) and not isinstance(data, bool) and data >= 0:
            return str(data)
        if isinstance(data, str) and data.isascii() and data.isdigit():
            return data
        self.fail("invalid")


class WorkloadRequest(StrictSerializer):
    name = Text(validators=[NAME])
    useGivenNameAsPrefix = Boolean(required=False, default=False)
    projectId = ProjectId()
    clusterId = Text(validators=[UUID])

    def __init__(self, *args, kind, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["spec"] = SPECS[kind]()

    def cross_field_errors(self, values):
        limit = NAME_MAX - PREFIX_SUFFIX
        if values.get("useGivenNameAsPrefix") and len(values.get("name", "")) > limit:
            return {
                "name": f"Must be at most {limit} characters with useGivenNameAsPrefix (a suffix is added)."
            }
        return {}
