"""Run:ai's Storage Classes (read from the cluster: `storage.k8s.io/v1` StorageClasses) and latest's Storage Class
Configuration (which classes users may pick, and their defaults: stored here, per cluster and class).

- `GET /v1/k8s/clusters/{uuid}/storage-classes`: 2.18 answers a list of `{storage_class_name, is_default}`;
  latest (a deprecated copy, for clusters before 2.20) answers `{storageClasses: [names]}` and adds the
  `includeNone` parameter. The path is one: a request that gives `includeNone` gets latest's shape, any other
  2.18's.
- `GET /api/v1/storage-classes`, `/api/v2/storage-classes` (latest, `clusterId` required): each class with its
  provisioner, expansion and default flags; v2 adds its configuration's `permissions` and `customization`.
  `includeNone=true` adds Run:ai's `runai-none` (claims made without a class).
- Anyone who sees a cluster reads its classes (another's cluster: 404). Configurations: read by those who see
  the cluster, written by platform admins (Run:ai's System administrator)."""

import re

from django.db import IntegrityError, transaction
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from assets.list_params import page_problems
from assets.models import StorageClassConfiguration
from studio.audit import audit_record, snapshot
from studio.clusters import kube
from studio.errors import Conflict
from studio.ids import is_uuid
from studio.models import AccessRule, AuditEvent, Cluster, is_platform_admin

DEFAULT_ANNOTATIONS = ("storageclass.kubernetes.io/is-default-class", "storageclass.beta.kubernetes.io/is-default-class")
NONE_CLASS = "runai-none"
QUANTITY = re.compile(r"^([+]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")
ATTRIBUTE_KEY = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
PERMISSIONS = ("allowedForAssets", "allowedForWorkloads", "allowedForEphemeralVolumes",
               "allowedForPersistentVolumes", "allowDataSharing")
ACCESS_MODES = ("readWriteOnce", "readOnlyMany", "readWriteMany")
UNITS = ("MB", "MiB", "GB", "GiB", "TB", "TiB")
_B, _S = {"type": "boolean", "nullable": True}, {"type": "string"}


# --- reads of the cluster --------------------------------------------------------------------------------------

def storage_classes(cluster: Cluster) -> list[dict]:
    """The cluster's storage classes, by name: {name, provisioner, allowVolumeExpansion, isDefault}."""
    conn = kube.connect(cluster)
    found = []
    for obj in kube.list_objects(conn, "storage.k8s.io/v1", "StorageClass"):
        annotations = obj["metadata"].get("annotations") or {}
        found.append({"name": obj["metadata"]["name"], "provisioner": obj.get("provisioner", ""),
                      "allowVolumeExpansion": bool(obj.get("allowVolumeExpansion")),
                      "isDefault": any(annotations.get(a) == "true" for a in DEFAULT_ANNOTATIONS)})
    return sorted(found, key=lambda c: c["name"])


def _cluster(request, cluster_id) -> Cluster:
    cluster = Cluster.objects.visible_to(request.user).filter(pk=cluster_id).first() if is_uuid(cluster_id) else None
    if cluster is None:
        raise Http404
    return cluster


def _flag(request, name: str) -> bool:
    value = request.query_params.get(name)
    if value in (None, ""):
        return False
    if value.lower() not in ("true", "false"):
        raise ValidationError({name: ["Must be true or false."]})
    return value.lower() == "true"


def _classes(request) -> tuple[Cluster, list[dict]]:
    """latest's list parameters: clusterId (required), name, includeNone."""
    cluster_id = request.query_params.get("clusterId")
    problems = {}
    if not is_uuid(cluster_id):
        problems["clusterId"] = ["This parameter is required: a cluster's UUID." if not cluster_id
                                 else "Must be a UUID."]
    include_none = request.query_params.get("includeNone")
    if include_none not in (None, "", "true", "false", "True", "False"):
        problems["includeNone"] = ["Must be true or false."]
    if problems:
        raise ValidationError(problems)
    cluster = _cluster(request, cluster_id)
    classes = storage_classes(cluster)
    if _flag(request, "includeNone"):
        classes.append({"name": NONE_CLASS, "provisioner": "", "allowVolumeExpansion": False, "isDefault": False})
    if request.query_params.get("name"):
        classes = [c for c in classes if c["name"] == request.query_params["name"]]
    return cluster, classes


INCLUDE_NONE = OpenApiParameter("includeNone", OpenApiTypes.BOOL)
LIST_PARAMETERS = [OpenApiParameter("clusterId", OpenApiTypes.UUID, required=True),
                   OpenApiParameter("name", OpenApiTypes.STR), INCLUDE_NONE]


