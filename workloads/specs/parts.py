"""The objects a spec is made of: probes, environment, scheduling, ports, compute, storage, security, serving."""

from decimal import Decimal

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from studio.clusters.quantities import parse_quantity_strict
from workloads.specs.fields import (
    Boolean,
    Choice,
    Integer,
    Number,
    Port,
    Quantity,
    StrictSerializer,
    Text,
    texts,
)
from workloads.specs.rules import (
    ABSOLUTE,
    CAPABILITIES,
    CONFIG_KEY,
    DNS_SUBDOMAIN,
    EMPTY_DIR_MEDIUM,
    ENV_NAME,
    ENV_SECRET_NAME,
    EXTENDED_RESOURCE,
    FILE_MODE,
    FREE_ANNOTATION,
    FREE_LABEL,
    GROUPS,
    LABEL_VALUE,
    METRIC_NAME,
    MIG_PROFILES,
    NO_SPACES,
    NOT_NODE_POOL,
    QUALIFIED,
    SECRET_NAME,
    UUID,
)


class HttpGet(StrictSerializer):
    path = Text()
    port = Port()
    # Run:ai's schemas make both optional (Kubernetes' defaults: the pod's IP, HTTP), as an environment asset's
    # probe gives them; the manifests leave an absent one to Kubernetes.
    host = Text(required=False)
    scheme = Choice(["HTTP", "HTTPS"], required=False)


class ProbeHandler(StrictSerializer):
    httpGet = HttpGet()


class Probe(StrictSerializer):
    initialDelaySeconds = Integer(required=False, min_value=0)
    periodSeconds = Integer(required=False, min_value=1)
    timeoutSeconds = Integer(required=False, min_value=1)
    successThreshold = Integer(required=False, min_value=1)
    failureThreshold = Integer(required=False, min_value=1)
    handler = ProbeHandler()


class Probes(StrictSerializer):
    readiness = Probe(required=False)


class PodAffinity(StrictSerializer):
    type = Choice(["Required", "Preferred"], required=False)
    key = Text(required=False, validators=[QUALIFIED])


class SecretRef(StrictSerializer):
    # The seed's secret name "postgress_secret" is no DNS name, yet it is a valid request: '_' is let through.
    name = Text(validators=[ENV_SECRET_NAME])
    key = Text(validators=[CONFIG_KEY])


class ConfigMapRef(StrictSerializer):
    name = Text(validators=[DNS_SUBDOMAIN])
    key = Text(validators=[CONFIG_KEY])


class PodFieldRef(StrictSerializer):
    path = Text()  # a pod field such as metadata.name or status.podIP (Kubernetes' fieldRef.fieldPath)


class EnvironmentVariable(StrictSerializer):
    # A value and a secret may come together (the example bodies send both): both are kept and the secret wins later.
    # `userCredential` names a secret holding the user's credential (Run:ai keeps those as secrets too).
    name = Text(validators=[ENV_NAME])
    value = Text(required=False, allow_blank=True)
    secret = SecretRef(required=False)
    configMap = ConfigMapRef(required=False)
    podFieldRef = PodFieldRef(required=False)
    userCredential = SecretRef(required=False)
    description = Text(required=False, allow_blank=True)
    exclude = Boolean(required=False)


class Annotation(StrictSerializer):
    name = Text(validators=[QUALIFIED, FREE_ANNOTATION])
    value = Text(required=False, allow_blank=True)
    exclude = Boolean(required=False)


class Label(Annotation):
    name = Text(validators=[QUALIFIED, FREE_LABEL])
    value = Text(required=False, allow_blank=True, validators=[LABEL_VALUE])


class Toleration(StrictSerializer):
    name = Text(required=False)
    operator = Choice(["Equal", "Exists"], required=False)
    key = Text(required=False, validators=[QUALIFIED])
    value = Text(required=False, allow_blank=True, validators=[LABEL_VALUE])
    effect = Choice(["NoSchedule", "PreferNoSchedule", "NoExecute", "Any"], required=False)
    # `seconds` is accepted with any effect (the seed sends it with NoSchedule); manifests use it for NoExecute.
    seconds = Integer(required=False, min_value=0)
    exclude = Boolean(required=False)

    def cross_field_errors(self, values):
        problems = {}
        exists = values.get("operator") == "Exists"
        if exists and values.get("value"):
            problems["value"] = "Must be empty when operator is Exists."
        if exists and not values.get("key"):
            # Kubernetes reads it as "tolerate every taint": the control plane's, and those that keep a pool's
            # nodes to the projects with quota there.
            problems["key"] = "Is required: a toleration without a key tolerates every taint of every node."
        if not exists and not values.get("key") and "operator" in values:
            problems["key"] = "Is required when operator is Equal."
        return problems


