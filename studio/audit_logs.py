"""Run:ai's audit logs, answered from the audit trail (studio.audit): latest's AuditLogs tag (`GET
/api/v1/audit/log` and its file, CSV or JSON) and 2.18's Audit (`GET /v1/k8s/audit`). Platform admins only, as
Run:ai's roles have it. A row's changes were masked when recorded: no secret is in any answer.

The trail records what succeeded, by whom, on which object: `result` is always Succeeded, `http_method` follows
from the action, and what it does not record (`source_ip`, `url`, the cluster) is left out, and filters on it
match nothing but the empty value."""

import csv
import json
import uuid

from django.db.models import Case, CharField, Value, When
from django.db.models.functions import StrIndex, Substr
from django.http import HttpResponse, QueryDict, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.audit import AuditEvent
from studio.iam.models import AccessRule
from studio.iam.permissions import IsPlatformAdmin
from studio.listing import MAX_OFFSET, StudioFilterSet, int_query_param

METHODS = {"create": "POST", "update": "PUT", "delete": "DELETE"}
_TEXT = CharField()


def _entity_type():
    # "studio.project" -> "project": Run:ai names the kind of object, not our app
    return Substr("object_type", StrIndex("object_type", Value(".")) + 1, output_field=_TEXT)


def _subject_type():
    return Case(When(actor__isnull=True, then=Value("App")), When(actor__service_account__isnull=False,
                                                                  then=Value("App")),
                default=Value("User"), output_field=_TEXT)


def _http_method():
    return Case(*[When(action=action, then=Value(method)) for action, method in METHODS.items()], default=Value(""),
                output_field=_TEXT)


class AuditLogFilterSet(StudioFilterSet):
    """latest's AuditLogFilter and AuditLogSort fields over the trail."""

    class Meta:
        model = AuditEvent
        fields = []
        api_fields = {"timestamp": "at", "subject": "actor_name", "action": "action", "entity_name": "object_repr",
                      "entity_id": "object_id"}
        api_expressions = {"entity_type": _entity_type, "subject_type": _subject_type, "http_method": _http_method,
                           "result": lambda: Value("Succeeded", output_field=_TEXT),
                           **{name: (lambda: Value("", output_field=_TEXT))
                              for name in ("source_ip", "url", "cluster_name")}}
        default_sort = ["at"]


class _Range(serializers.Serializer):
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()


def _range(request, *, required: bool):
    data = {k: request.query_params[k] for k in ("start", "end") if request.query_params.get(k)}
    serializer = _Range(data=data, partial=not required)
    serializer.is_valid(raise_exception=True)
    values = serializer.validated_data
    if "start" in values and "end" in values and values["start"] > values["end"]:
        raise serializers.ValidationError({"end": ["Must not be before start."]})
    return values


def _events(request, *, required_range: bool):
    """The trail within start..end, filtered and sorted as the query says (a 400 naming what is wrong)."""
    span = _range(request, required=required_range)
    rows = AuditEvent.objects.select_related("actor__service_account")
    if "start" in span:
        rows = rows.filter(at__gte=span["start"])
    if "end" in span:
        rows = rows.filter(at__lte=span["end"])
    params = request.query_params.copy()
    if params.get("sortOrder") and not params.get("sortBy"):
        params["sortBy"] = "timestamp"
    filterset = AuditLogFilterSet(params, queryset=rows, request=request)
    if not filterset.is_valid():
        raise serializers.ValidationError(filterset.errors)
    return filterset.qs


def _subject_type_of(event: AuditEvent) -> str:
    if event.actor is None or hasattr(event.actor, "service_account"):
        return "App"
    return "User"


def audit_log(event: AuditEvent) -> dict:
    """latest's AuditLog of a row (its id as a UUID: Run:ai's are)."""
    return {"id": str(uuid.UUID(int=event.pk)), "timestamp": serializers.DateTimeField().to_representation(event.at),
            "tenant_id": str(AccessRule.TENANT_ID), "subject": event.actor_name,
            "subject_type": _subject_type_of(event), "action": event.action,
            "http_method": METHODS.get(event.action, ""), "entity_type": event.object_type.split(".")[-1],
            "entity_name": event.object_repr, "entity_id": event.object_id, "result": "Succeeded",
            **({"request_id": str(uuid.UUID(event.request_id))} if _is_uuid(event.request_id) else {})}


def _is_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except (ValueError, TypeError):
        return False
    return True


def audit_record_218(event: AuditEvent) -> dict:
    """2.18's AuditLogRecord: `body` holds the values the change wrote (masked when recorded)."""
    return {"id": event.pk, "tenantId": AccessRule.TENANT_ID,
            "happenedAt": serializers.DateTimeField().to_representation(event.at),
            "action": event.action.capitalize(), "version": "1", "entityId": event.object_id,
            "entityType": event.object_type.split(".")[-1], "entityName": event.object_repr,
            "sourceType": _subject_type_of(event), "sourceId": str(event.actor_id or ""),
            "sourceName": event.actor_name, "context": {"requestId": event.request_id} if event.request_id else {},
            "body": {name: pair[1] for name, pair in (event.changes or {}).items()
                     if isinstance(pair, list) and len(pair) == 2}}


_RANGE_PARAMETERS = [OpenApiParameter("start", OpenApiTypes.DATETIME, required=True),
                     OpenApiParameter("end", OpenApiTypes.DATETIME, required=True)]
