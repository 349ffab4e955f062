"""Run:ai's Datavolumes operations (`/api/v1/datavolumes...`, 2.18 and latest): thin views over
assets/datavolumes.py. Codes as 2.18 gives them: create 201, patch 200, delete 202 with Run:ai's accepted body;
latest's name availability 204 (taken: 409)."""

from django.db.models import Count
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from assets import datavolumes as dvs
from assets.list_params import page_problems
from assets.models import DataVolume
from studio.errors import Conflict
from studio.ids import is_uuid, parse_id
from studio.models import Project

ACCEPTED = {"code": 202, "message": "Request has been accepted."}
SORTS = {"name": "name", "projectId": "project_id", "clusterId": "cluster_id", "departmentId": "project__department_id",
         "projectName": "project__name", "createdAt": "created_at", "createdBy": "created_by", "phase": "phase"}
_S = {"type": "string"}
STATUS = {"type": "object", "required": ["phase"], "properties": {
    "phase": {"type": "string", "enum": list(DataVolume.Phase.values)}, "phaseMessage": _S,
    "conditions": {"type": "array", "items": {"type": "object"}}, "datavolumePvcName": _S, "datavolumePvName": _S}}
SHARED = {"type": "array", "items": {"type": "object", "required": ["scopeType", "scopeId", "scopeName"], "properties": {
    "scopeType": {"type": "string", "enum": list(dvs.SHARE_TYPES)}, "scopeId": _S, "scopeName": _S,
    "createdAt": {**_S, "format": "date-time"}, "createdBy": _S}}}
FIELDS = {"name": _S, "description": _S, "originPvcName": _S, "projectId": _S, "shouldDeleteOriginalVolume":
          {"type": "boolean"}, "useOriginalVolume": {"type": "boolean"}}
DATAVOLUME = {"type": "object", "required": ["id", "name", "projectId", "originPvcName", "projectName", "status"],
              "properties": {**FIELDS, "id": {**_S, "format": "uuid"}, "projectName": _S, "departmentId": _S,
                             "clusterId": {**_S, "format": "uuid"}, "createdAt": {**_S, "format": "date-time"},
                             "updatedAt": {**_S, "format": "date-time"}, "createdBy": _S, "updatedBy": _S,
                             "status": STATUS, "sharedScopes": SHARED}}
CREATE = {"type": "object", "required": ["name", "projectId", "originPvcName"], "properties": FIELDS}
PATCH = {"type": "object", "properties": {"description": _S}}
SCOPE = {"type": "object", "required": ["scopeType", "scopeId"], "properties": {
    "scopeType": {"type": "string", "enum": list(dvs.SHARE_TYPES)}, "scopeId": _S}}
SHARE = {"type": "object", "properties": {"add": {"type": "array", "items": SCOPE}, "remove": {"type": "array",
                                                                                            "items": SCOPE}}}
LIST_PARAMETERS = [
    OpenApiParameter("requestType", OpenApiTypes.STR, enum=["Originated", "UsableInProject"], required=True),
    OpenApiParameter("usableInProjectId", OpenApiTypes.STR),
    OpenApiParameter("search", OpenApiTypes.STR)]
PAGE_PARAMETERS = [OpenApiParameter("offset", OpenApiTypes.INT), OpenApiParameter("limit", OpenApiTypes.INT),
                   OpenApiParameter("sortBy", OpenApiTypes.STR, enum=list(SORTS)),
                   OpenApiParameter("sortOrder", OpenApiTypes.STR, enum=["asc", "desc"])]


def _query(request, *, paged: bool):
    """Run:ai's list parameters; every bad one named in one 400."""
    params, problems = request.query_params, {}
    request_type = params.get("requestType")
    if request_type not in ("Originated", "UsableInProject"):
        problems["requestType"] = ["This parameter is required: Originated or UsableInProject."
                                   if not request_type else "Must be Originated or UsableInProject."]
    project = None
    if request_type == "UsableInProject":
        pk = parse_id(params.get("usableInProjectId"))
        if not params.get("usableInProjectId"):
            problems["usableInProjectId"] = ["Is required with requestType UsableInProject."]
        elif pk is None:
            problems["usableInProjectId"] = ["Must be an integer id."]
        else:  # a project the caller does not see: nothing is usable there that the caller may know of
            project = Project.objects.visible_to(request.user).filter(pk=pk).first()
    page = {}
    if paged:
        page = page_problems(params, SORTS, problems)
    if problems:
        raise ValidationError(problems)
    rows = dvs.datavolume_list(user=request.user, query=dvs.ListQuery(request_type, project))
    if request_type == "UsableInProject" and project is None:
        rows = rows.none()
    if params.get("search"):
        rows = rows.filter(name__icontains=params["search"])
    return rows, page


def _visible(request, datavolume_id) -> DataVolume:
    dv = None
    if is_uuid(datavolume_id):
        dv = DataVolume.objects.visible_to(request.user).select_related("project").filter(pk=datavolume_id).first()
    if dv is None:
        raise Http404
    return dv