class ServicePort(StrictSerializer):
    container = Port()
    serviceType = Choice(["LoadBalancer", "NodePort", "ClusterIP", "ExternalName"], required=False)
    external = Port(required=False)
    toolType = Text(required=False)
    toolName = Text(required=False)
    name = Text(required=False)
    exclude = Boolean(required=False)


class ExposedUrl(StrictSerializer):
    container = Port()
    url = Text(required=False, validators=[NO_SPACES])  # the Ingress host and path (manifests.objects.ingress)
    authorizationType = Choice(["authenticatedUsers", "authorizedUsers", "authorizedGroups"], required=False)
    authorizedUsers = texts(required=False)
    authorizedGroups = texts(required=False)
    toolType = Text(required=False)
    toolName = Text(required=False)
    name = Text(required=False)
    exclude = Boolean(required=False)


class RelatedUrl(StrictSerializer):
    url = Text(validators=[NO_SPACES])
    type = Text(required=False)
    name = Text(required=False)
    exclude = Boolean(required=False)


class ImagePullSecret(StrictSerializer):
    name = Text(validators=[DNS_SUBDOMAIN])
    userCredential = Boolean(required=False)
    exclude = Boolean(required=False)


class NodeSelectorRequirement(StrictSerializer):
    key = Text(validators=[QUALIFIED, NOT_NODE_POOL])
    operator = Choice(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"])
    values = texts(required=False)

    def cross_field_errors(self, values):
        operator, given = values.get("operator"), values.get("values") or []
        if operator in ("In", "NotIn") and not given:
            return {"values": f"Must hold at least one value with operator {operator}."}
        if operator in ("Exists", "DoesNotExist") and given:
            return {"values": f"Must be empty with operator {operator}."}
        if operator in ("Gt", "Lt") and (len(given) != 1 or not given[0].lstrip("-").isdigit()):
            return {"values": f"Must be one integer with operator {operator}."}
        return {}


class NodeSelectorTerm(StrictSerializer):
    matchExpressions = NodeSelectorRequirement(many=True)


class NodeAffinityRequired(StrictSerializer):
    nodeSelectorTerms = NodeSelectorTerm(many=True)


class ExtendedResource(StrictSerializer):
    resource = Text(validators=[QUALIFIED, EXTENDED_RESOURCE])
    quantity = Quantity(numbers=True)
    exclude = Boolean(required=False)


class Compute(StrictSerializer):
    """GPU fields of every request type may come together (the seeds send them all with type portion): each is
    checked for form, but only the ones the request type uses take part in the cross-field rules."""

    gpuDevicesRequest = Integer(required=False, min_value=0)
    gpuRequestType = Choice(["portion", "memory", "migProfile"], required=False)
    gpuPortionRequest = Number(required=False)
    gpuPortionLimit = Number(required=False)
    gpuMemoryRequest = Quantity(required=False)
    gpuMemoryLimit = Quantity(required=False)
    migProfile = Choice(MIG_PROFILES, required=False)
    cpuCoreRequest = Number(required=False)
    cpuCoreLimit = Number(required=False)
    cpuMemoryRequest = Quantity(required=False)
    cpuMemoryLimit = Quantity(required=False)
    largeShmRequest = Boolean(required=False)
    extendedResources = ExtendedResource(many=True, required=False)

    TYPE_FIELDS = {"portion": "gpuPortionRequest", "memory": "gpuMemoryRequest", "migProfile": "migProfile"}

    def validate_gpuPortionRequest(self, value):
        return _portion(value)

    def validate_gpuPortionLimit(self, value):
        return _portion(value)

    def validate_cpuCoreRequest(self, value):
        return _positive(value)

    def validate_cpuCoreLimit(self, value):
        return _positive(value)

    def cross_field_errors(self, values):
        problems = {}
        kind = values.get("gpuRequestType")
        given = [k for k, field in self.TYPE_FIELDS.items() if field in values]
        if kind is None and len(given) > 1:
            problems["gpuRequestType"] = (
                "Is required when more than one of gpuPortionRequest, gpuMemoryRequest and migProfile is given."
            )
        kind = kind or (given[0] if len(given) == 1 else None)
        devices = values.get("gpuDevicesRequest")
        if kind is not None:
            if kind not in given:
                problems[self.TYPE_FIELDS[kind]] = f"Is required when gpuRequestType is {kind}."
            if devices == 0:
                problems["gpuDevicesRequest"] = "Must be at least 1 when a GPU request type is given."
            elif devices is not None and devices > 1 and kind != "portion":
                problems["gpuRequestType"] = "Must be portion when more than one GPU device is requested."
        if kind == "portion":
            _at_least(problems, values, "gpuPortionLimit", "gpuPortionRequest", Decimal)
        if kind == "memory":
            _at_least(problems, values, "gpuMemoryLimit", "gpuMemoryRequest", parse_quantity_strict)
            if "gpuMemoryRequest" in values and parse_quantity_strict(values["gpuMemoryRequest"]) == 0:
                problems["gpuMemoryRequest"] = "Must be more than 0."
        _at_least(problems, values, "cpuCoreLimit", "cpuCoreRequest", Decimal)
        _at_least(problems, values, "cpuMemoryLimit", "cpuMemoryRequest", parse_quantity_strict)
        return problems

    def validate(self, attrs):
        # Run:ai infers the request type from the one fractional field given, and a fraction is of one device.
        given = [k for k, field in self.TYPE_FIELDS.items() if field in attrs]
        if "gpuRequestType" not in attrs and len(given) == 1:
            attrs["gpuRequestType"] = given[0]
        if "gpuRequestType" in attrs and "gpuDevicesRequest" not in attrs:
            attrs["gpuDevicesRequest"] = 1
        return attrs


# A GPU is shared in hundredths (Run:ai asks for a portion as a percentage of a GPU); a portion is charged at least
# one (workloads.specs.gpu_request_of), so 100,000 pods of 1e-9 GPU are 1,000 GPUs to the quota, not 0.0001.
PORTION_GRANULARITY = Decimal("0.01")


def _portion(value):
    if not PORTION_GRANULARITY <= Decimal(str(value)) <= 1:
        raise ValidationError(f"Must be at least {PORTION_GRANULARITY} (a GPU is shared in hundredths) and at most 1.")
    return value


def _positive(value):
    if value <= 0:
        raise ValidationError("Must be more than 0.")
    return value


def _at_least(problems, values, limit, request, convert):
    if limit in values and request in values:
        if convert(str(values[limit])) < convert(str(values[request])):
            problems[limit] = f"Must be at least {request} ({values[request]})."


# Storage. Mount paths must be absolute wherever the example bodies' are (workloads/api/seed_examples.py); configMapVolume and secretVolume
# send "string" as mountPath, so those are only non-empty.


class DataVolume(StrictSerializer):
    id = Text(validators=[UUID])
    mountPath = Text(validators=[ABSOLUTE])
    exclude = Boolean(required=False)


class AccessModes(StrictSerializer):
    readWriteOnce = Boolean(required=False)
    readOnlyMany = Boolean(required=False)
    readWriteMany = Boolean(required=False)


class KeyValue(StrictSerializer):
    key = Text()
    value = Text(allow_blank=True)


class ClaimInfo(StrictSerializer):
    size = Quantity(required=False)
    storageClass = Text(required=False)
    accessModes = AccessModes(required=False)
    volumeMode = Choice(["Filesystem", "Block"], required=False)
    # Run:ai's extra attributes of its storage class form; kept with the workload (no Kubernetes field).
    addedAttrValues = KeyValue(many=True, required=False)


class Pvc(StrictSerializer):
    name = Text(required=False)
    existingPvc = Boolean(required=False)
    claimName = Text(required=False, validators=[DNS_SUBDOMAIN])
    path = Text(validators=[ABSOLUTE])
    readOnly = Boolean(required=False)
    ephemeral = Boolean(required=False)
    claimInfo = ClaimInfo(required=False)
    dataSharing = Boolean(required=False)  # a claim we create is ReadWriteMany, for other workloads to mount
    exclude = Boolean(required=False)

    def cross_field_errors(self, values):
        if values.get("existingPvc"):
            return {} if "claimName" in values else {"claimName": "Is required when existingPvc is true."}
        if "claimInfo" not in values:
            return {"claimInfo": "Is required to create a new claim (existingPvc is false)."}
        if "size" not in values["claimInfo"]:
            return {"claimInfo": {"size": "Is required to create a new claim (existingPvc is false)."}}
        return {}


class GitSecretRef(StrictSerializer):
    name = Text(validators=[SECRET_NAME])
    authenticationMethod = Choice(["password", "ssh-key"], required=False)
    secretKeyOfUser = Text(required=False, validators=[CONFIG_KEY])
    secretKeyOfPassword = Text(required=False, validators=[CONFIG_KEY])


class Git(StrictSerializer):
    name = Text(required=False)
    # Run:ai's git fields include the repository URL, which the seed's example leaves out.
    repository = Text(required=False, validators=[NO_SPACES])
    branch = Text(required=False, validators=[NO_SPACES])
    revision = Text(required=False, validators=[NO_SPACES])
    path = Text(validators=[ABSOLUTE])
    passwordSecret = Text(required=False, validators=[SECRET_NAME])
    secretKeyOfUser = Text(required=False, validators=[CONFIG_KEY])
    secretKeyOfPassword = Text(required=False, validators=[CONFIG_KEY])
    secretRef = GitSecretRef(required=False)  # latest's spelling of passwordSecret + secretKeyOf*
    exclude = Boolean(required=False)


class ConfigMapVolume(StrictSerializer):
    name = Text(required=False)
    configMap = Text()
    mountPath = Text()
    subPath = Text(required=False, validators=[NO_SPACES])
    defaultMode = Text(required=False, validators=[FILE_MODE])
    exclude = Boolean(required=False)


class SecretVolume(StrictSerializer):
    name = Text(required=False)
    secret = Text(validators=[SECRET_NAME])
    mountPath = Text()
    defaultMode = Text(required=False, validators=[FILE_MODE])
    exclude = Boolean(required=False)


class EmptyDirVolume(StrictSerializer):
    name = Text(required=False)
    path = Text(validators=[ABSOLUTE])
    # 2.18: "" or Memory; latest: any text. Both, as far as Kubernetes takes them: HugePages, HugePages-<size>.
    medium = Text(required=False, allow_blank=True, validators=[EMPTY_DIR_MEDIUM])
    sizeLimit = Quantity(required=False)
    exclude = Boolean(required=False)


class HostPath(StrictSerializer):
    name = Text(required=False)
    path = Text(validators=[ABSOLUTE])
    readOnly = Boolean(required=False)
    mountPath = Text(validators=[ABSOLUTE])
    mountPropagation = Choice(["None", "HostToContainer", "Bidirectional"], required=False)
    exclude = Boolean(required=False)


class Nfs(StrictSerializer):
    name = Text(required=False)
    path = Text(validators=[ABSOLUTE])
    readOnly = Boolean(required=False)
    server = Text(validators=[NO_SPACES])
    mountPath = Text(validators=[ABSOLUTE])
    exclude = Boolean(required=False)


class S3(StrictSerializer):
    name = Text(required=False)
    bucket = Text(validators=[NO_SPACES])
    url = Text(required=False, validators=[NO_SPACES])  # Run:ai's endpoint; the seed's example leaves it out
    path = Text(validators=[ABSOLUTE])
    accessKeySecret = Text(required=False, validators=[SECRET_NAME])
    secretKeyOfAccessKeyId = Text(required=False, validators=[CONFIG_KEY])
    secretKeyOfSecretKey = Text(required=False, validators=[CONFIG_KEY])
    exclude = Boolean(required=False)


class InferenceStorage(StrictSerializer):  # Run:ai offers no s3 to inferences (latest adds hostPath and nfs)
    dataVolume = DataVolume(many=True, required=False)
    pvc = Pvc(many=True, required=False)
    git = Git(many=True, required=False)
    configMapVolume = ConfigMapVolume(many=True, required=False)
    secretVolume = SecretVolume(many=True, required=False)
    emptyDirVolume = EmptyDirVolume(many=True, required=False)
    hostPath = HostPath(many=True, required=False)
    nfs = Nfs(many=True, required=False)


class Storage(InferenceStorage):
    s3 = S3(many=True, required=False)


class InferenceSecurity(StrictSerializer):
    uidGidSource = Choice(["fromTheImage", "fromIdpToken", "custom"], required=False)
    capabilities = serializers.ListField(child=Choice(CAPABILITIES), required=False)
    seccompProfileType = Choice(["RuntimeDefault", "Unconfined", "Localhost"], required=False)
    runAsNonRoot = Boolean(required=False)
    readOnlyRootFilesystem = Boolean(required=False)
    runAsUid = Integer(required=False, min_value=0)
    runAsGid = Integer(required=False, min_value=0)
    supplementalGroups = Text(required=False, allow_blank=True, validators=[GROUPS])
    # PaaS Studio's: mount the namespace's service-account token in the pods (Kubernetes' default; refused by the
    # secure default policy, so pods get none unless a platform admin allows it for the scope).
    automountServiceAccountToken = Boolean(required=False)


class Security(InferenceSecurity):
    allowPrivilegeEscalation = Boolean(required=False)
    hostIpc = Boolean(required=False)
    hostNetwork = Boolean(required=False)


class ServingPort(StrictSerializer):
    container = Port()
    protocol = Choice(["http", "grpc"], required=False)
    # Who may call the endpoint: written for the authenticating proxy in front, as for exposed URLs.
    authorizationType = Choice(["public", "authenticatedUsers", "authorizedUsers", "authorizedGroups",
                                "authorizedUsersOrGroups"], required=False)
    authorizedUsers = texts(required=False)
    authorizedGroups = texts(required=False)
    clusterLocalAccessOnly = Boolean(required=False)  # Knative's cluster-local visibility


class ServingConfiguration(StrictSerializer):
    initializationTimeoutSeconds = Integer(required=False, min_value=1)  # Knative's progress deadline
    requestTimeoutSeconds = Integer(required=False, min_value=1)  # Knative's timeoutSeconds


class Autoscaling(StrictSerializer):
    # Absent bounds mean a fixed size of one replica: no scale to zero unless asked for.
    minReplicas = Integer(required=False, min_value=0, default=1)
    maxReplicas = Integer(required=False, min_value=1)
    # 2.18: throughput, concurrency or latency; latest: any Prometheus metric name (a custom metric).
    metric = Text(required=False, validators=[METRIC_NAME])
    metricThreshold = Number(required=False, min_value=0)
    scaleToZeroRetentionSeconds = Integer(required=False, min_value=0, max_value=3600)
    # Knative's autoscaling annotations (latest): initial-scale, activation-scale, target-utilization,
    # scale-down-delay, and the revision's containerConcurrency.
    initialReplicas = Integer(required=False, min_value=0)
    activationReplicas = Integer(required=False, min_value=1)
    metricThresholdPercentage = Number(required=False, min_value=1, max_value=100)
    scaleDownDelaySeconds = Integer(required=False, min_value=0, max_value=3600)
    concurrencyHardLimit = Integer(required=False, min_value=0)
    initializationTimeoutSeconds = Integer(required=False, min_value=1)  # deprecated: servingConfiguration's

    def cross_field_errors(self, values):
        problems = {}
        low, high = values.get("minReplicas"), values.get("maxReplicas")
        if low is not None and high is not None:
            if high < max(1, low):
                problems["maxReplicas"] = f"Must be at least minReplicas ({low}) and at least 1."
            elif low < high and "metric" not in values:
                problems["metric"] = "Is required when minReplicas is less than maxReplicas."
        if "metric" in values and "metricThreshold" not in values:
            problems["metricThreshold"] = "Is required when metric is given."
        most = high if high is not None else max(1, low or 0)  # validate() makes that maxReplicas' default
        for name in ("initialReplicas", "activationReplicas"):  # within the bound the policy holds maxReplicas to
            if values.get(name) is not None and values[name] > most:
                problems[name] = f"Must be at most maxReplicas ({most})."
        if "scaleToZeroRetentionSeconds" in values and low is not None and low != 0:
            problems["scaleToZeroRetentionSeconds"] = "Is allowed only when minReplicas is 0."
        return problems

    def validate(self, attrs):
        attrs.setdefault("maxReplicas", max(1, attrs["minReplicas"]))
        return attrs
