"""API shapes of the organisation, in the camelCase of the Run:ai API."""

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio import cluster_access
from studio.models import AuditEvent, Cluster, Department, Level, Project, is_platform_admin
from studio.names import NAME_PATTERN, NAME_RULE


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 instead of silently ignored — together with every
    other problem of the body (the contract lists them all at once)."""

    def to_internal_value(self, data):
        unknown = {}
        if isinstance(data, dict):
            known = {name for name, f in self.fields.items() if not f.read_only}
            unknown = {name: ["Unknown field."] for name in sorted(set(data) - known)}
        try:
            values = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            if unknown and isinstance(exc.detail, dict):
                raise serializers.ValidationError({**unknown, **exc.detail}) from exc
            raise
        if unknown:
            raise serializers.ValidationError(unknown)
        return values


class NameField(serializers.RegexField):
    def __init__(self, **kwargs):
        super().__init__(NAME_PATTERN, max_length=63, error_messages={"invalid": NAME_RULE}, **kwargs)


class ClusterSerializer(StrictSerializer):
    clusterId = serializers.UUIDField(source="id", read_only=True)
    name = NameField()
    apiServerUrl = serializers.URLField(source="api_server_url", required=False, allow_blank=True)
    token = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=True)
    kubeconfig = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=False)
    caCert = serializers.CharField(source="ca_cert", write_only=True, required=False, allow_blank=True)
    verifyTls = serializers.BooleanField(source="verify_tls", required=False)
    prometheusUrl = serializers.URLField(source="prometheus_url", required=False, allow_blank=True)
    status = serializers.CharField(read_only=True)
    statusMessage = serializers.CharField(source="status_message", read_only=True)
    lastSeenAt = serializers.DateTimeField(source="last_seen_at", read_only=True, allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    def to_representation(self, cluster):
        from studio.cluster_api import displayed_cluster

        # Run:ai's DisplayedCluster (uuid, tenantId, status object…) with our own fields beside it.
        return {**super().to_representation(cluster), **displayed_cluster(cluster)}

    def validate(self, attrs):
        url = attrs.get("api_server_url", getattr(self.instance, "api_server_url", ""))
        kubeconfig = attrs.get("kubeconfig", getattr(self.instance, "kubeconfig", ""))
        if not url and not kubeconfig:
            raise serializers.ValidationError({"apiServerUrl": ["Give the API server URL or a kubeconfig."]})
        if attrs.get("kubeconfig"):
            import yaml

            try:
                parsed = yaml.safe_load(attrs["kubeconfig"])
            except yaml.YAMLError:
                parsed = None
            if not isinstance(parsed, dict) or "clusters" not in parsed:
                raise serializers.ValidationError({"kubeconfig": ["Not a kubeconfig (YAML with `clusters`)."]})
            _refuse(cluster_access.check_kubeconfig, parsed)
        for field, source in (("apiServerUrl", "api_server_url"), ("prometheusUrl", "prometheus_url")):
            if attrs.get(source):
                _refuse(cluster_access.check_url, field, attrs[source])
        return attrs


def _refuse(check, *args) -> None:
    """A cluster_access refusal as a 400 naming the field."""
    try:
        check(*args)
    except cluster_access.AccessRefused as exc:
        raise serializers.ValidationError({exc.field: [exc.message]}) from None


class DepartmentSerializer(StrictSerializer):
    id = serializers.IntegerField(read_only=True)
    name = NameField()
    description = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)


class GpuResourcesSerializer(StrictSerializer):
    deserved = serializers.DecimalField(max_digits=10, decimal_places=2, min_value=0, coerce_to_string=False)
    limit = serializers.DecimalField(
        max_digits=10, decimal_places=2, min_value=0, allow_null=True, required=False, coerce_to_string=False
    )


class ResourcesSerializer(StrictSerializer):
    gpu = GpuResourcesSerializer()


@extend_schema_field({"oneOf": [{"type": "object", "description": "{\"gpu\": {\"deserved\", \"limit\"}}"},
                                 {"type": "array", "items": {"type": "object"}, "description": "Run:ai Resources"}]})
class ResourcesField(serializers.Field):
    """CONTRACT §2's `{"gpu": {"deserved", "limit"}}`, or Run:ai's per-node-pool `Resources` array (checked
    against the cluster's pools in ProjectSerializer.validate, studio.quotas)."""

    def to_internal_value(self, data):
        if isinstance(data, list):
            return data
        serializer = ResourcesSerializer(data=data)
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def to_representation(self, value):
        return value


class SchedulingRulesSerializer(StrictSerializer):
    """Run:ai's SchedulingRules of a project: limits in seconds (null: none), enforced by the reclaim round."""

    interactiveJobTimeLimitSeconds = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    interactiveJobMaxIdleDurationSeconds = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    interactiveJobPreemptIdleDurationSeconds = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    trainingJobMaxIdleDurationSeconds = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    trainingJobTimeLimitSeconds = serializers.IntegerField(min_value=1, required=False, allow_null=True)


class ProjectSerializer(StrictSerializer):
    id = serializers.IntegerField(read_only=True)
    name = NameField()
    departmentId = serializers.PrimaryKeyRelatedField(source="department", queryset=Department.objects.all())
    clusterId = serializers.PrimaryKeyRelatedField(source="cluster", queryset=Cluster.objects.all())
    namespace = serializers.CharField(read_only=True)
    resources = ResourcesField(required=False)
    schedulingRules = SchedulingRulesSerializer(source="scheduling_rules", required=False)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    def to_representation(self, project):
        data = super().to_representation(project)
        data["departmentId"] = project.department_id
        data["clusterId"] = str(project.cluster_id)
        data["resources"] = {"gpu": {"deserved": float(project.gpu_deserved),
                                     "limit": None if project.gpu_limit is None else float(project.gpu_limit)}}
        data["schedulingRules"] = {key: value for key, value in (project.scheduling_rules or {}).items()
                                   if value is not None}
        return data

    def validate(self, attrs):
        if isinstance(attrs.get("resources"), list):  # Run:ai's per-pool quotas: pools of the project's cluster
            from studio.models import NodePool
            from studio.quotas import resources_from

            cluster = attrs.get("cluster") or getattr(self.instance, "cluster", None)
            try:
                attrs["resources"] = resources_from(attrs["resources"], list(NodePool.objects.filter(cluster=cluster)))
            except DjangoValidationError as exc:
                raise serializers.ValidationError(exc.message_dict) from None
        return attrs

    def service_fields(self) -> dict:
        """Validated data as the keyword arguments of the project services."""
        data = dict(self.validated_data)
        if isinstance(data.get("resources"), list):
            from studio.quotas import gpu_totals

            data["node_pool_resources"] = data.pop("resources")
            data["gpu_deserved"], data["gpu_limit"] = gpu_totals(data["node_pool_resources"])
        if "scheduling_rules" in data:  # null clears a limit; the rest stay as they were
            rules = {**(getattr(self.instance, "scheduling_rules", None) or {}), **data["scheduling_rules"]}
            data["scheduling_rules"] = {key: value for key, value in rules.items() if value is not None}
        gpu = data.pop("resources", {}).get("gpu")
        if gpu is not None:
            data["gpu_deserved"] = gpu["deserved"]
            if "limit" in gpu:
                data["gpu_limit"] = gpu["limit"]
        return data


class MemberSerializer(StrictSerializer):
    userId = serializers.IntegerField(source="user_id", required=False)
    username = serializers.CharField(source="user.username", required=False)
    email = serializers.EmailField(source="user.email", read_only=True)
    role = serializers.ChoiceField(choices=Level.choices)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    def to_representation(self, rule):
        # A member is the user's highest project-scope access rule (studio.selectors.project_members).
        return {"userId": rule.user_id, "username": rule.user.username, "email": rule.user.email,
                "role": rule.role.level, "roleId": rule.role_id, "roleName": rule.role.name,
                "accessRuleId": rule.pk, "createdAt": serializers.DateTimeField().to_representation(rule.created_at)}

    def validate(self, attrs):
        if self.instance is not None:
            return attrs
        users = get_user_model().objects
        if "user_id" in attrs:
            user = users.filter(pk=attrs["user_id"]).first()
            field = "userId"
        elif attrs.get("user", {}).get("username"):
            user = users.filter(username=attrs["user"]["username"]).first()
            field = "username"
        else:
            raise serializers.ValidationError({"userId": ["Give userId or username."]})
        if user is None:
            raise serializers.ValidationError({field: ["No such user."]})
        return {"user": user, "role": attrs["role"]}


class MeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.EmailField()
    isPlatformAdmin = serializers.SerializerMethodField()
    memberships = serializers.SerializerMethodField()

    def get_isPlatformAdmin(self, user) -> bool:
        return is_platform_admin(user)

    def get_memberships(self, user) -> list[dict]:
        # The projects the user's access rules cover (its own, its department's, tenant-wide), with its level.
        from studio.permissions import project_role

        projects = Project.objects.visible_to(user).order_by("name").only("id", "name")
        return [{"projectId": p.pk, "projectName": p.name, "role": project_role(user, p)} for p in projects]


class AccessKeySerializer(StrictSerializer):
    id = serializers.UUIDField(read_only=True)
    name = serializers.CharField(max_length=100)
    clientId = serializers.CharField(source="client_id", read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", read_only=True, allow_null=True)


class TokenRequestSerializer(StrictSerializer):
    """`POST /api/v1/token` with every spelling Run:ai's clients send: the spec's `appID`/`appSecret` and
    `clientID`/`clientSecret`, runapy's `AppId`/`AppSecret` (its `_make_token_request`), and our `clientId`.
    An app token is an access key: its client id and secret. `validated_data` holds `grantType` plus either
    `username`/`password` or `clientId`/`clientSecret`, whatever the spelling."""

    SPELLINGS = {  # canonical field -> the names a client may use for it, in order of preference
        "clientId": ("clientId", "clientID", "appID", "AppId"),
        "clientSecret": ("clientSecret", "appSecret", "AppSecret"),
    }
    GRANT_FIELDS = {
        "password": ("username", "password"),
        "client_credentials": ("clientId", "clientSecret"),
        "app_token": ("clientId", "clientSecret"),
    }

    grantType = serializers.ChoiceField(choices=["password", "client_credentials", "app_token"])
    username = serializers.CharField(required=False)
    password = serializers.CharField(required=False, trim_whitespace=False)
    clientId = serializers.CharField(required=False)
    clientID = serializers.CharField(required=False)
    appID = serializers.CharField(required=False)
    AppId = serializers.CharField(required=False)
    clientSecret = serializers.CharField(required=False, trim_whitespace=False)
    appSecret = serializers.CharField(required=False, trim_whitespace=False)
    AppSecret = serializers.CharField(required=False, trim_whitespace=False)

    def validate(self, attrs):
        grant = attrs["grantType"]
        values = {"grantType": grant, "username": attrs.get("username"), "password": attrs.get("password")}
        for canonical, names in self.SPELLINGS.items():
            values[canonical] = next((attrs[n] for n in names if attrs.get(n)), None)
        missing = {}
        for name in self.GRANT_FIELDS[grant]:
            if not values[name]:
                spellings = self.SPELLINGS.get(name, (name,))
                if grant == "app_token":  # named as the spec and runapy name them for this grant
                    spellings = [n for n in spellings if n.lower().startswith("app")]
                missing[spellings[0]] = [f"This field is required for grantType {grant} (as {' or '.join(spellings)})."]
        if missing:
            raise serializers.ValidationError(missing)
        return {key: value for key, value in values.items() if value is not None}


class TokenResponseSerializer(serializers.Serializer):
    accessToken = serializers.CharField()
    tokenType = serializers.CharField()
    expiresIn = serializers.IntegerField()


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_name")
    objectType = serializers.CharField(source="object_type")
    objectId = serializers.CharField(source="object_id")
    objectRepr = serializers.CharField(source="object_repr")
    requestId = serializers.CharField(source="request_id")

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "actor", "action", "objectType", "objectId", "objectRepr", "changes", "requestId"]
