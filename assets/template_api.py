"""Run:ai's template APIs, on one model (assets/templates.py):

- tag Template (2.18 and latest): `/api/v1/asset/workload-template` GET, POST; `/{AssetId}` GET, PUT, DELETE —
  a template as an asset of assets, `{meta, spec: {assets, specificEnv}}`; create, update and delete answer 202;
- tag Workload templates (latest): `/api/v1/workload-templates` (every type, paged), `/count`,
  `/name-availability`, `/{templateId}`, and per type (`workspaces`, `trainings`, `distributed`, `inferences`)
  POST (202), GET list, `/{templateId}` GET, PUT (200), PATCH (200), DELETE (204).

Thin views: the caller's templates are `Asset.objects.visible_to(user)` (outside them, a 404); one service per
write. A list reads the templates (one query) and the assets they name (one or two more), whatever its length."""

import re

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from assets import selectors, template_selectors, templates
from assets.api import ACCEPTED
from assets.api_schemas import ACCEPTED as ACCEPTED_SCHEMA
from assets.api_schemas import CREATE_META, META, USED_BY
from assets.composition import specific_part
from assets.models import Asset, Scope
from assets.selectors import WORKLOAD_TYPES, uses_of
from studio.errors import Conflict
from studio.ids import parse_id
from studio.models import Project

_S, _O = {"type": "string"}, {"type": "object"}
_REF = {"type": "object", "required": ["id", "name"], "properties": {"id": _S, "name": _S}}
ASSET_TEMPLATE = {"type": "object", "required": ["meta", "spec"], "properties": {
    "meta": META, "usedBy": USED_BY, "spec": {"type": "object", "required": ["assets"], "properties": {
        "assets": {"type": "object", "required": ["environment"], "properties": {
            "environment": {**_REF, "properties": {**_REF["properties"], "toolTypes": {"type": "array",
                                                                                       "items": _S}}},
            "compute": {**_REF, "nullable": True},
            "datasources": {"type": "array", "items": {**_REF, "properties": {
                **_REF["properties"], "kind": _S, "overrides": {"type": "object", "nullable": True}}}},
            "workloadVolumes": {"type": "array", "items": _S}}},
        "specificEnv": {"type": "object", "nullable": True}}}}}
ASSET_IDS = {"type": "object", "properties": {
    "environment": {**_S, "format": "uuid"}, "compute": {**_S, "format": "uuid", "nullable": True},
    "datasources": {"type": "array", "items": {"type": "object", "required": ["id", "kind"], "properties": {
        "id": {**_S, "format": "uuid"}, "kind": _S, "overrides": {"type": "object", "nullable": True}}}}}}
ASSET_TEMPLATE_REQUEST = {"type": "object", "required": ["meta", "spec"], "properties": {
    "meta": CREATE_META, "spec": {"type": "object", "required": ["assets"], "properties": {
        "assets": {**ASSET_IDS, "required": ["environment"]}, "specificEnv": {"type": "object", "nullable": True}}}}}
TEMPLATE_META = {"type": "object", "required": ["id", "name", "scopeType", "scopeId", "createdBy", "createdAt",
                                                "workloadType"], "properties": {
    "id": {**_S, "format": "uuid"}, "name": _S, "description": {**_S, "nullable": True},
    "workloadType": {"type": "string", "enum": list(templates.TYPES.values())},
    "scopeType": {"type": "string", "enum": list(Scope.values)}, "scopeId": _S,
    "clusterId": {**_S, "nullable": True}, "departmentId": {**_S, "nullable": True},
    "projectId": {"type": "integer", "nullable": True}, "createdBy": _S,
    "createdAt": {**_S, "format": "date-time"}, "updatedBy": {**_S, "nullable": True},
    "updatedAt": {**_S, "format": "date-time", "nullable": True}}}
TYPED_TEMPLATE = {"type": "object", "required": ["meta"], "properties": {
    "meta": TEMPLATE_META, "spec": _O, "assets": {**ASSET_IDS, "nullable": True},
    "runnable": {"type": "object", "properties": {"isRunnable": {"type": "boolean"},
                                                  "issue": {**_S, "nullable": True}}},
    "combinedSpec": _O, "masterSpecSameAsWorker": {"type": "boolean", "nullable": True},
    "master": {"type": "object", "nullable": True},
    "complianceIssues": {"type": "array", "items": {"type": "object", "properties": {"field": _S, "details": _S}}}}}
