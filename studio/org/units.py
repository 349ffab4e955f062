"""Projects and departments as Run:ai's documents shape them (`Project`, `Department`, `DepartmentForList` of 2.18
and latest, the union of their fields) together with the fields this API answered before them, and the request bodies of both:
Run:ai's `ProjectCreationRequest`/`ProjectUpdateRequest` (`parentId`, per-pool `resources`, `schedulingRules`,
`defaultNodePools`, `nodeTypes`, `requestedNamespace`, `description`, `enforceRunaiScheduler`) and the earlier ones
(`departmentId`, `resources: {"gpu": {"deserved", "limit"}}`).

Where the two disagree on a field's type, Run:ai's documents win (their fields are the union of 2.18's and latest's):
`id` is a string and `resources` the per-node-pool array. The earlier shapes stay accepted on input, and the GPU totals stay
readable in that array: a project without per-pool quotas answers one entry whose `nodePool` is null (the spec
lets it be null) holding its `gpu.deserved` and `gpu.limit`; such an entry is accepted back. `departmentId`
(ours only) is the string `parentId` is, as a workload's `departmentId` in Run:ai's documents: one JSON type
for one id field; on input both forms are taken. docs/runai-compatibility.md lists what is answered and why."""

import re

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from studio.clusters import scheduler
from studio.clusters.models import Cluster, NodePool
from studio.ids import is_id, parse_id
from studio.org.models import Department, Project
from studio.org.numbers import Numbers, node_pool_quota_statuses, quota_status
from studio.org.quotas import gpu_totals, resources_from
from studio.serializers import NameField, StrictSerializer

_time = serializers.DateTimeField().to_representation
MB_PER_UNIT = {"MB": 1.0, "Mib": 1.048576, "GB": 1000.0}
# Namespaces a project may not take over (requestedNamespace): the cluster's own.
RESERVED_NAMESPACES = re.compile(r"^(default|kube-.*|paas-studio.*)$")
NAMESPACE_PATTERN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"


# --- answers ----------------------------------------------------------------------------------------------------

def _number(value):
    return None if value is None else float(value)


def _total(resources: list[dict], kind: str) -> float | None:
    """The sum of `deserved` of one kind over the pools (memory in MB); None when no pool sets it."""
    values = []
    for entry in resources or ():
        quota = entry.get(kind) or {}
        if quota.get("deserved") not in (None, -1):
            values.append(float(quota["deserved"]) * (MB_PER_UNIT.get(quota.get("units"), 1.0) if kind == "memory"
                                                      else 1.0))
    return sum(values) if values else None


def project_resources(project: Project) -> list[dict]:
    """Run:ai's per-pool array; a project without per-pool quotas: one pool-less entry with its GPU totals."""
    if project.node_pool_resources:
        return project.node_pool_resources
    return [{"nodePool": None, "gpu": {"deserved": float(project.gpu_deserved),
                                       "limit": _number(project.gpu_limit), "overQuotaWeight": None}}]


def _quota_status(unit) -> dict:
    """Run:ai's QuotaStatus: the unit's GPUs allocated and requested (studio.org.numbers, attached to the unit by
    studio.selectors.attach_gpu_use; KAI Scheduler's own count is in additionalStatusData.scheduler)."""
    found = getattr(unit, "numbers", None)
    return quota_status(found.total if found is not None else Numbers())


def _pool_quota_statuses(unit) -> list[dict]:
    """Run:ai's `nodePoolQuotaStatuses`: the same numbers per node pool (QuotaStatusNodePool)."""
    found = getattr(unit, "numbers", None)
    return node_pool_quota_statuses(found, getattr(unit, "pool_ids", {})) if found is not None else []


def _scheduler_status(unit) -> dict | None:
    """Run:ai's `additionalStatusData`: its KAI queue's deserved, limit, allocated, over-quota and waiting GPUs."""
    found = scheduler.summary(getattr(unit, "queue_status", None) or {})
    return {"scheduler": found} if found else None


def project_phase(project: Project) -> tuple[str, str]:
    """Run:ai's ProjectPhase from what PaaS Studio knows: its namespace is made on its cluster when the project
    is, so the project is Ready while its cluster answers."""
    status = project.cluster.status
    if status == Cluster.Status.CONNECTED:
        return "Ready", "Project is ready"
    if status == Cluster.Status.DISCONNECTED:
        return "NotReady", f"Cluster {project.cluster.name} does not answer"
    return "Unknown", f"Cluster {project.cluster.name} has not been reached yet"