class ClusterStorageClassesView(APIView):
    @extend_schema(operation_id="getStorageClasses", tags=["Storage Classes"], parameters=[INCLUDE_NONE],
                   responses={200: {"oneOf": [
                       {"type": "array", "items": {"type": "object", "required": ["storage_class_name"], "properties": {
                           "storage_class_name": _S, "is_default": {"type": "boolean"}}}},
                       {"type": "object", "properties": {"storageClasses": {"type": "array", "items": _S}}}]}})
    def get(self, request, uuid):
        latest = "includeNone" in request.query_params
        include_none = _flag(request, "includeNone")
        classes = storage_classes(_cluster(request, uuid))
        if latest:
            return Response({"storageClasses": [c["name"] for c in classes] + ([NONE_CLASS] if include_none else [])})
        return Response([{"storage_class_name": c["name"], "is_default": c["isDefault"]} for c in classes])


class StorageClassesView(APIView):
    @extend_schema(operation_id="getStorageClassesV1", tags=["Storage Classes"], parameters=LIST_PARAMETERS,
                   responses={200: {"type": "object", "required": ["items"], "properties": {"items": {
                       "type": "array", "items": {"type": "object", "properties": {
                           "cluster_id": _S, "storage_class_name": _S, "Spec": {"type": "object"}}}}}}})
    def get(self, request):
        cluster, classes = _classes(request)
        return Response({"items": [{"cluster_id": str(cluster.pk), "storage_class_name": c["name"], "Spec": {
            "provisioner": c["provisioner"], "allow_volume_expansion": c["allowVolumeExpansion"],
            "is_default": c["isDefault"]}} for c in classes]})


class StorageClassesV2View(APIView):
    @extend_schema(operation_id="getStorageClassesV2", tags=["Storage Classes"], parameters=LIST_PARAMETERS,
                   responses={200: {"type": "object", "required": ["items"], "properties": {"items": {
                       "type": "array", "items": {"type": "object", "properties": {
                           "clusterId": _S, "storageClassName": _S, "spec": {"type": "object"},
                           "permissions": {"type": "object"}, "customization": {"type": "object"}}}}}}})
    def get(self, request):
        cluster, classes = _classes(request)
        configured = {c.storage_class_name: c.spec for c in cluster.storage_class_configurations.all()}
        items = []
        for c in classes:
            item = {"clusterId": str(cluster.pk), "storageClassName": c["name"], "spec": {
                "provisioner": c["provisioner"], "allowVolumeExpansion": c["allowVolumeExpansion"],
                "isDefault": c["isDefault"]}}
            item.update({k: v for k, v in configured.get(c["name"], {}).items() if v is not None})
            items.append(item)
        return Response({"items": items})


# --- configurations (stored) ---------------------------------------------------------------------------------

def _object(value, where: str, problems: dict) -> dict | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        problems[where] = ["Must be an object."]
        return None
    return value


def _booleans(value: dict, names, where: str, problems: dict) -> None:
    for key, flag in value.items():
        if key not in names:
            problems[f"{where}.{key}"] = ["Is not a field of this object."]
        elif flag is not None and not isinstance(flag, bool):
            problems[f"{where}.{key}"] = ["Must be true or false."]


def _customization_problems(value: dict, problems: dict, *, patch: bool) -> None:
    """Run:ai's StorageClassCustomization: accessMode, volumeMode, claimSize, attributes (a patch may also
    name `attributesToRemove`)."""
    known = {"accessMode", "volumeMode", "claimSize", "attributes"} | ({"attributesToRemove"} if patch else set())
    for key in value:
        if key not in known:
            problems[f"customization.{key}"] = ["Is not a field of this object."]
    access = _object(value.get("accessMode"), "customization.accessMode", problems)
    if access:
        for key in access:
            if key not in ("required", "default", "supportedValues"):
                problems[f"customization.accessMode.{key}"] = ["Is not a field of this object."]
        for part in ("default", "supportedValues"):
            modes = _object(access.get(part), f"customization.accessMode.{part}", problems)
            if modes:
                _booleans(modes, ACCESS_MODES, f"customization.accessMode.{part}", problems)
    mode = _object(value.get("volumeMode"), "customization.volumeMode", problems)
    if mode:
        if mode.get("default") not in (None, "Filesystem", "Block"):
            problems["customization.volumeMode.default"] = ["Must be Filesystem or Block."]
        supported = _object(mode.get("supportedValues"), "customization.volumeMode.supportedValues", problems)
        if supported:
            _booleans(supported, ("filesystem", "block"), "customization.volumeMode.supportedValues", problems)
    size = _object(value.get("claimSize"), "customization.claimSize", problems)
    if size:
        for key in ("default", "min", "max", "step"):
            if size.get(key) is not None and not (isinstance(size[key], str) and QUANTITY.match(size[key])):
                problems[f"customization.claimSize.{key}"] = ["Must be a Kubernetes quantity, e.g. 10Gi."]
        units = size.get("supportedUnits")
        if units is not None and not (isinstance(units, list) and all(u in UNITS for u in units)):
            problems["customization.claimSize.supportedUnits"] = [f"Must be a list of {', '.join(UNITS)}."]
    attributes = value.get("attributes")
    if attributes is not None:
        if not isinstance(attributes, list):
            problems["customization.attributes"] = ["Must be a list."]
        else:
            for i, item in enumerate(attributes):
                if not (isinstance(item, dict) and isinstance(item.get("key"), str)
                        and ATTRIBUTE_KEY.match(item["key"]) and len(item["key"]) <= 63):
                    problems[f"customization.attributes[{i}].key"] = [
                        "Is required: 1-63 letters, digits, '-', '_' and '.', starting and ending with one of the "
                        "first two."]


