"""API shapes of the organisation, in the camelCase of the Run:ai API."""

from django.contrib.auth import get_user_model
from rest_framework import serializers

from studio.audit import AuditEvent
from studio.clusters import access as cluster_access
from studio.clusters.models import Cluster, GpuScheduler
from studio.iam.models import AccessRule, Level, is_platform_admin
from studio.iam.throttling import CLIENT_ID_FIELDS
from studio.names import NAME_PATTERN, NAME_RULE
from studio.org.models import Project


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


run_ai_time = serializers.DateTimeField().to_representation  # Run:ai's times, as DRF writes them


def displayed_cluster(cluster: Cluster) -> dict:
    """DisplayedCluster: `uuid` and a `status` object; our own fields (clusterId, apiServerUrl…) stay beside."""
    state = {"Connected": "Connected", "Disconnected": "Disconnected"}.get(cluster.status, "WaitingToConnect")
    return {
        "uuid": str(cluster.pk), "tenantId": AccessRule.TENANT_ID, "name": cluster.name,
        "createdAt": run_ai_time(cluster.created_at), "updatedAt": run_ai_time(cluster.updated_at), "deletedAt": None,
        "domain": cluster.api_server_url or None, "version": None,
        "lastLiveness": run_ai_time(cluster.last_seen_at) if cluster.last_seen_at else None,
        "status": {"state": state, "conditions": []},
    }


class ClusterSerializer(StrictSerializer):
    clusterId = serializers.UUIDField(source="id", read_only=True)
    name = NameField()
    apiServerUrl = serializers.URLField(source="api_server_url", required=False, allow_blank=True)
    token = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=True)
    kubeconfig = serializers.CharField(write_only=True, required=False, allow_blank=True, trim_whitespace=False)
    caCert = serializers.CharField(source="ca_cert", write_only=True, required=False, allow_blank=True)
    verifyTls = serializers.BooleanField(source="verify_tls", required=False)
    prometheusUrl = serializers.URLField(source="prometheus_url", required=False, allow_blank=True)
    # Its GPU scheduler (docs/scheduling.md): auto (KAI Scheduler where its Queue API is served), kai, none.
    gpuScheduler = serializers.ChoiceField(source="gpu_scheduler", choices=GpuScheduler.choices, required=False)
    scheduler = serializers.SerializerMethodField()
    status = serializers.CharField(read_only=True)
    statusMessage = serializers.CharField(source="status_message", read_only=True)
    lastSeenAt = serializers.DateTimeField(source="last_seen_at", read_only=True, allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    def get_scheduler(self, cluster) -> dict:
        """What schedules its workloads now: `kai` (through the projects' queues) or `default` (Kubernetes')."""
        return {"name": "kai" if cluster.uses_kai else "default", "kaiDetected": cluster.kai_detected,
                "gpuCapacity": cluster.gpu_capacity or None}

    def to_representation(self, cluster):
        # Run:ai's DisplayedCluster (uuid, tenantId, status object…) with our own fields beside it.
        return {**super().to_representation(cluster), **displayed_cluster(cluster)}

    def validate(self, attrs):
        url = attrs.get("api_server_url", getattr(self.instance, "api_server_url", ""))
        kubeconfig = attrs.get("kubeconfig", getattr(self.instance, "kubeconfig", ""))
        if not url and not kubeconfig:
            raise serializers.ValidationError({"apiServerUrl": ["Give the API server URL or a kubeconfig."]})
        if attrs.get("kubeconfig"):
            _refuse(cluster_access.parse_kubeconfig, attrs["kubeconfig"])
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
        from studio.iam.permissions import project_role

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
    An app token is an access key's or a service account's client id and secret. `validated_data` holds
    `grantType` plus the fields of its grant, whatever the spelling. Single sign-on's grants (studio/iam/tokens.py):
    `refresh_token` (`refreshToken`), `exchange_token` (`code`, `redirectUri`; `codeVerifier` where the client
    used PKCE) and `external_token_exchange` (`externalToken`, an ID token of the identity provider)."""

    SPELLINGS = {  # canonical field -> the names a client may use for it, in order of preference
        "clientId": CLIENT_ID_FIELDS,
        "clientSecret": ("clientSecret", "appSecret", "AppSecret"),
    }
    GRANT_FIELDS = {
        "password": ("username", "password"),
        "client_credentials": ("clientId", "clientSecret"),
        "app_token": ("clientId", "clientSecret"),
        "refresh_token": ("refreshToken",),
        "exchange_token": ("code", "redirectUri"),
        "external_token_exchange": ("externalToken",),
    }
    PLAIN = ("username", "password", "refreshToken", "code", "redirectUri", "codeVerifier", "externalToken")

    grantType = serializers.ChoiceField(choices=list(GRANT_FIELDS))
    username = serializers.CharField(required=False)
    password = serializers.CharField(required=False, trim_whitespace=False)
    clientId = serializers.CharField(required=False)
    clientID = serializers.CharField(required=False)
    appID = serializers.CharField(required=False)
    AppId = serializers.CharField(required=False)
    clientSecret = serializers.CharField(required=False, trim_whitespace=False)
    appSecret = serializers.CharField(required=False, trim_whitespace=False)
    AppSecret = serializers.CharField(required=False, trim_whitespace=False)
    refreshToken = serializers.CharField(required=False)
    code = serializers.CharField(required=False)
    redirectUri = serializers.CharField(required=False, max_length=2000)
    codeVerifier = serializers.CharField(required=False, max_length=128)
    externalToken = serializers.CharField(required=False)

    def validate(self, attrs):
        grant = attrs["grantType"]
        values = {"grantType": grant, **{name: attrs.get(name) for name in self.PLAIN}}
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
    refreshToken = serializers.CharField(required=False)


class AuditEventSerializer(serializers.ModelSerializer):
    actor = serializers.CharField(source="actor_name")
    objectType = serializers.CharField(source="object_type")
    objectId = serializers.CharField(source="object_id")
    objectRepr = serializers.CharField(source="object_repr")
    requestId = serializers.CharField(source="request_id")

    class Meta:
        model = AuditEvent
        fields = ["id", "at", "actor", "action", "objectType", "objectId", "objectRepr", "changes", "requestId"]
