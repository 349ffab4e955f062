"""`/api/v1/org-unit/projects/{projectId}/resources` and `/departments/{departmentId}/resources`: Run:ai's
per-node-pool quotas. PUT replaces the array, PATCH changes the entries of the pools it names; both answer the
whole array (200). A project's GPU totals become the sums over its pools.

The unit's row is read under its lock (and an `If-Match` naming an older ETag of the unit is a 412), so two
PATCHes of different pools at once both land: the second merges into what the first wrote."""

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from studio import api_schemas as schemas
from studio import services
from studio.clusters.models import NodePool
from studio.concurrency import current_etag, locked_if_match
from studio.iam.permissions import IsPlatformAdminOrReadOnly
from studio.org.models import Department, Project
from studio.org.permissions import ChangesProjectsOfManagedDepartments
from studio.org.quotas import resources_from


def _merged(current: list[dict], changes: list[dict]) -> list[dict]:
    by_pool = {r["nodePool"]["name"]: r for r in current}
    for change in changes:
        by_pool[change["nodePool"]["name"]] = {**by_pool.get(change["nodePool"]["name"], {}), **change}
    return list(by_pool.values())


class ProjectResourcesView(APIView):
    permission_classes = [ChangesProjectsOfManagedDepartments]  # a department's admins share out its quota

    def _write(self, request, projectId: int, *, partial: bool):
        project = get_object_or_404(Project.objects.visible_to(request.user), pk=projectId)
        self.check_object_permissions(request, project)
        pools = list(NodePool.objects.filter(cluster_id=project.cluster_id))
        resources = resources_from(request.data, pools)
        with transaction.atomic():
            project = locked_if_match(request, project)
            if partial:
                resources = _merged(project.node_pool_resources, resources)
            project = services.project_resources_set(project, actor=request.user, resources=resources)
        return Response(project.node_pool_resources, headers={"ETag": current_etag(project)})

    @extend_schema(tags=["Projects"], operation_id="update_project_resources", request={"application/json": schemas.RESOURCES}, responses={200: schemas.RESOURCES})
    def put(self, request, projectId: int):
        return self._write(request, projectId, partial=False)

    @extend_schema(tags=["Projects"], operation_id="patch_project_resources", request={"application/json": schemas.RESOURCES}, responses={200: schemas.RESOURCES})
    def patch(self, request, projectId: int):
        return self._write(request, projectId, partial=True)


class DepartmentResourcesView(APIView):
    permission_classes = [IsPlatformAdminOrReadOnly]

    def _write(self, request, departmentId: int, *, partial: bool):
        department = get_object_or_404(Department.objects.visible_to(request.user), pk=departmentId)
        resources = resources_from(request.data, list(NodePool.objects.all()))
        with transaction.atomic():
            department = locked_if_match(request, department)
            if partial:
                resources = _merged(department.node_pool_resources, resources)
            department = services.department_update(department, actor=request.user, node_pool_resources=resources)
        return Response(department.node_pool_resources, headers={"ETag": current_etag(department)})

    @extend_schema(tags=["Departments"], operation_id="update_department_resources", request={"application/json": schemas.RESOURCES},
                   responses={200: schemas.RESOURCES})
    def put(self, request, departmentId: int):
        return self._write(request, departmentId, partial=False)

    @extend_schema(tags=["Departments"], operation_id="patch_department_resources", request={"application/json": schemas.RESOURCES},
                   responses={200: schemas.RESOURCES})
    def patch(self, request, departmentId: int):
        return self._write(request, departmentId, partial=True)