def _rules(rules: dict | None) -> dict:
    return {key: value for key, value in (rules or {}).items() if value is not None}


def project_data(project: Project) -> dict:
    phase, message = project_phase(project)
    settings = project.runai_settings or {}
    resources = project_resources(project)
    requested = project.namespace if project.namespace != Project.namespace_for(project.name) else None
    return {
        "id": str(project.pk), "name": project.name, "description": project.description,
        "clusterId": str(project.cluster_id), "parentId": str(project.department_id),
        "departmentId": str(project.department_id), "departmentName": project.department.name,
        "namespace": project.namespace, "requestedNamespace": requested,
        "phase": phase,
        "status": {"namespace": project.namespace, "phase": phase, "phaseMessage": message,
                   "quotaStatus": _quota_status(project), "nodePoolQuotaStatuses": _pool_quota_statuses(project),
                   "additionalStatusData": _scheduler_status(project)},
        "resources": resources,
        "totalResources": {"gpuQuota": float(project.gpu_deserved), "cpuQuota": _total(resources, "cpu"),
                           "memoryQuota": _total(resources, "memory")},
        "schedulingRules": _rules(project.scheduling_rules),
        "defaultNodePools": settings.get("defaultNodePools"),
        "nodeTypes": settings.get("nodeTypes"),
        "enforceRunaiScheduler": bool(settings.get("enforceRunaiScheduler", False)),
        # What is enforced: the project's own values (a department's are not inherited).
        "effective": {"schedulingRules": _rules(project.scheduling_rules),
                      "defaultNodePools": settings.get("defaultNodePools"), "nodeTypes": settings.get("nodeTypes")},
        "createdAt": _time(project.created_at), "updatedAt": _time(project.updated_at),
        "createdBy": project.created_by, "updatedBy": project.updated_by or project.created_by,
        **_overtime(project),
    }


def _overtime(unit) -> dict:
    """Run:ai's overtimeData where the usage history attached it (studio.org.overtime)."""
    data = getattr(unit, "overtime_data", None)
    return {"overtimeData": data} if data is not None else {}


def _aggregated(projects) -> list[dict]:
    """Per pool, the sums of the department's projects' deserved quotas (AggregatedResources)."""
    pools: dict[str, dict] = {}
    for project in projects:
        for entry in project.node_pool_resources or ():
            pool = entry.get("nodePool") or {}
            into = pools.setdefault(str(pool.get("id")), {"nodePool": {"id": str(pool.get("id")),
                                                                       "name": pool.get("name")},
                                                          "gpu": {"deserved": 0.0}})
            into["gpu"]["deserved"] += float((entry.get("gpu") or {}).get("deserved") or 0)
            for kind in ("cpu", "memory"):
                if (entry.get(kind) or {}).get("deserved") not in (None, -1):
                    quota = into.setdefault(kind, {"deserved": 0.0, **({"units": "MB"} if kind == "memory" else {})})
                    quota["deserved"] += _total([entry], kind)
    return list(pools.values())


def department_cluster_id(department: Department) -> str | None:
    """Its own cluster, else (a department created without one) the cluster of its first project (prefetched)."""
    if department.cluster_id:
        return str(department.cluster_id)
    projects = sorted(department.projects.all(), key=lambda p: p.pk)
    return str(projects[0].cluster_id) if projects else None


def department_data(department: Department) -> dict:
    settings = department.runai_settings or {}
    resources = department.node_pool_resources or []
    return {
        "id": str(department.pk), "name": department.name, "description": department.description,
        "clusterId": department_cluster_id(department),
        "resources": resources,
        "totalResources": {"gpuQuota": _total(resources, "gpu"), "cpuQuota": _total(resources, "cpu"),
                           "memoryQuota": _total(resources, "memory")},
        "projectsAggregatedResources": _aggregated(department.projects.all()),
        "status": {"quotaStatus": _quota_status(department), "nodePoolQuotaStatuses": _pool_quota_statuses(department),
                   "additionalStatusData": _scheduler_status(department)},
        "schedulingRules": _rules(department.scheduling_rules),
        "defaultNodePools": settings.get("defaultNodePools"),
        "nodeTypes": settings.get("nodeTypes"),
        "createdAt": _time(department.created_at), "updatedAt": _time(department.updated_at),
        "createdBy": department.created_by, "updatedBy": department.updated_by or department.created_by,
        **_overtime(department),
    }


# --- requests ---------------------------------------------------------------------------------------------------