class DataVolumeListView(APIView):
    @extend_schema(operation_id="get_datavolumes", tags=["Datavolumes"], parameters=LIST_PARAMETERS + PAGE_PARAMETERS,
                   responses={200: {"type": "object", "required": ["datavolumes"], "properties": {
                       "next": {"type": "integer"}, "datavolumes": {"type": "array", "items": DATAVOLUME}}}})
    def get(self, request):
        rows, page = _query(request, paged=True)
        field = SORTS.get(request.query_params.get("sortBy") or "name")
        order = f"-{field}" if request.query_params.get("sortOrder") == "desc" else field
        found = list(rows.order_by(order, "id")[page["offset"]:page["offset"] + page["limit"] + 1])
        answer = {"datavolumes": [dvs.datavolume_answer(dv) for dv in found[:page["limit"]]]}
        if len(found) > page["limit"]:
            answer["next"] = page["offset"] + page["limit"]
        return Response(answer)

    @extend_schema(operation_id="create_datavolume", tags=["Datavolumes"], request={"application/json": CREATE},
                   responses={201: DATAVOLUME})
    def post(self, request):
        dv = dvs.datavolume_create(actor=request.user, body=request.data)
        return Response(dvs.datavolume_answer(dv, shares=[]), status=201)


class DataVolumeCountView(APIView):
    @extend_schema(operation_id="count_datavolumes", tags=["Datavolumes"], parameters=LIST_PARAMETERS,
                   responses={200: {"type": "object", "required": ["count"], "properties": {
                       "count": {"type": "integer"}}}})
    def get(self, request):
        rows, _ = _query(request, paged=False)
        return Response({"count": rows.aggregate(n=Count("pk"))["n"]})


class DataVolumeNameView(APIView):
    @extend_schema(operation_id="datavolume_name_availability", tags=["Datavolumes"], parameters=[
        OpenApiParameter("dataName", OpenApiTypes.STR, required=True),
        OpenApiParameter("clusterId", OpenApiTypes.UUID, required=True)], responses={204: None})
    def get(self, request):
        name, cluster = request.query_params.get("dataName"), request.query_params.get("clusterId")
        problems = {}
        if not name:
            problems["dataName"] = ["This parameter is required."]
        if not is_uuid(cluster):
            problems["clusterId"] = ["This parameter is required: a cluster's UUID." if not cluster
                                     else "Must be a UUID."]
        if problems:
            raise ValidationError(problems)
        if not dvs.name_available(name=name, cluster_id=cluster):
            raise Conflict(f"A data volume named {name} already exists on this cluster.")
        return Response(status=204)


class DataVolumeView(APIView):
    @extend_schema(operation_id="get_datavolume", tags=["Datavolumes"], responses={200: DATAVOLUME})
    def get(self, request, datavolumeId):  # noqa: N803 — Run:ai's name of the path parameter
        dv = _visible(request, datavolumeId)
        return Response(dvs.datavolume_answer(dv, shares=dvs.shares_of(dv)))

    @extend_schema(operation_id="patch_datavolume", tags=["Datavolumes"], request={"application/json": PATCH},
                   responses={200: DATAVOLUME})
    def patch(self, request, datavolumeId):  # noqa: N803
        dv = dvs.datavolume_update(actor=request.user, data_volume=_visible(request, datavolumeId), body=request.data)
        return Response(dvs.datavolume_answer(dv))

    @extend_schema(operation_id="delete_datavolume", tags=["Datavolumes"], responses={202: {
        "type": "object", "required": ["code", "message"], "properties": {"code": {"type": "integer"},
                                                                          "message": _S}}})
    def delete(self, request, datavolumeId):  # noqa: N803
        dvs.datavolume_delete(actor=request.user, data_volume=_visible(request, datavolumeId))
        return Response(ACCEPTED, status=202)


class DataVolumeSharedScopesView(APIView):
    @extend_schema(operation_id="get_datavolume_shared_scopes", tags=["Datavolumes"], responses={200: SHARED})
    def get(self, request, datavolumeId):  # noqa: N803
        return Response(dvs.shared_scopes_answer(dvs.shares_of(_visible(request, datavolumeId))))

    @extend_schema(operation_id="patch_datavolume_shared_scopes", tags=["Datavolumes"],
                   request={"application/json": SHARE}, responses={200: SHARED})
    def patch(self, request, datavolumeId):  # noqa: N803
        shares = dvs.datavolume_share(actor=request.user, data_volume=_visible(request, datavolumeId),
                                      body=request.data)
        return Response(dvs.shared_scopes_answer(shares))


@extend_schema_view(get=extend_schema(exclude=True), patch=extend_schema(exclude=True))
class DataVolumeSharedScopesAliasView(DataVolumeSharedScopesView):
    """The same operation at runapy's spelling of the path (`shared-scopes`); documented once, at Run:ai's."""