_FILTER_PARAMETERS = [OpenApiParameter("filterBy", str, required=False, description="field<op>value, comma list"),
                      OpenApiParameter("numberOfSamples", int, required=False,
                                       description="The page's size, 0-1000 (default 20).")]
_LOG = {"type": "object", "required": ["tenant_id", "subject", "subject_type", "action", "result"],
        "properties": {name: {"type": "string"} for name in (
            "id", "timestamp", "tenant_id", "subject", "subject_type", "action", "http_method", "entity_type",
            "entity_name", "entity_id", "result", "request_id")}}
_LOGS = {"type": "object", "required": ["logs"], "properties": {
    "total": {"type": "integer"}, "next": {"type": "integer"}, "audit_logs": {"type": "array", "items": _LOG},
    "logs": {"type": "array", "items": _LOG}}}


class AuditLogView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=["AuditLogs"], operation_id="get_audit_logs", responses={200: _LOGS}, parameters=[
        *_RANGE_PARAMETERS, *_FILTER_PARAMETERS, OpenApiParameter("offset", int, required=False),
        OpenApiParameter("sortOrder", str, enum=["asc", "desc"], required=False),
        OpenApiParameter("sortBy", str, required=False)])
    def get(self, request):
        rows = _events(request, required_range=True)
        offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
        size = int_query_param(request, "numberOfSamples", 20, 0, 1000)
        total = rows.count()
        logs = [audit_log(e) for e in rows[offset:offset + size]] if size else []
        body = {"total": total, "audit_logs": logs, "logs": logs}  # the schema requires `logs`, runapy reads audit_logs
        if offset + size < total:
            body["next"] = offset + size
        return Response(body)


class AuditLogFileView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=["AuditLogs"], operation_id="download_audit_logs", parameters=[
        *_RANGE_PARAMETERS, *_FILTER_PARAMETERS,
        OpenApiParameter("file_type", str, enum=["CSV", "JSON"], required=False)],
        responses={(200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY)})
    def get(self, request):
        kind = request.query_params.get("file_type") or "CSV"
        if kind not in ("CSV", "JSON"):
            raise serializers.ValidationError({"file_type": ["One of CSV, JSON."]})
        int_query_param(request, "numberOfSamples", 20, 0, 1000)  # accepted; the file holds the whole range
        rows = _events(request, required_range=True)
        if kind == "JSON":
            response = HttpResponse(json.dumps([audit_log(e) for e in rows.iterator(chunk_size=2000)]),
                                    content_type="application/octet-stream")
        else:
            response = StreamingHttpResponse(_csv_lines(rows), content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="audit-logs.{kind.lower()}"'
        return response


CSV_COLUMNS = ["id", "timestamp", "subject", "subject_type", "action", "http_method", "entity_type", "entity_name",
               "entity_id", "result", "request_id"]


class _Echo:
    def write(self, value):
        return value


def _csv_lines(rows):
    writer = csv.DictWriter(_Echo(), fieldnames=CSV_COLUMNS, extrasaction="ignore")
    yield writer.writeheader()
    for event in rows.iterator(chunk_size=2000):
        yield writer.writerow(audit_log(event))


class Audit218View(APIView):
    """2.18's `GET /v1/k8s/audit`: an array of AuditLogRecord; `download=true` answers it as logs.json."""

    permission_classes = [IsPlatformAdmin]
    FILTERS = {"action": "action__iexact", "source_name": "actor_name", "entity_id": "object_id",
               "source_id": "actor_id"}

    @extend_schema(tags=["Audit"], operation_id="get_audit_logs_218", parameters=[
        OpenApiParameter("start", OpenApiTypes.DATETIME, required=False),
        OpenApiParameter("end", OpenApiTypes.DATETIME, required=False),
        *[OpenApiParameter(name, str, required=False) for name in (
            "cluster_uuid", "action", "source_type", "source_id", "source_name", "entity_type", "entity_id",
            "success", "download")],
        OpenApiParameter("limit", int, required=False), OpenApiParameter("offset", int, required=False)],
        responses={200: {"type": "array", "items": {"type": "object"}}})
    def get(self, request):
        params = request.query_params
        rows = _events(_Plain(request), required_range=False).order_by("-at", "-pk")
        for name, lookup in self.FILTERS.items():
            value = params.get(name)
            if value:
                if name == "source_id" and not value.isdigit():
                    return Response([])
                rows = rows.filter(**{lookup: value})
        if params.get("entity_type"):
            rows = rows.filter(object_type__iendswith="." + params["entity_type"])
        if params.get("source_type"):
            rows = rows.alias(kind=_subject_type()).filter(kind__iexact=params["source_type"])
        if params.get("cluster_uuid") or (params.get("success") or "").lower() == "false":
            rows = rows.none()  # the trail keeps no cluster, and only what succeeded
        offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
        limit = int_query_param(request, "limit", 50, 1, 500)
        records = [audit_record_218(e) for e in rows[offset:offset + limit]]
        headers = {"Content-Disposition": 'attachment; filename="logs.json"'} \
            if (params.get("download") or "").lower() == "true" else None
        return Response(records, headers=headers)


class _Plain:
    """A request whose query holds only start and end: 2.18's other parameters are not latest's filters."""

    def __init__(self, request):
        self.query_params = QueryDict(mutable=True)
        for name in ("start", "end"):
            if request.query_params.get(name):
                self.query_params[name] = request.query_params[name]


