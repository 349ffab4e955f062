"""OpenAPI schemas of the answers that Run:ai shapes by hand (studio.iam.api, cluster_api, quota_api, clusters):
what `/api/schema/` documents for them, so that a generated client and the schema fuzz test read them right."""

_S, _I, _B, _N = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "number"}
_TIME = {"type": "string", "format": "date-time"}
_NULL_TIME = {**_TIME, "nullable": True}


def _object(required: dict, optional: dict | None = None) -> dict:
    return {"type": "object", "required": list(required), "properties": {**required, **(optional or {})}}


COUNT = _object({"count": _I})
MESSAGE = _object({"code": _I, "message": _S})
PERMISSION = _object({"resourceType": _S, "displayName": _S, "groupId": _S, "actions": {"type": "array", "items": _S}})
ROLE = _object({"id": _I, "name": _S, "description": _S, "permissions": {"type": "array", "items": PERMISSION},
                "createdAt": _TIME, "updatedAt": _TIME, "createdBy": _S, "custom": _B, "effectiveEnabled": _B},
               {"deletedAt": _NULL_TIME, "tenantId": _I, "enabled": _B, "level": _S,
                "kubernetesPermissions": {"type": "object"}})
ROLES = {"type": "array", "items": ROLE}
ACCESS_RULE = _object(
    {"id": _I, "subjectId": _S, "subjectType": _S, "roleId": _I, "roleName": _S, "scopeId": _S, "scopeType": _S,
     "scopeName": _S, "tenantId": _I, "createdAt": _TIME, "updatedAt": _TIME, "createdBy": _S},
    {"scopePath": {**_S, "nullable": True}, "deletedAt": _NULL_TIME, "clusterId": {**_S, "format": "uuid"},
     "status": {"type": "object"}})
ACCESS_RULES = _object({"totalRecords": _I, "displayRecords": _I, "accessRules": {"type": "array",
                                                                                   "items": ACCESS_RULE}})
USER = _object({"id": _S, "username": _S, "createdBy": _S, "createdAt": _NULL_TIME, "updatedAt": _NULL_TIME,
                "lastLogin": _NULL_TIME, "isLocal": _B}, {"email": _S, "groups": {"type": "array", "items": _S}})
USERS = {"type": "array", "items": USER}
USER_CREATED = _object({"id": _S, "username": _S, "tempPassword": _S})
TEMP_PASSWORD = _object({"tempPassword": _S})
# Run:ai's QuotaStatusResource: GPUs, CPU in millicores, memory in MB.
_USE = _object({"gpu": _N, "cpu": _N, "memory": _N})
NODE_POOL = _object({"id": _S, "name": _S, "labelKey": _S, "labelValue": _S, "clusterId": _S, "clusterName": _S,
                     "isDefault": _B, "tenantId": _I, "createdBy": _S, "createdAt": _TIME, "updatedBy": _S,
                     "updatedAt": _TIME},
                    {"phase": _S, "phaseMessage": _S, "overProvisioningRatio": _I,
                     "gpuNetworkAccelerationDetection": _S, "placementStrategy": {"type": "object"},
                     # PaaS Studio's: its allocation (studio.org.node_pool_api), as every page shows it
                     "quotaStatus": _object({"allocated": _USE, "requested": _USE}),
                     "totalResources": _object({"gpuQuota": _N}),
                     "gpus": _object({"total": {**_I, "nullable": True}, "allocated": _N, "requested": _N,
                                      "free": {**_N, "nullable": True}})})
NODE_POOLS = _object({"nodepools": {"type": "array", "items": NODE_POOL}})
NODE_POOL_V1 = _object({"id": _I, "name": _S, "clusterId": {**_S, "format": "uuid"}, "labelKey": _S,
                        "labelValue": _S, "overProvisioningRatio": _I, "isDefault": _B, "status": _S,
                        "createdBy": _S, "createdAt": _TIME, "updatedBy": _S, "updatedAt": _TIME},
                       {"placementStrategy": _object({"cpu": _S, "gpu": _S}), "statusMessage": _S})
NODE_POOLS_V1 = {"type": "array", "items": NODE_POOL_V1}  # 2.18's /v1/k8s/clusters/{clusterId}/node-pools
NODE = _object({"name": _S, "clusterUuid": _S, "nodePool": _S, "status": _S, "createdAt": {**_S, "nullable": True},
                "updatedAt": {**_S, "nullable": True}},
               {"id": _S, "conditions": {"type": "array", "items": {"type": "object"}},
                "taints": {"type": "array", "items": {"type": "object"}}, "gpuInfo": {"type": "object"}})
