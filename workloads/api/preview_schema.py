"""The `dryRun` query parameter of the create and launch calls, and the preview's answer, for the OpenAPI
schema (drf-spectacular) and for parsing."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

DRY_RUN_PARAMETER = OpenApiParameter(
    "dryRun", OpenApiTypes.BOOL, required=False,
    description="true: create nothing; answer 200 with the objects the launch would create, each with the "
                "cluster's own verdict (a server-side `dryRun=All` create), and the quota and policy decisions. "
                "A body invalid in shape is still a 400, a viewer still a 403. `verdict.allowed` is null where the "
                "cluster gave no verdict: reason `NamespaceNotFound` (the project's namespace is made by its first "
                "launch, and the server checks namespaced objects only in an existing one) or `ClusterUnavailable`. "
                "Secret values read as \"***\".")

# The 200 of Run:ai's create operations stays their schema (clients generated from it keep working); the
# preview's answer is the `Preview` component, the 200 of the catalog launch with dryRun=true.
PREVIEW_NOTE = ("With `?dryRun=true` nothing is created and the 200 answer is a `Preview` (components): the objects "
                "the submit would create, each with the cluster's own verdict, and the quota and policy decisions.")


def dry_run_requested(request) -> bool:
    raw = request.query_params.get("dryRun")
    if raw is None or raw.lower() in ("false", "0", ""):
        return False
    if raw.lower() in ("true", "1", "all"):
        return True
    raise ValidationError({"dryRun": ["Must be true or false."]})


class VerdictSerializer(serializers.Serializer):
    allowed = serializers.BooleanField(allow_null=True, help_text="null: not checked (see reason).")
    code = serializers.IntegerField(help_text="The HTTP status the cluster answered (201 when allowed; 0: none).")
    reason = serializers.CharField(allow_blank=True)
    message = serializers.CharField()


class PreviewObjectSerializer(serializers.Serializer):
    apiVersion = serializers.CharField()
    kind = serializers.CharField()
    name = serializers.CharField()
    namespace = serializers.CharField(allow_null=True)
    manifest = serializers.JSONField()
    verdict = VerdictSerializer()


class ForecastVictimSerializer(serializers.Serializer):
    project = serializers.CharField()
    workload = serializers.CharField()
    gpus = serializers.FloatField()


class ForecastSerializer(serializers.Serializer):
    """What KAI Scheduler would do with the workload now, from the numbers the quota pages show."""

    action = serializers.ChoiceField(choices=["start", "start-over-quota", "reclaim", "wait"])
    nodePool = serializers.CharField()
    gpus = serializers.FloatField()
    message = serializers.CharField()
    waitingFor = serializers.ChoiceField(choices=["ProjectLimit", "DepartmentLimit", "NonPreemptibleOverQuota",
                                                  "Capacity"], required=False)
    victims = ForecastVictimSerializer(many=True, required=False)
    behind = serializers.ListField(child=serializers.CharField(), required=False,
                                   help_text="The project's workloads waiting in the pool before it.")


class QuotaDecisionSerializer(serializers.Serializer):
    allowed = serializers.BooleanField()
    project = serializers.CharField()
    requested = serializers.FloatField(help_text="GPUs this workload asks for.")
    deserved = serializers.FloatField()
    limit = serializers.FloatField(allow_null=True)
    used = serializers.FloatField(help_text="GPUs the project requests now: its running and waiting workloads' "
                                            "(in the node pool it would be placed in, on a KAI cluster).")
    allocated = serializers.FloatField(help_text="GPUs of it that run now (studio.org.numbers: the number every page "
                                                 "shows), in the same pool.")
    message = serializers.CharField()
    nodePool = serializers.CharField(required=False, help_text="The node pool it would be placed in (KAI).")
    forecast = ForecastSerializer(required=False)


class ViolationSerializer(serializers.Serializer):
    field = serializers.CharField()
    rule = serializers.CharField()
    message = serializers.CharField()


class PolicyDecisionSerializer(serializers.Serializer):
    allowed = serializers.BooleanField()
    violations = ViolationSerializer(many=True)


class PreviewSerializer(serializers.Serializer):
    dryRun = serializers.BooleanField()
    name = serializers.CharField(help_text="The workload's name (generated where useGivenNameAsPrefix).")
    objects = PreviewObjectSerializer(many=True)
    quota = QuotaDecisionSerializer()
    policy = PolicyDecisionSerializer()