TYPED_REQUEST = {"type": "object", "required": ["meta"], "properties": {
    "meta": {"type": "object", "required": ["name", "scopeType"], "properties": {
        "name": _S, "description": {**_S, "nullable": True}, "scopeType": {"type": "string", "enum": Scope.values},
        "scopeId": {**_S, "nullable": True}}},
    "spec": _O, "assets": {**ASSET_IDS, "nullable": True}}}
TYPED_UPDATE = {"type": "object", "required": ["meta"], "properties": {
    "meta": {"type": "object", "properties": {"name": _S, "description": {**_S, "nullable": True}}},
    "spec": _O, "assets": {**ASSET_IDS, "nullable": True},
    "fieldsToClear": {"type": "array", "items": _S}}}
PAGE = {"type": "object", "properties": {"limit": {"type": "number"}, "offset": {"type": "number"},
                                         "nextOffset": {"type": "number"}}}
TYPED_LIST = {"type": "object", "properties": {"entries": {"type": "array", "items": TYPED_TEMPLATE},
                                               "pagination": PAGE}}
COUNT = {"type": "object", "required": ["count"], "properties": {"count": {"type": "integer"}}}
SORTS = ("name", "workloadType", "runnable", "scopeType", "clusterId", "projectId", "departmentId", "createdAt",
         "updatedAt", "createdBy", "updatedBy")
FILTER = re.compile(r"^(" + "|".join(SORTS) + r")(==|!=|<=|>=|=@|!@|=\^|=\$)(.+)$")
PAGE_PARAMETERS = [
    OpenApiParameter("offset", OpenApiTypes.INT), OpenApiParameter("limit", OpenApiTypes.INT),
    OpenApiParameter("sortOrder", OpenApiTypes.STR, enum=["asc", "desc"]),
    OpenApiParameter("sortBy", OpenApiTypes.STR, enum=list(SORTS)),
    OpenApiParameter("filterBy", OpenApiTypes.STR, many=True,
                     description="field-name operator value: ==, !=, <=, >=, =@ (contains), !@, =^, =$."),
    OpenApiParameter("search", OpenApiTypes.STR), OpenApiParameter("complyToProject", OpenApiTypes.INT),
    OpenApiParameter("complyToWorkloadType", OpenApiTypes.STR, enum=list(WORKLOAD_TYPES)),
    OpenApiParameter("complyToReplicaType", OpenApiTypes.STR, enum=["Worker", "Master"]),
]
COUNT_PARAMETERS = [p for p in PAGE_PARAMETERS if p.name in ("filterBy", "search")]
NAME_PARAMETERS = [OpenApiParameter("templateName", OpenApiTypes.STR, required=True),
                   OpenApiParameter("scopeType", OpenApiTypes.STR, required=True, enum=list(Scope.values)),
                   OpenApiParameter("scopeId", OpenApiTypes.STR)]
ASSET_LIST_PARAMETERS = [OpenApiParameter(name, OpenApiTypes.STR) for name in (
    "name", "scope", "projectId", "departmentId", "clusterId", "distributedFramework", "isDistributed",
    "isTraining", "isWorkspace", "usageInfo")]
PLURALS = {"workspaces": "workspace", "trainings": "training", "distributed": "distributed",
           "inferences": "inference"}


# -- answers -----------------------------------------------------------------------------------------------------

def _ref(asset: Asset | None, asset_id) -> dict:
    return {"id": str(asset_id), "name": asset.name if asset else str(asset_id)}


def asset_template_answer(template: Asset, found: dict, uses=None) -> dict:
    """2.18's WorkloadTemplate: the asset's meta and its assets by id and name."""
    ids = template.spec.get("assets") or {}
    environment = found.get(str(ids.get("environment")))
    tools = sorted({(c.get("internalToolInfo") or c.get("externalToolInfo") or {}).get("toolType")
                    for c in (environment.spec.get("connections") or ())} - {None}) if environment else []
    assets = {"environment": {**_ref(environment, ids.get("environment")), "toolTypes": tools},
              "compute": _ref(found.get(str(ids["compute"])), ids["compute"]) if ids.get("compute") else None,
              "datasources": [{**_ref(found.get(str(s["id"])), s["id"]), "kind": s["kind"],
                               **({"overrides": s["overrides"]} if s.get("overrides") else {})}
                              for s in ids.get("datasources") or ()]}
    answer = {"meta": selectors.meta(template), "spec": {"assets": assets,
                                                        "specificEnv": template.spec.get("specificEnv")}}
    if uses is not None:
        answer["usedBy"] = selectors.used_by(uses)
    return answer