class GpuResourcesSerializer(StrictSerializer):
    deserved = serializers.DecimalField(max_digits=10, decimal_places=2, min_value=0, coerce_to_string=False)
    limit = serializers.DecimalField(
        max_digits=10, decimal_places=2, min_value=0, allow_null=True, required=False, coerce_to_string=False
    )


class ResourcesSerializer(StrictSerializer):
    gpu = GpuResourcesSerializer()


@extend_schema_field({"oneOf": [{"type": "object", "description": "CONTRACT: {\"gpu\": {\"deserved\", \"limit\"}}"},
                                 {"type": "array", "items": {"type": "object"}, "description": "Run:ai Resources"}]})
class ResourcesField(serializers.Field):
    """The GPU totals `{"gpu": {"deserved", "limit"}}`, or Run:ai's per-node-pool `Resources` array (checked
    against the cluster's pools in the serializer's validate, studio.org.quotas)."""

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


class NodeTypesSerializer(StrictSerializer):
    """NodeTypesPerWorkload: stored and answered (PaaS Studio has no node types: node pools select nodes)."""

    training = serializers.ListField(child=serializers.CharField(max_length=253), required=False, max_length=50)
    workspace = serializers.ListField(child=serializers.CharField(max_length=253), required=False, max_length=50)
    names = serializers.DictField(child=serializers.CharField(max_length=253), required=False, allow_null=True)


class OrgUnitSerializer(StrictSerializer):
    """What projects and departments share: Run:ai's updatable fields, checked against the cluster's pools."""

    id = serializers.CharField(read_only=True)
    name = NameField()
    description = serializers.CharField(required=False, allow_blank=True, max_length=2000)
    resources = ResourcesField(required=False)
    schedulingRules = SchedulingRulesSerializer(source="scheduling_rules", required=False, allow_null=True)
    defaultNodePools = serializers.ListField(child=serializers.CharField(max_length=63), required=False,
                                             allow_null=True, max_length=50)
    nodeTypes = NodeTypesSerializer(required=False, allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)

    def cluster_of(self, attrs):
        raise NotImplementedError

    def pools(self, attrs) -> list[NodePool]:
        cluster = self.cluster_of(attrs)
        return list(NodePool.objects.filter(cluster=cluster) if cluster else NodePool.objects.all())

    def validate(self, attrs):
        errors, pools = {}, None
        if isinstance(attrs.get("resources"), list):
            pools = self.pools(attrs)
            try:
                attrs["resources"] = self.pool_resources(attrs["resources"], pools)
            except DjangoValidationError as exc:
                errors.update(exc.message_dict)
        if attrs.get("defaultNodePools"):
            names = {p.name for p in (pools if pools is not None else self.pools(attrs))}
            for index, name in enumerate(attrs["defaultNodePools"]):
                if name not in names:
                    errors[f"defaultNodePools[{index}]"] = [f"No node pool {name!r} on the cluster; its pools are: "
                                                            f"{', '.join(sorted(names)) or 'none'}."]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def pool_resources(self, items: list, pools: list[NodePool]):
        return resources_from(items, pools)

    def settings_of(self, data: dict) -> dict:
        """Run:ai's stored-and-answered settings, merged into the instance's (a field left out stays)."""
        settings = dict(getattr(self.instance, "runai_settings", None) or {})
        for field in ("defaultNodePools", "nodeTypes", "enforceRunaiScheduler"):
            if field in data:
                value = data.pop(field)
                settings[field] = dict(value) if isinstance(value, dict) else value
        return settings

    def rules_of(self, data: dict) -> None:
        if "scheduling_rules" in data:  # null clears every limit; a null value one; the rest stay as they were
            given = data["scheduling_rules"]
            rules = {**(getattr(self.instance, "scheduling_rules", None) or {}), **(given or {})} if given else {}
            data["scheduling_rules"] = _rules(rules)


