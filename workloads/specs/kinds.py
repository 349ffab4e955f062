"""The spec of each workload kind and the create body around it. Field sets follow the example bodies (workloads/api/seed_examples.py)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from workloads.specs.fields import Boolean, Choice, Integer, StrictSerializer, Text, texts
from workloads.specs.parts import (
    Annotation,
    Autoscaling,
    Compute,
    EnvironmentVariable,
    ExposedUrl,
    ImagePullSecret,
    InferenceSecurity,
    InferenceStorage,
    Label,
    NodeAffinityRequired,
    PodAffinity,
    Probes,
    RelatedUrl,
    Security,
    ServicePort,
    ServingConfiguration,
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
    """An inference's spec: seed 001's fields and Run:ai latest's; trainings and workspaces add theirs below."""

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
    servingConfiguration = ServingConfiguration(required=False)
    autoscaling = Autoscaling(required=False)
    # Run:ai latest's fields of every kind (workloads/manifests/ says what each becomes).
    priorityClass = Text(required=False, validators=[DNS_SUBDOMAIN])
    preemptibility = Choice(["preemptible", "non-preemptible"], required=False)
    category = Text(required=False, validators=[LABEL_VALUE])
    imagePullSecrets = ImagePullSecret(many=True, required=False)
    nodeAffinityRequired = NodeAffinityRequired(required=False)
    relatedUrls = RelatedUrl(many=True, required=False)


RESTART_POLICIES = ["Always", "Never", "OnFailure"]


class WorkspaceSpec(InferenceSpec):
    """Seed 003's training fields less completions and parallelism (CONTRACT §3)."""

    servingPort = None  # DRF's way to drop an inherited field
    servingConfiguration = None
    autoscaling = None
    tty = Boolean(required=False)
    stdin = Boolean(required=False)
    terminateAfterPreemption = Boolean(required=False)
    autoDeletionTimeAfterCompletionSeconds = Integer(required=False, min_value=0)
    storage = Storage(required=False)
    security = Security(required=False)
    terminationGracePeriodSeconds = Integer(required=False, min_value=0)
    # Run:ai latest's RestartPolicy (2.18 has none): Always, Never, OnFailure for every kind. A Deployment's pods
    # restart always (all Kubernetes allows it): Never and OnFailure are kept with the workload and answered.
    restartPolicy = Choice(RESTART_POLICIES, required=False)
    # Run:ai's spec gives workspaces a backoffLimit; a Deployment restarts its pod with Kubernetes' own
    # back-off and has no limit, so it is kept with the workload and answered, and changes nothing.
    backoffLimit = Integer(required=False, min_value=0)


class TrainingSpec(WorkspaceSpec):
    # Kubernetes' Job defaults, which Run:ai keeps: one pod to completion, six retries.
    completions = Integer(required=False, min_value=1, default=1)
    parallelism = Integer(required=False, min_value=1, default=1)
    backoffLimit = Integer(required=False, min_value=0, default=6)
    # A Job's pods run to completion: Kubernetes allows them Never and OnFailure only, so Always restarts the
    # failed container in place, as OnFailure does (workloads/manifests/objects.py).
    restartPolicy = Choice(RESTART_POLICIES, required=False)


SPECS = {"training": TrainingSpec, "workspace": WorkspaceSpec, "inference": InferenceSpec}


@extend_schema_field({"oneOf": [{"type": "string", "pattern": "^[0-9]+$"}, {"type": "integer", "minimum": 0}],
                      "example": "1"})
class ProjectId(serializers.Field):
    """Run:ai 2.18's examples (workloads/api/seed_examples.py) send 1; newer Run:ai APIs send "1". Both are taken
    and answered as a string."""

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
    # The template (latest's workload templates, or an asset template) whose assets and fields fill the spec under
    # the request's own fields (workloads/from_templates.py does it before this validation).
    templateId = Text(required=False, validators=[UUID])

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


# Named per kind for the OpenAPI document (/api/schema/ adds "Request": Run:ai's own schema names).
class TrainingCreation(WorkloadRequest):
    """Create a training (Run:ai TrainingCreationRequest): a Kubernetes Job."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, kind="training", **kwargs)


class WorkspaceCreation(WorkloadRequest):
    """Create a workspace (Run:ai WorkspaceCreationRequest): a Deployment of one pod."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, kind="workspace", **kwargs)


class InferenceCreation(WorkloadRequest):
    """Create an inference (Run:ai InferenceCreationRequest): a Knative Service, or a Deployment and HPA."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, kind="inference", **kwargs)


class InferenceUpdate(StrictSerializer):
    """Run:ai latest's inference update: the given top-level spec fields replace the current ones."""

    spec = InferenceSpec()


CREATION_REQUESTS = {"training": TrainingCreation, "workspace": WorkspaceCreation,
                     "inference": InferenceCreation}
