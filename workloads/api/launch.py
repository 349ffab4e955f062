"""`POST /api/v1/service-profiles/{id}/launch`: a workload from a service profile. It answers 201
with the created workload in the body of `GET /api/v1/workloads/{workloadId}`; `?dryRun=true` answers the preview.

The route is the service profiles' own (the same path, name, operation and schema as their other actions): the
viewset is profiles' ServiceProfileViewSet with the launch added, and only its launch route is served here
(workloads.api.urls), so that profiles never imports workloads."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, status
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from profiles.api import ServiceProfileViewSet
from profiles.models import ServiceProfile
from profiles.serializers import LaunchSerializer
from studio.models import Project
from studio.urls_router import Router
from workloads.api.preview_schema import DRY_RUN_PARAMETER, PreviewSerializer, dry_run_requested
from workloads.api.serializers import WorkloadSerializer
from workloads.launch import launch


# No docstring: the operation's description is the service profiles' viewset's, as before the move.
class ServiceProfileLaunchViewSet(ServiceProfileViewSet):
    @extend_schema(request=LaunchSerializer, responses={201: WorkloadSerializer, 200: PreviewSerializer},
                   parameters=[DRY_RUN_PARAMETER])
    @action(detail=True, methods=["post"], filterset_class=None, permission_classes=[permissions.IsAuthenticated])
    def launch(self, request, pk=None):
        profile = self.get_object()
        serializer = LaunchSerializer(data=request.data)
        if not serializer.is_valid():  # the body's problems (its name…) and its inputs', at once
            raise ValidationError({**serializer.errors, **self._input_errors(profile, request)})
        data = serializer.validated_data
        project = (Project.objects.visible_to(request.user).select_related("cluster", "department")
                   .filter(pk=data["projectId"]).first())
        # Not shared with that project (or a project the caller is not in): as if the profile did not exist.
        if project is None or not ServiceProfile.objects.for_project(project).filter(pk=profile.pk).exists():
            raise Http404
        if dry_run_requested(request):
            return Response(launch.profile_launch_preview(profile=profile, project=project, user=request.user,
                                                          name=data["name"], inputs=dict(data["inputs"])))
        workload = launch.profile_launch(profile=profile, project=project, user=request.user, name=data["name"],
                                         inputs=dict(data["inputs"]))
        workload.profile_current_revision = profile.revision  # as GET's annotation reads it: not outdated
        return Response(WorkloadSerializer(workload).data, status=status.HTTP_201_CREATED)


    @staticmethod
    def _input_errors(profile, request) -> dict:
        body = request.data if isinstance(request.data, dict) else {}
        project_id = body.get("projectId")
        if not isinstance(project_id, int) or isinstance(project_id, bool):
            return {}
        project = (Project.objects.visible_to(request.user).select_related("cluster", "department")
                   .filter(pk=project_id).first())
        if project is None or not ServiceProfile.objects.for_project(project).filter(pk=profile.pk).exists():
            return {}
        return launch.input_errors(profile=profile, project=project, user=request.user, inputs=body.get("inputs"))


def launch_urls() -> list:
    """The launch route alone, as the service profiles' router names and shapes it (`service-profile-launch`)."""
    router = Router()
    router.register("service-profiles", ServiceProfileLaunchViewSet, basename="service-profile")
    return [url for url in router.urls if url.name == "service-profile-launch"]