class ProjectSerializer(OrgUnitSerializer):
    departmentId = serializers.PrimaryKeyRelatedField(source="department", queryset=Department.objects.all(),
                                                      required=False)
    parentId = serializers.CharField(required=False, allow_null=True, max_length=20)
    clusterId = serializers.PrimaryKeyRelatedField(source="cluster", queryset=Cluster.objects.all())
    requestedNamespace = serializers.RegexField(NAMESPACE_PATTERN, max_length=63, required=False, allow_null=True,
                                                error_messages={"invalid": "A Kubernetes namespace name: lowercase "
                                                                "letters, digits and '-'."})
    enforceRunaiScheduler = serializers.BooleanField(required=False, allow_null=True)

    def to_representation(self, project):
        return project_data(project)

    def cluster_of(self, attrs):
        return attrs.get("cluster") or getattr(self.instance, "cluster", None)

    def pool_resources(self, items, pools):
        # One entry without a node pool is the GPU totals as this API answers them (project_data).
        if len(items) == 1 and isinstance(items[0], dict) and items[0].get("nodePool") is None:
            entry = items[0]
            extra = sorted(set(entry) - {"nodePool", "gpu"})
            if extra:
                raise DjangoValidationError({f"resources[0].{k}": "Quotas other than GPUs are per node pool: name "
                                                                  "the pool (resources[0].nodePool)." for k in extra})
            serializer = ResourcesSerializer(data={"gpu": {k: v for k, v in (entry.get("gpu") or {}).items()
                                                           if k != "overQuotaWeight" or v is not None}})
            if not serializer.is_valid():
                raise DjangoValidationError({f"resources[0].gpu.{k}": v for k, v in
                                             serializer.errors.get("gpu", {"": ["Must be an object."]}).items()})
            return serializer.validated_data
        return resources_from(items, pools)

    def validate(self, attrs):
        errors = {}
        parent = attrs.pop("parentId", None)
        if parent is not None:
            department = Department.objects.filter(pk=parse_id(parent)).first() if is_id(parent) else None
            if department is None:
                errors["parentId"] = [f"No department {parent!r}."]
            elif attrs.get("department") not in (None, department):
                errors["parentId"] = ["Names another department than departmentId."]
            else:
                attrs["department"] = department
        if self.instance is None and "department" not in attrs and "parentId" not in errors:
            errors["parentId"] = ["Give the project's department: parentId (or departmentId)."]
        namespace = attrs.get("requestedNamespace")
        if namespace and RESERVED_NAMESPACES.match(namespace):
            errors["requestedNamespace"] = [f"Namespace {namespace} belongs to the cluster or to PaaS Studio."]
        elif namespace and self.instance is not None and namespace != self.instance.namespace:
            errors["requestedNamespace"] = ["A project's namespace cannot change."]
        try:
            attrs = super().validate(attrs)
        except serializers.ValidationError as exc:
            errors.update(exc.detail)
        if errors:
            raise serializers.ValidationError(errors)
        return attrs

    def service_fields(self) -> dict:
        """Validated data as the keyword arguments of the project services."""
        data = dict(self.validated_data)
        data["runai_settings"] = self.settings_of(data)
        self.rules_of(data)
        namespace = data.pop("requestedNamespace", None)
        if namespace and self.instance is None:
            data["namespace"] = namespace
        resources = data.pop("resources", None)
        if isinstance(resources, list):
            data["node_pool_resources"] = resources
            data["gpu_deserved"], data["gpu_limit"] = gpu_totals(resources)
        elif resources is not None:  # GPU totals: the project may use every pool of its cluster
            data["node_pool_resources"] = []
            data["gpu_deserved"] = resources["gpu"]["deserved"]
            if "limit" in resources["gpu"]:
                data["gpu_limit"] = resources["gpu"]["limit"]
        return data


class DepartmentSerializer(OrgUnitSerializer):
    clusterId = serializers.PrimaryKeyRelatedField(source="cluster", queryset=Cluster.objects.all(), required=False,
                                                   allow_null=True)
    # Latest's DepartmentCreationRequest carries overtimeData (averages Run:ai computes): taken and not kept.
    overtimeData = serializers.DictField(required=False, allow_null=True, write_only=True)

    def to_representation(self, department):
        return department_data(department)

    def cluster_of(self, attrs):
        return attrs.get("cluster") or getattr(self.instance, "cluster", None)

    def validate(self, attrs):
        attrs = super().validate(attrs)
        if isinstance(attrs.get("resources"), dict):
            raise serializers.ValidationError({"resources": ["A department's quotas are Run:ai's per-node-pool "
                                                             "array: [{\"nodePool\": {\"id\"}, \"gpu\": {…}}]."]})
        cluster = attrs.get("cluster")
        if self.instance is not None and cluster and self.instance.projects.exclude(cluster=cluster).exists():
            raise serializers.ValidationError({"clusterId": ["The department has projects on another cluster."]})
        return attrs

    def service_fields(self) -> dict:
        data = dict(self.validated_data)
        data.pop("overtimeData", None)
        data["runai_settings"] = self.settings_of(data)
        self.rules_of(data)
        if "resources" in data:
            data["node_pool_resources"] = data.pop("resources")
        return data