NODES = _object({"nodes": {"type": "array", "items": NODE}})
_QUOTA = {"type": "object", "nullable": True, "properties": {"deserved": {**_N, "nullable": True},
                                                             "limit": {**_N, "nullable": True},
                                                             "overQuotaWeight": {**_N, "nullable": True},
                                                             "units": _S}}
RESOURCES = {"type": "array", "items": _object(
    {"nodePool": _object({"id": _S}, {"name": _S}), "gpu": _QUOTA}, {"cpu": _QUOTA, "memory": _QUOTA,
                                                                    "priority": {**_S, "nullable": True}})}
CLUSTER = _object(
    {"uuid": {**_S, "format": "uuid"}, "tenantId": _I, "name": _S, "createdAt": _TIME},
    {"clusterId": {**_S, "format": "uuid"}, "apiServerUrl": _S, "verifyTls": _B, "prometheusUrl": _S,
     "statusMessage": _S, "lastSeenAt": _NULL_TIME, "updatedAt": _NULL_TIME, "deletedAt": _NULL_TIME,
     "domain": {**_S, "nullable": True}, "version": {**_S, "nullable": True}, "lastLiveness": _NULL_TIME,
     "status": {"type": "object", "nullable": True, "properties": {"state": _S, "conditions": {"type": "array"}}},
     "gpuScheduler": {**_S, "enum": ["auto", "kai", "none"]},
     "scheduler": _object({"name": {**_S, "enum": ["kai", "default"]}},
                          {"kaiDetected": {**_B, "nullable": True}, "gpuCapacity": {"type": "object", "nullable": True}})})
_NULL_N = {**_N, "nullable": True}
_RULES = {"type": "object", "nullable": True, "additionalProperties": {"type": "integer", "nullable": True}}
_POOLS = {"type": "array", "nullable": True, "items": _S}
_NODE_TYPES = {"type": "object", "nullable": True}
_TOTALS = _object({"gpuQuota": _NULL_N, "cpuQuota": _NULL_N, "memoryQuota": _NULL_N})
_QUOTA_STATUS = _object({"allocated": _USE, "requested": _USE}, {"allocatedNonPreemptible": _USE})
_POOL_QUOTA_STATUSES = {"type": "array", "items": _object(
    {"nodePoolName": _S, "nodePoolId": _S, "allocated": _USE, "requested": _USE})}
ORG_RESOURCES = {"type": "array", "items": _object(
    {"nodePool": {**_object({"id": _S}, {"name": _S}), "nullable": True}, "gpu": _QUOTA},
    {"cpu": _QUOTA, "memory": _QUOTA, "priority": {**_S, "nullable": True}})}
PROJECT = _object(
    {"id": _S, "name": _S, "description": _S, "clusterId": _S, "parentId": _S, "departmentId": _S,
     "departmentName": _S, "namespace": _S, "requestedNamespace": {**_S, "nullable": True}, "phase": _S,
     "status": _object({"namespace": _S, "phase": _S, "phaseMessage": _S, "quotaStatus": _QUOTA_STATUS,
                        "nodePoolQuotaStatuses": _POOL_QUOTA_STATUSES},
                       {"additionalStatusData": {"type": "object", "nullable": True}}),
     "resources": ORG_RESOURCES, "totalResources": _TOTALS, "schedulingRules": _RULES,
     "defaultNodePools": _POOLS, "nodeTypes": _NODE_TYPES, "enforceRunaiScheduler": _B,
     "effective": _object({"schedulingRules": _RULES, "defaultNodePools": _POOLS, "nodeTypes": _NODE_TYPES}),
     "createdAt": _TIME, "updatedAt": _TIME, "createdBy": _S, "updatedBy": _S})
DEPARTMENT = _object(
    {"id": _S, "name": _S, "description": _S, "clusterId": {**_S, "nullable": True}, "resources": ORG_RESOURCES,
     "totalResources": _TOTALS, "projectsAggregatedResources": {"type": "array", "items": {"type": "object"}},
     "status": _object({"quotaStatus": _QUOTA_STATUS, "nodePoolQuotaStatuses": _POOL_QUOTA_STATUSES},
                       {"additionalStatusData": {"type": "object", "nullable": True}}),
     "schedulingRules": _RULES, "defaultNodePools": _POOLS,
     "nodeTypes": _NODE_TYPES, "createdAt": _TIME, "updatedAt": _TIME, "createdBy": _S, "updatedBy": _S})