def typed_answer(template: Asset, found: dict, *, comply: Project | None = None, asked: bool = False) -> dict:
    """latest's <Type>Template (and SupersetTemplate): its meta, own spec, assets, and the spec combined."""
    kind = template.spec.get("workloadType") or "workspace"
    meta = selectors.meta(template)
    answer_meta = {"id": meta["id"], "name": template.name, "description": template.description or None,
                   "workloadType": templates.TYPES[kind], "scopeType": template.scope,
                   "scopeId": template_selectors.scope_id(template), "clusterId": meta["clusterId"],
                   "departmentId": meta["departmentId"], "projectId": template.project_id,
                   "createdBy": meta["createdBy"], "createdAt": meta["createdAt"], "updatedBy": meta["updatedBy"],
                   "updatedAt": meta["updatedAt"]}
    made = template_selectors.composed(template, kind, found)
    own = template.spec.get("spec") or specific_part(template.spec.get("specificEnv"), kind)
    answer = {"meta": answer_meta, "spec": own, "assets": template.spec.get("assets"),
              "runnable": {"isRunnable": made.issue is None, "issue": made.issue}, "combinedSpec": made.spec}
    if kind == "distributed":
        answer["masterSpecSameAsWorker"] = template.spec.get("masterSpecSameAsWorker")
        answer["master"] = template.spec.get("master")
    if asked:
        issues = []
        if comply is None or not template_selectors.reaches_project(template, comply):
            issues.append({"field": "meta.scopeId", "details": "The template is not available to the project."})
        answer["complianceIssues"] = issues
    return answer


# -- list parameters ---------------------------------------------------------------------------------------------

def _value(answer: dict, name: str):
    if name == "runnable":
        return str(answer["runnable"]["isRunnable"]).lower()
    value = answer["meta"].get(name)
    return "" if value is None else str(value)


def _matches(value: str, op: str, wanted: str) -> bool:
    low, want = value.lower(), wanted.lower()
    return {"==": low == want, "!=": low != want, "<=": value <= wanted, ">=": value >= wanted,
            "=@": want in low, "!@": want not in low, "=^": low.startswith(want), "=$": low.endswith(want)}[op]


def _page_query(request, *, paged: bool = True) -> dict:
    params, problems = request.query_params, {}
    filters = []
    for item in params.getlist("filterBy"):
        match = FILTER.match(item)
        if match is None:
            problems.setdefault("filterBy", []).append(f"{item!r} is not field-name operator value (fields: "
                                                       f"{', '.join(SORTS)}).")
        else:
            filters.append(match.groups())
    query = {"filters": filters, "search": params.get("search") or ""}
    if paged:
        offset, limit = params.get("offset"), params.get("limit")
        if offset not in (None, "") and parse_id(offset) is None:
            problems["offset"] = ["Must be a non-negative integer."]
        if limit not in (None, "") and (parse_id(limit) is None or not 1 <= parse_id(limit) <= 500):
            problems["limit"] = ["Must be an integer from 1 to 500."]
        if params.get("sortOrder") not in (None, "", "asc", "desc"):
            problems["sortOrder"] = ["Must be asc or desc."]
        if params.get("sortBy") not in (None, "", *SORTS):
            problems["sortBy"] = [f"Must be one of {', '.join(SORTS)}."]
        if params.get("complyToProject") and parse_id(params["complyToProject"]) is None:
            problems["complyToProject"] = ["Must be an integer id."]
        if params.get("complyToWorkloadType") not in (None, "", *WORKLOAD_TYPES):
            problems["complyToWorkloadType"] = [f"Must be one of {', '.join(WORKLOAD_TYPES)}."]
        if params.get("complyToReplicaType") not in (None, "", "Worker", "Master"):
            problems["complyToReplicaType"] = ["Must be Worker or Master."]
        query.update(offset=parse_id(offset) if offset else 0, limit=parse_id(limit) if limit else 50,
                     order=params.get("sortOrder") or "asc", sort=params.get("sortBy") or "name")
        if params.get("complyToProject"):
            query["comply"] = Project.objects.visible_to(request.user).filter(
                pk=parse_id(params["complyToProject"])).first()
            query["asked"] = True
    if problems:
        raise ValidationError(problems)
    return query


def _listed(user, query: dict, workload_type: str | None) -> list[dict]:
    rows = list(template_selectors.templates_visible(user, workload_type=workload_type))
    found = template_selectors.referenced_assets(rows)
    answers = [typed_answer(t, found, comply=query.get("comply"), asked=query.get("asked", False)) for t in rows]
    if query["search"]:
        answers = [a for a in answers if query["search"].lower() in a["meta"]["name"].lower()]
    for name, op, wanted in query["filters"]:
        answers = [a for a in answers if _matches(_value(a, name), op, wanted)]
    return answers


