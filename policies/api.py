"""Run:ai's Policy API (tag Policy of runai-openapi-2.18.json): `GET /api/v2/policy` and
`GET/PUT/PATCH/DELETE /api/v2/policy/{trainings,workspaces,inferences}`. Thin views: parse, authorize, call a
service or selector, render. Platform admins read and write every policy; the members of a project read its
project-scope policy (the effective one is what their submissions are held to); anyone else gets a 403, or a
404 for a project they cannot see."""

from django.core.exceptions import PermissionDenied
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from policies import selectors, services
from policies.models import Policy
from studio.ids import is_id, parse_id
from studio.models import Project, is_platform_admin

WORKLOAD_TYPES = {"Training": "trainings", "Workspace": "workspaces", "Inference": "inferences"}
SCOPE_PARAMETERS = [
    OpenApiParameter("scope", OpenApiTypes.STR, enum=["tenant", "department", "project"], required=True),
    OpenApiParameter("departmentId", OpenApiTypes.STR),
    OpenApiParameter("projectId", OpenApiTypes.STR),
    OpenApiParameter("clusterId", OpenApiTypes.UUID),
]
VALIDATE_ONLY = [OpenApiParameter("validateOnly", OpenApiTypes.BOOL)]
READERS_ONLY = "Only platform admins, and the members of a project for its project policy, may read policies."


def _flag(request, name: str) -> bool:
    value = request.query_params.get(name, "false").lower()
    if value not in ("true", "false"):
        raise ValidationError({name: ["Must be true or false."]})
    return value == "true"


def _readable_unit(request) -> selectors.Unit:
    params = request.query_params
    if not is_platform_admin(request.user):
        if params.get("scope") != "project":
            raise PermissionDenied(READERS_ONLY)
        project_id = params.get("projectId") or ""
        if not (is_id(project_id) and Project.objects.visible_to(request.user).filter(pk=parse_id(project_id)).exists()):
            raise Http404
    return services.unit_from(params, prefix="")


class PolicyListView(APIView):
    """`GET /api/v2/policy`: the stored policies (and, with includeFallbackPolicies=true, the built-in one)."""

    @extend_schema(operation_id="list_policies", tags=["Policy"], parameters=[
        OpenApiParameter("workloadType", OpenApiTypes.STR, enum=["Workspace", "Training", "Distributed",
                                                                 "Inference"]),
        OpenApiParameter("scope", OpenApiTypes.STR, enum=["tenant", "cluster", "department", "project"]),
        *SCOPE_PARAMETERS[1:], OpenApiParameter("includeFallbackPolicies", OpenApiTypes.BOOL)],
        responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        if not is_platform_admin(request.user):
            raise PermissionDenied(READERS_ONLY)
        params = request.query_params
        rows = Policy.objects.select_related("project")
        types = list(WORKLOAD_TYPES.values())
        if params.get("workloadType"):
            if params["workloadType"] not in (*WORKLOAD_TYPES, "Distributed"):
                raise ValidationError({"workloadType": ["Must be one of Workspace, Training, Distributed, "
                                                        "Inference."]})
            types = [WORKLOAD_TYPES[params["workloadType"]]] if params["workloadType"] in WORKLOAD_TYPES else []
            rows = rows.filter(policy_type__in=types)
        if params.get("scope"):
            if params["scope"] not in ("tenant", "cluster", "department", "project"):
                raise ValidationError({"scope": ["Must be one of tenant, cluster, department, project."]})
            rows = rows.filter(scope=params["scope"])
        for name, column in (("departmentId", "department_id"), ("projectId", "project_id")):
            if params.get(name):
                if not is_id(params[name]):
                    raise ValidationError({name: ["Must be an integer id."]})
                rows = rows.filter(**{column: parse_id(params[name])})
        if params.get("clusterId"):
            rows = rows.filter(project__cluster_id=services.cluster_id(params["clusterId"]))
        entries = selectors.list_entries(rows)
        if _flag(request, "includeFallbackPolicies") and params.get("scope") in (None, "", "tenant") and not any(
                params.get(name) for name in ("departmentId", "projectId", "clusterId")):
            entries = selectors.fallback_entries(types) + entries
        return Response({"policies": entries})


class PolicyTypeView(APIView):
    """One policy type of one org unit: its own policy and the effective one."""

    policy_type: str

    def _run(self, request, write):
        return Response(write(actor=request.user, policy_type=self.policy_type, body=request.data,
                              validate_only=_flag(request, "validateOnly")))

    @extend_schema(tags=["Policy"], parameters=SCOPE_PARAMETERS, responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        unit = _readable_unit(request)
        return Response(selectors.policy_view(self.policy_type, unit, selectors.stored_chain(self.policy_type, unit)))

    @extend_schema(tags=["Policy"], parameters=VALIDATE_ONLY, request=OpenApiTypes.OBJECT,
                   responses={200: OpenApiTypes.OBJECT})
    def put(self, request):
        return self._run(request, services.policy_overwrite)

    @extend_schema(tags=["Policy"], parameters=VALIDATE_ONLY, request=OpenApiTypes.OBJECT,
                   responses={200: OpenApiTypes.OBJECT})
    def patch(self, request):
        return self._run(request, services.policy_change)

    @extend_schema(tags=["Policy"], parameters=SCOPE_PARAMETERS, responses={204: None})
    def delete(self, request):
        if not is_platform_admin(request.user):
            raise PermissionDenied(services.WRITERS_ONLY)
        services.policy_delete(actor=request.user, policy_type=self.policy_type,
                               unit=services.unit_from(request.query_params, prefix=""))
        return Response(status=204)


def type_view(policy_type: str):
    return type(f"{policy_type.title()}PolicyView", (PolicyTypeView,), {"policy_type": policy_type}).as_view()