def _body_problems(body, *, creating: bool, patch: bool = False) -> dict:
    if not isinstance(body, dict):
        raise ValidationError({"body": ["Must be a JSON object."]})
    known = {"permissions", "customization"} | ({"tenantId", "scopeType", "scopeId", "name"} if creating else set())
    problems = {key: ["Is not a field of this object."] for key in body if key not in known}
    permissions = _object(body.get("permissions"), "permissions", problems)
    if permissions:
        _booleans(permissions, PERMISSIONS, "permissions", problems)
    customization = _object(body.get("customization"), "customization", problems)
    if customization:
        _customization_problems(customization, problems, patch=patch)
    return problems


def _answer(config: StorageClassConfiguration) -> dict:
    return {"id": str(config.pk), "tenantId": AccessRule.TENANT_ID, "scopeType": "cluster",
            "scopeId": str(config.cluster_id), "name": config.storage_class_name,
            **{k: v for k, v in config.spec.items() if v is not None}}


def _admin(actor) -> None:
    if not is_platform_admin(actor):
        raise PermissionDenied("Only platform administrators configure storage classes.")


def storage_class_configuration_create(*, actor, body) -> StorageClassConfiguration:
    problems = _body_problems(body, creating=True)
    if body.get("scopeType", "cluster") != "cluster":
        problems["scopeType"] = ["Must be cluster."]
    name = body.get("name")
    if not (isinstance(name, str) and name):
        problems["name"] = ["This field is required: a storage class name."]
    tenant = body.get("tenantId")
    if tenant is not None and tenant != AccessRule.TENANT_ID:
        problems["tenantId"] = [f"Must be {AccessRule.TENANT_ID}, this tenant."]
    scope_id = body.get("scopeId")
    cluster = Cluster.objects.visible_to(actor).filter(pk=scope_id).first() if is_uuid(scope_id) else None
    if cluster is None:
        problems["scopeId"] = ["This field is required: a cluster's UUID." if not scope_id else "No such cluster."]
    if problems:
        raise ValidationError(problems)
    _admin(actor)
    config = StorageClassConfiguration(cluster=cluster, storage_class_name=name, created_by=actor.get_username(),
                                       updated_by=actor.get_username(),
                                       spec={k: body.get(k) for k in ("permissions", "customization")})
    try:
        with transaction.atomic():
            config.save()
            audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=config)
    except IntegrityError as exc:
        raise Conflict(f"The storage class {name} of this cluster is configured already.") from exc
    return config


def storage_class_configuration_update(*, actor, config: StorageClassConfiguration, body,
                                       patch: bool) -> StorageClassConfiguration:
    """PUT replaces permissions and customization; PATCH merges them (and removes `attributesToRemove`)."""
    problems = _body_problems(body, creating=False, patch=patch)
    if problems:
        raise ValidationError(problems)
    _admin(actor)
    before = snapshot(config)
    spec = dict(config.spec)
    if patch:
        for key in ("permissions", "customization"):
            if body.get(key) is not None:
                spec[key] = {**(spec.get(key) or {}), **body[key]}
        custom = spec.get("customization") or {}
        remove = set(custom.pop("attributesToRemove", None) or [])
        if remove and custom.get("attributes"):
            custom["attributes"] = [a for a in custom["attributes"] if a.get("key") not in remove]
    else:
        spec = {k: body.get(k) for k in ("permissions", "customization")}
    config.spec, config.updated_by = spec, actor.get_username()
    with transaction.atomic():
        config.save()
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=config, before=before)
    return config