def _page(user, request, workload_type: str | None) -> dict:
    query = _page_query(request)
    answers = _listed(user, query, workload_type)
    answers.sort(key=lambda a: _value(a, query["sort"]), reverse=query["order"] == "desc")
    start, limit = query["offset"], query["limit"]
    page = answers[start:start + limit]
    pagination = {"offset": start, "limit": len(page)}
    if start + limit < len(answers):
        pagination["nextOffset"] = start + limit
    return {"entries": page, "pagination": pagination}


def _one(request, template_id, workload_type: str | None = None, *, asset_api: bool = False) -> Asset:
    template = template_selectors.template_visible(request.user, template_id, workload_type=workload_type)
    if template is None or (asset_api and not (template.spec.get("assets") or {}).get("environment")):
        raise Http404
    return template


def _answer_one(template: Asset) -> dict:
    return typed_answer(template, template_selectors.referenced_assets([template]))


# -- views -------------------------------------------------------------------------------------------------------

def _flag(request, name: str) -> bool:
    value = request.query_params.get(name)
    if value not in (None, "", "true", "false"):
        raise ValidationError({name: ["Must be true or false."]})
    return value == "true"


class AssetTemplateListView(APIView):
    @extend_schema(operation_id="list_templates", tags=["Template"], parameters=ASSET_LIST_PARAMETERS,
                   responses={200: {"type": "object", "required": ["entries"], "properties": {
                       "entries": {"type": "array", "items": ASSET_TEMPLATE}}}})
    def get(self, request):
        params = request.query_params
        usage = _flag(request, "usageInfo")
        wanted = [t for t in ("training", "workspace", "distributed") if _flag(request, f"is{t.title()}")]
        if params.get("scope") and params["scope"] not in Scope.values:
            raise ValidationError({"scope": [f"Must be one of {', '.join(Scope.values)}."]})
        if params.get("projectId") and parse_id(params["projectId"]) is None:
            raise ValidationError({"projectId": ["Must be an integer id."]})
        rows = [t for t in template_selectors.templates_visible(request.user)
                if (t.spec.get("assets") or {}).get("environment")]
        if params.get("name"):
            rows = [t for t in rows if t.name == params["name"]]
        if params.get("scope"):
            rows = [t for t in rows if t.scope == params["scope"]]
        if params.get("projectId"):
            project = Project.objects.visible_to(request.user).filter(pk=parse_id(params["projectId"])).first()
            rows = [t for t in rows if project is not None and template_selectors.reaches_project(t, project)]
        rows = [t for t in rows if all(selectors.supports(t, w) for w in wanted)]
        found = template_selectors.referenced_assets(rows)
        uses = uses_of(rows) if usage else None
        return Response({"entries": [asset_template_answer(t, found, uses.get(t.pk, []) if usage else None)
                                     for t in rows]})

    @extend_schema(operation_id="create_template", tags=["Template"],
                   request={"application/json": ASSET_TEMPLATE_REQUEST}, responses={202: ASSET_TEMPLATE})
    def post(self, request):
        template = templates.template_create(actor=request.user, body=request.data)
        return Response(asset_template_answer(template, template_selectors.referenced_assets([template])), status=202)


class AssetTemplateItemView(APIView):
    @extend_schema(operation_id="get_template_by_id", tags=["Template"], responses={200: ASSET_TEMPLATE})
    def get(self, request, AssetId):  # noqa: N803 — Run:ai's name of the path parameter
        template = _one(request, AssetId, asset_api=True)
        uses = uses_of([template]).get(template.pk, []) if _flag(request, "usageInfo") else None
        return Response(asset_template_answer(template, template_selectors.referenced_assets([template]), uses))

    @extend_schema(operation_id="update_template", tags=["Template"],
                   request={"application/json": ASSET_TEMPLATE_REQUEST}, responses={202: ASSET_TEMPLATE})
    def put(self, request, AssetId):  # noqa: N803
        template = templates.template_update(actor=request.user, template=_one(request, AssetId, asset_api=True),
                                             body=request.data)
        return Response(asset_template_answer(template, template_selectors.referenced_assets([template])), status=202)

    @extend_schema(operation_id="delete_template_by_id", tags=["Template"], responses={202: ACCEPTED_SCHEMA})
    def delete(self, request, AssetId):  # noqa: N803
        templates.template_delete(actor=request.user, template=_one(request, AssetId, asset_api=True))
        return Response(ACCEPTED, status=202)


