"""What `/api/schema/` says of the asset operations: Run:ai's shapes, built from the same field tables that check
the requests (assets/specs.py), so the document and the validation cannot drift apart."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from assets.specs import CREDENTIAL_KINDS, KINDS

_S, _B, _I = {"type": "string"}, {"type": "boolean"}, {"type": "integer"}
_NS = {"type": "string", "nullable": True}
_REF = {"type": "object", "required": ["id", "name"], "properties": {"id": _S, "name": _S}}
_REFS = {"type": "array", "items": _REF}
SUPPORTED_TYPES = {"type": "object", "nullable": True, "properties": {
    "inference": {**_B, "nullable": True}, "workspace": {**_B, "nullable": True},
    "training": {**_B, "nullable": True}, "distributed": {**_B, "nullable": True},
    "distFramework": {"type": "string", "enum": ["MPI", "PyTorch", "TF", "XGBoost"], "nullable": True}}}
CREATE_META = {"type": "object", "required": ["name", "scope"], "properties": {
    "name": _S, "description": _NS, "scope": {"type": "string", "enum": ["tenant", "cluster", "department", "project"]},
    "clusterId": {**_NS, "format": "uuid"}, "departmentId": _NS, "projectId": {**_I, "nullable": True},
    "autoDelete": {**_B, "nullable": True}, "private": {**_B, "nullable": True},
    "workloadSupportedTypes": SUPPORTED_TYPES}}
UPDATE_META = {"type": "object", "properties": {"name": _S, "description": _NS}}
META = {"type": "object", "required": ["id", "name", "kind", "scope", "createdBy", "createdAt", "updatedBy",
                                       "updatedAt"],
        "properties": {**CREATE_META["properties"], "id": {**_S, "format": "uuid"}, "kind": _S,
                       "tenantId": _I, "projectName": _NS, "createdBy": _S,
                       "createdAt": {**_S, "format": "date-time"}, "updatedBy": _S,
                       "updatedAt": {**_S, "format": "date-time"}, "updateCount": _I}}
USED_BY = {"type": "object", "properties": {
    "workspaces": _REFS, "trainings": _REFS, "distributed": _REFS, "inferences": _REFS, "templates": _REFS,
    "assets": {"type": "object", "properties": {"environments": _REFS, "computes": _REFS, "datasources": {
        "type": "array", "items": {**_REF, "properties": {**_REF["properties"], "kind": _S}}}}}}}
COMPLIANCE = {"type": "object", "properties": {"imposed": _B, "compliance": _B, "reason": {"type": "array", "items": {
    "type": "object", "properties": {"field": _S, "details": _S}}}}}


def spec_schema(kind: str, *, answered: bool = False) -> dict:
    """The spec of a kind; an answer leaves secrets out (documented, never sent) and adds a credential's keyId."""
    fields, required, _ = KINDS[kind]
    properties = {name: rule.openapi for name, rule in fields.items() if not (answered and rule.secret)}
    if answered and kind in CREDENTIAL_KINDS:
        properties["keyId"] = _I
    schema = {"type": "object", "properties": properties}
    if required and not answered:
        schema["required"] = list(required)
    return schema


def asset_schema(kind: str) -> dict:
    return {"type": "object", "required": ["meta", "spec"], "properties": {
        "meta": META, "spec": spec_schema(kind, answered=True), "usedBy": USED_BY, "compliance": COMPLIANCE}}


def creation_schema(kind: str) -> dict:
    return {"type": "object", "required": ["meta", "spec"], "properties": {"meta": CREATE_META,
                                                                          "spec": spec_schema(kind)}}


def update_schema(kind: str) -> dict:
    return {"type": "object", "required": ["meta"], "properties": {"meta": UPDATE_META, "spec": {"type": "object"}}}


def list_schema(kinds, key_of=None) -> dict:
    """{entries: [...]}; a combined list (data sources, credentials) wraps each spec under its kind's key."""
    if key_of is None:
        entry = asset_schema(kinds[0])
    else:
        entry = {**asset_schema(kinds[0]), "properties": {**asset_schema(kinds[0])["properties"], "spec": {
            "type": "object", "properties": {key_of[k]: {**spec_schema(k, answered=True), "nullable": True}
                                             for k in kinds}}}}
    return {"type": "object", "required": ["entries"], "properties": {"entries": {"type": "array", "items": entry}}}


ACCEPTED = {"type": "object", "required": ["code", "message"], "properties": {"code": _I, "message": _S}}
HISTORY = {"type": "object", "required": ["records"], "properties": {"next": _I, "records": {
    "type": "array", "items": {"type": "object", "properties": {"meta": {"type": "object"}, "spec": {"type": "object"}}}}}}

_BOOL = OpenApiTypes.BOOL
LIST_PARAMETERS = [
    OpenApiParameter("name", OpenApiTypes.STR, description="Only the assets of this name."),
    OpenApiParameter("scope", OpenApiTypes.STR, enum=["tenant", "cluster", "department", "project"]),
    OpenApiParameter("projectId", OpenApiTypes.INT, description="With scope project, that project's assets; "
                     "else every asset the project may use (its own, its department's, its cluster's, the tenant's)."),
    OpenApiParameter("departmentId", OpenApiTypes.STR),
    OpenApiParameter("clusterId", OpenApiTypes.UUID),
    OpenApiParameter("includeDescendants", _BOOL, description="With an id: that scope's assets and those below it."),
    OpenApiParameter("assetIds", OpenApiTypes.STR, description="A comma-separated list of asset ids."),
    OpenApiParameter("usageInfo", _BOOL), OpenApiParameter("statusInfo", _BOOL),
    OpenApiParameter("complyToProject", OpenApiTypes.INT),
    OpenApiParameter("complyToWorkloadType", OpenApiTypes.STR, enum=["Workspace", "Training", "Distributed",
                                                                     "Inference"]),
    OpenApiParameter("complyToReplicaType", OpenApiTypes.STR, enum=["Worker", "Master"]),
    OpenApiParameter("isTraining", _BOOL), OpenApiParameter("isWorkspace", _BOOL),
    OpenApiParameter("isInference", _BOOL), OpenApiParameter("isDistributed", _BOOL),
    OpenApiParameter("distributedFramework", OpenApiTypes.STR),
]
DETAIL_PARAMETERS = [p for p in LIST_PARAMETERS if p.name in ("usageInfo", "statusInfo", "complyToProject",
                                                               "complyToWorkloadType", "complyToReplicaType")]
PAGE_PARAMETERS = [OpenApiParameter("offset", OpenApiTypes.INT), OpenApiParameter("limit", OpenApiTypes.INT)]