def storage_class_configuration_delete(*, actor, config: StorageClassConfiguration) -> None:
    _admin(actor)
    before = snapshot(config)
    with transaction.atomic():
        config.delete()
        audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=config, before=before)


def _visible_configs(user):
    return StorageClassConfiguration.objects.filter(cluster__in=Cluster.objects.visible_to(user).values("pk"))


def _config(request, config_id) -> StorageClassConfiguration:
    config = _visible_configs(request.user).filter(pk=config_id).first() if is_uuid(config_id) else None
    if config is None:
        raise Http404
    return config


CONFIG = {"type": "object", "required": ["id", "tenantId", "scopeType", "scopeId", "name"], "properties": {
    "id": {**_S, "format": "uuid"}, "tenantId": {"type": "integer"}, "scopeType": {"type": "string",
                                                                                  "enum": ["cluster"]},
    "scopeId": {**_S, "format": "uuid"}, "name": _S, "permissions": {"type": "object"},
    "customization": {"type": "object"}}}
CONFIG_BODY = {"type": "object", "properties": {"permissions": {"type": "object", "properties": {
    p: _B for p in PERMISSIONS}}, "customization": {"type": "object"}}}
CREATE_BODY = {**CONFIG_BODY, "required": ["scopeType", "scopeId", "name"], "properties": {
    **CONFIG_BODY["properties"], "tenantId": {"type": "integer"}, "scopeType": {"type": "string", "enum": ["cluster"]},
    "scopeId": {**_S, "format": "uuid"}, "name": _S}}
SORTS = {"name": "storage_class_name", "scopeId": "cluster_id", "tenantId": "pk", "scopeType": "pk"}


class StorageClassConfigurationListView(APIView):
    @extend_schema(operation_id="list_storage_class_configuration", tags=["Storage Class Configuration"],
                   parameters=[OpenApiParameter("offset", OpenApiTypes.INT), OpenApiParameter("limit", OpenApiTypes.INT),
                               OpenApiParameter("sortBy", OpenApiTypes.STR, enum=list(SORTS)),
                               OpenApiParameter("sortOrder", OpenApiTypes.STR, enum=["asc", "desc"])],
                   responses={200: {"type": "object", "required": ["storageClassConfigurations"], "properties": {
                       "storageClassConfigurations": {"type": "array", "items": CONFIG}, "next": {"type": "integer"}}}})
    def get(self, request):
        params, problems = request.query_params, {}
        page = page_problems(params, SORTS, problems)
        if problems:
            raise ValidationError(problems)
        field = SORTS[params.get("sortBy") or "name"]
        order = f"-{field}" if params.get("sortOrder") == "desc" else field
        found = list(_visible_configs(request.user).order_by(order, "pk")[
            page["offset"]:page["offset"] + page["limit"] + 1])
        answer = {"storageClassConfigurations": [_answer(c) for c in found[:page["limit"]]]}
        if len(found) > page["limit"]:
            answer["next"] = page["offset"] + page["limit"]
        return Response(answer)

    @extend_schema(operation_id="create_storage_class_configuration", tags=["Storage Class Configuration"],
                   request={"application/json": CREATE_BODY}, responses={201: CONFIG})
    def post(self, request):
        return Response(_answer(storage_class_configuration_create(actor=request.user, body=request.data)),
                        status=201)


class StorageClassConfigurationView(APIView):
    @extend_schema(operation_id="get_storage_class_configuration_by_id", tags=["Storage Class Configuration"],
                   responses={200: CONFIG})
    def get(self, request, id):  # noqa: A002 — Run:ai's name of the path parameter
        return Response(_answer(_config(request, id)))

    @extend_schema(operation_id="update_storage_class_configuration_by_id", tags=["Storage Class Configuration"],
                   request={"application/json": CONFIG_BODY}, responses={200: CONFIG})
    def put(self, request, id):  # noqa: A002
        config = storage_class_configuration_update(actor=request.user, config=_config(request, id),
                                                    body=request.data, patch=False)
        return Response(_answer(config))

    @extend_schema(operation_id="patch_storage_class_configuration_by_id", tags=["Storage Class Configuration"],
                   request={"application/json": CONFIG_BODY}, responses={200: CONFIG})
    def patch(self, request, id):  # noqa: A002
        config = storage_class_configuration_update(actor=request.user, config=_config(request, id),
                                                    body=request.data, patch=True)
        return Response(_answer(config))

    @extend_schema(operation_id="delete_storage_class_configuration_by_id", tags=["Storage Class Configuration"],
                   responses={204: None})
    def delete(self, request, id):  # noqa: A002
        storage_class_configuration_delete(actor=request.user, config=_config(request, id))
        return Response(status=204)
