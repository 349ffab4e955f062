"""The Run:ai-compatible workloads API (CONTRACT §3). Thin views: parse, authorize, call a service, render."""

from django.db.models import Count
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from profiles.selectors import workload_outputs
from profiles.serializers import OutputsSerializer
from workloads import services
from workloads.filtersets import WorkloadFilterSet
from workloads.metric_types import INFERENCE_TYPES, WORKLOAD_TYPES
from workloads.metrics import MetricsQuerySerializer, measurements
from workloads.models import Pod, Workload
from workloads.serializers import (
    AcceptedSerializer,
    CountSerializer,
    MeasurementsSerializer,
    PodSerializer,
    WorkloadCreatedSerializer,
    WorkloadEventSerializer,
    WorkloadSerializer,
)
from workloads.specs import validate_workload_request

UUID_REGEX = "[0-9a-fA-F-]{36}"
LIST_FIELDS = (
    "id", "name", "requested_name", "kind", "project_id", "project__name", "department_id", "cluster_id",
    "actual_phase", "phase_message", "desired_phase", "created_at", "updated_at", "phase_updated_at", "started_at",
    "completed_at", "deleted_at", "created_by_name", "running_pods", "requested_pods", "gpu_request", "source",
    "profile_id", "profile_name", "profile_revision",
)
ACCEPTED = {"code": 202, "message": "Request has been accepted."}
METRICS_PARAMETERS = [
    OpenApiParameter("metricType", OpenApiTypes.STR, many=True, required=True),
    OpenApiParameter("start", OpenApiTypes.DATETIME, required=True),
    OpenApiParameter("end", OpenApiTypes.DATETIME, required=True),
    OpenApiParameter("numberOfSamples", OpenApiTypes.INT, required=False),
]


def _metrics_response(request, workload, allowed_types, pod_name=None):
    query = MetricsQuerySerializer(data=request.query_params, allowed_types=allowed_types)
    query.is_valid(raise_exception=True)
    data = query.validated_data
    body, partial = measurements(workload, types=data["metricType"], start=data["start"], end=data["end"],
                                 samples=data["numberOfSamples"], pod_name=pod_name)
    return Response({"measurements": body}, status=207 if partial else 200)


class KindViewSet(mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Create, get and delete of one kind (trainings, workspaces, inferences) in the seeds' shape."""

    kind: str
    serializer_class = WorkloadCreatedSerializer
    lookup_url_kwarg = "workloadId"
    lookup_value_regex = UUID_REGEX
    filterset_class = None
    pagination_class = None

    def get_queryset(self):
        return Workload.objects.visible_to(self.request.user).live().filter(kind=self.kind).select_related("project")

    @extend_schema(request=OpenApiTypes.OBJECT, responses={200: WorkloadCreatedSerializer})
    def create(self, request):
        body = validate_workload_request(self.kind, request.data)
        workload = services.workload_submit(kind=self.kind, request=body, user=request.user)
        return Response(WorkloadCreatedSerializer(workload).data, status=status.HTTP_200_OK)

    @extend_schema(responses={204: None})
    def destroy(self, request, workloadId=None):
        services.workload_delete(workload=self.get_object(), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class SuspendableMixin:
    @extend_schema(request=None, responses={202: AcceptedSerializer})
    @action(detail=True, methods=["post"])
    def suspend(self, request, workloadId=None):
        services.workload_suspend(workload=self.get_object(), user=request.user)
        return Response(ACCEPTED, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: AcceptedSerializer})
    @action(detail=True, methods=["post"])
    def resume(self, request, workloadId=None):
        services.workload_resume(workload=self.get_object(), user=request.user)
        return Response(ACCEPTED, status=status.HTTP_202_ACCEPTED)


class TrainingViewSet(SuspendableMixin, KindViewSet):
    kind = Workload.Kind.TRAINING


class WorkspaceViewSet(SuspendableMixin, KindViewSet):
    kind = Workload.Kind.WORKSPACE


class InferenceViewSet(SuspendableMixin, KindViewSet):
    """Inferences cannot be suspended: the routes exist so that the answer is a 400 that says why."""

    kind = Workload.Kind.INFERENCE

    @extend_schema(parameters=METRICS_PARAMETERS, responses={200: MeasurementsSerializer, 207: MeasurementsSerializer})
    @action(detail=True, methods=["get"])
    def metrics(self, request, workloadId=None):
        return _metrics_response(request, self.get_object(), INFERENCE_TYPES)

    @extend_schema(parameters=METRICS_PARAMETERS, responses={200: MeasurementsSerializer, 207: MeasurementsSerializer})
    @action(detail=True, methods=["get"], url_path=r"pods/(?P<podId>[^/]+)/metrics")
    def pod_metrics(self, request, workloadId=None, podId=None):
        workload = self.get_object()
        pod = get_object_or_404(Pod, workload=workload, uid=podId)
        return _metrics_response(request, workload, INFERENCE_TYPES, pod_name=pod.name)


class WorkloadViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Every kind: list (with deleted=true for deleted ones), count, get, pods, events, metrics."""

    serializer_class = WorkloadSerializer
    filterset_class = WorkloadFilterSet
    results_key = "workloads"
    lookup_url_kwarg = "workloadId"
    lookup_value_regex = UUID_REGEX

    def get_queryset(self):
        queryset = Workload.objects.visible_to(self.request.user).select_related("project")
        if self.action in ("list", "count"):
            queryset = queryset.only(*LIST_FIELDS)  # what the list shows, not the big JSON columns
        return queryset

    def get_object(self):
        # A single workload is found whether live or deleted only through the list's `deleted=true`.
        obj = get_object_or_404(self.get_queryset().live(), pk=self.kwargs["workloadId"])
        self.check_object_permissions(self.request, obj)
        return obj

    @extend_schema(responses=CountSerializer)
    @action(detail=False, methods=["get"])
    def count(self, request):
        queryset = self.filter_queryset(self.get_queryset()).order_by()
        return Response({"count": queryset.aggregate(n=Count("pk"))["n"]})

    @extend_schema(responses=inline_serializer("PodList", {"pods": PodSerializer(many=True)}))
    @action(detail=True, methods=["get"], filterset_class=None)
    def pods(self, request, workloadId=None):
        pods = self.get_object().pods.all()
        return Response({"pods": PodSerializer(pods, many=True).data})

    @extend_schema(responses=WorkloadEventSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None, results_key="events")
    def events(self, request, workloadId=None):
        events = self.get_object().events.order_by("-at", "-id")
        page = self.paginate_queryset(events)
        return self.get_paginated_response(WorkloadEventSerializer(page, many=True).data)

    @extend_schema(parameters=METRICS_PARAMETERS, responses={200: MeasurementsSerializer, 207: MeasurementsSerializer})
    @action(detail=True, methods=["get"], filterset_class=None)
    def metrics(self, request, workloadId=None):
        workload = self.get_object()
        allowed = INFERENCE_TYPES if workload.kind == Workload.Kind.INFERENCE else WORKLOAD_TYPES
        return _metrics_response(request, workload, allowed)

    @extend_schema(responses=OutputsSerializer)
    @action(detail=True, methods=["get"], filterset_class=None)
    def outputs(self, request, workloadId=None):
        """What a catalog launch shows its users (URL, address, token…), from the outputs frozen at launch;
        `{"outputs": []}` for a workload not launched from a profile."""
        return Response({"outputs": workload_outputs(workload=self.get_object(), user=request.user)})
