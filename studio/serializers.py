"""API shapes of the organisation, in the camelCase of the Run:ai API."""

from django.contrib.auth import get_user_model
from rest_framework import serializers

from studio.models import AuditEvent, Cluster, Department, Membership, is_platform_admin
from studio.names import NAME_PATTERN, NAME_RULE


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 instead of silently ignored."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - {name for name, f in self.fields.items() if not f.read_only})
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


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
        return attrs


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


class ProjectSerializer(StrictSerializer):
    id = serializers.IntegerField(read_only=True)
    name = NameField()
    departmentId = serializers.PrimaryKeyRelatedField(source="department", queryset=Department.objects.all())
    clusterId = serializers.PrimaryKeyRelatedField(source="cluster", queryset=Cluster.objects.all())
    namespace = serializers.CharField(read_only=True)
    resources = ResourcesSerializer(required=False)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    def to_representation(self, project):
        data = super().to_representation(project)
        data["departmentId"] = project.department_id
        data["clusterId"] = str(project.cluster_id)
        data["resources"] = {"gpu": {"deserved": float(project.gpu_deserved),
                                     "limit": None if project.gpu_limit is None else float(project.gpu_limit)}}
        return data

    def service_fields(self) -> dict:
        """Validated data as the keyword arguments of the project services."""
        data = dict(self.validated_data)
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
    role = serializers.ChoiceField(choices=Membership.Role.choices)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

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


class MembershipOfMeSerializer(serializers.Serializer):
    projectId = serializers.IntegerField(source="project_id")
    projectName = serializers.CharField(source="project.name")
    role = serializers.CharField()


class MeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.EmailField()
    isPlatformAdmin = serializers.SerializerMethodField()
    memberships = serializers.SerializerMethodField()

    def get_isPlatformAdmin(self, user) -> bool:
        return is_platform_admin(user)

    def get_memberships(self, user) -> list[dict]:
        rows = Membership.objects.filter(user=user).select_related("project").order_by("project__name")
        return MembershipOfMeSerializer(rows, many=True).data


class AccessKeySerializer(StrictSerializer):
    id = serializers.UUIDField(read_only=True)
    name = serializers.CharField(max_length=100)
    clientId = serializers.CharField(source="client_id", read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", read_only=True, allow_null=True)


class TokenRequestSerializer(StrictSerializer):
    grantType = serializers.ChoiceField(choices=["password", "client_credentials"])
    username = serializers.CharField(required=False)
    password = serializers.CharField(required=False, trim_whitespace=False)
    clientId = serializers.CharField(required=False)
    clientSecret = serializers.CharField(required=False, trim_whitespace=False)

    def validate(self, attrs):
        needed = ("username", "password") if attrs["grantType"] == "password" else ("clientId", "clientSecret")
        missing = {name: ["This field is required for this grantType."] for name in needed if not attrs.get(name)}
        if missing:
            raise serializers.ValidationError(missing)
        return attrs


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