class TemplatesView(APIView):
    @extend_schema(operation_id="list_templates1", tags=["Workload templates"], parameters=PAGE_PARAMETERS,
                   responses={200: TYPED_LIST})
    def get(self, request):
        return Response(_page(request.user, request, None))


class TemplateCountView(APIView):
    @extend_schema(operation_id="count_templates", tags=["Workload templates"], parameters=COUNT_PARAMETERS,
                   responses={200: COUNT})
    def get(self, request):
        return Response({"count": len(_listed(request.user, _page_query(request, paged=False), None))})


class TemplateNameView(APIView):
    @extend_schema(operation_id="template_name_availability", tags=["Workload templates"],
                   parameters=NAME_PARAMETERS, responses={204: None})
    def get(self, request):
        params, problems = request.query_params, {}
        if not params.get("templateName"):
            problems["templateName"] = ["This parameter is required."]
        if params.get("scopeType") not in Scope.values:
            problems["scopeType"] = [f"This parameter is required: one of {', '.join(Scope.values)}."]
        if problems:
            raise ValidationError(problems)
        if template_selectors.name_taken(user=request.user, name=params["templateName"], scope=params["scopeType"],
                                scope_ident=params.get("scopeId")):
            raise Conflict(f"A template named {params['templateName']} already exists in this scope.")
        return Response(status=204)


class TemplateView(APIView):
    @extend_schema(operation_id="get_template_by_id1", tags=["Workload templates"], responses={200: TYPED_TEMPLATE})
    def get(self, request, templateId):  # noqa: N803
        return Response(_answer_one(_one(request, templateId)))


class TypedListView(APIView):
    workload_type: str

    def get(self, request):
        return Response(_page(request.user, request, self.workload_type))

    def post(self, request):
        template = templates.template_create(actor=request.user, body=request.data, workload_type=self.workload_type)
        return Response(_answer_one(template), status=202)


class TypedItemView(APIView):
    workload_type: str

    def get(self, request, templateId):  # noqa: N803
        return Response(_answer_one(_one(request, templateId, self.workload_type)))

    def put(self, request, templateId):  # noqa: N803
        template = templates.template_update(actor=request.user, body=request.data, workload_type=self.workload_type,
                                             template=_one(request, templateId, self.workload_type))
        return Response(_answer_one(template))

    def patch(self, request, templateId):  # noqa: N803
        template = templates.template_update(actor=request.user, body=request.data, workload_type=self.workload_type,
                                             template=_one(request, templateId, self.workload_type), patch=True)
        return Response(_answer_one(template))

    def delete(self, request, templateId):  # noqa: N803
        templates.template_delete(actor=request.user, template=_one(request, templateId, self.workload_type))
        return Response(status=204)


def _own(method):
    def call(self, *args, **kwargs):
        return method(self, *args, **kwargs)

    call.__name__ = method.__name__
    return call


def typed_views(plural: str):
    """The list and item views of one workload type, documented with Run:ai's operation ids."""
    kind = PLURALS[plural]
    tag, noun = ["Workload templates"], f"{kind}_template"
    listing = type(f"{kind.title()}TemplateListView", (TypedListView,), {"workload_type": kind})
    listing.get = extend_schema(operation_id=f"list_{noun}s", tags=tag, parameters=PAGE_PARAMETERS,
                                responses={200: TYPED_LIST})(_own(listing.get))
    listing.post = extend_schema(operation_id=f"create_{noun}", tags=tag, request={"application/json": TYPED_REQUEST},
                                 responses={202: TYPED_TEMPLATE})(_own(listing.post))
    item = type(f"{kind.title()}TemplateView", (TypedItemView,), {"workload_type": kind})
    item.get = extend_schema(operation_id=f"get_{noun}", tags=tag, responses={200: TYPED_TEMPLATE})(_own(item.get))
    item.delete = extend_schema(operation_id=f"delete_{noun}", tags=tag, responses={204: None})(_own(item.delete))
    if kind == "inference":  # Run:ai latest changes an inference template by making it anew
        item.http_method_names = ["get", "delete", "head", "options"]
    else:
        item.put = extend_schema(operation_id=f"update_{noun}", tags=tag, request={"application/json": TYPED_UPDATE},
                                 responses={200: TYPED_TEMPLATE})(_own(item.put))
        item.patch = extend_schema(operation_id=f"patch_{noun}", tags=tag, request={"application/json": TYPED_UPDATE},
                                   responses={200: TYPED_TEMPLATE})(_own(item.patch))
    return listing.as_view(), item.as_view()
