"""The Run:ai-compatible workloads API. Thin views: parse, authorize, call a service, render."""

from django.db.models import Count, Q
from django.http import Http404, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    extend_schema,
    extend_schema_view,
)
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from profiles.selectors import profile_revision_subquery, workload_outputs
from profiles.serializers import OutputsSerializer
from workloads import services
from workloads.api import list_rows, pod_logs
from workloads.api.filtersets import WorkloadFilterSet
from workloads.api.preview_schema import DRY_RUN_PARAMETER, PREVIEW_NOTE, dry_run_requested
from workloads.api.seed_examples import (
    DISTRIBUTED_REQUEST,
    INFERENCE_REQUEST,
    TRAINING_REQUEST,
    WORKSPACE_REQUEST,
)
from workloads.api.serializers import (
    CREATED_SCHEMAS,
    AcceptedSerializer,
    CountSerializer,
    DistributedCreatedSerializer,
    PodSerializer,
    WorkloadCreatedSerializer,
    WorkloadEventSerializer,
    WorkloadSerializer,
)
from workloads.from_templates import request_with_template
from workloads.launch.preview import workload_preview
from workloads.metric_types import INFERENCE_TYPES, POD_TYPES, WORKLOAD_TYPES
from workloads.models import Pod, Workload
from workloads.specs import validate_workload_request
from workloads.specs.distributed import DistributedCreation
from workloads.specs.kinds import CREATION_REQUESTS, InferenceUpdate
from workloads.telemetry.metrics import MeasurementsSerializer, MetricsQuerySerializer, measurements

UUID_REGEX = "[0-9a-fA-F-]{36}"
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
        return Workload.objects.visible_to(self.request.user).live().filter(kind=self.kind).select_related(
            "project", "department")

    def create(self, request):
        data, provenance = request_with_template(kind=self.kind, data=request.data, user=request.user)
        body = validate_workload_request(self.kind, data)
        if dry_run_requested(request):
            return Response(workload_preview(kind=self.kind, request=body, user=request.user))
        workload = services.workload_submit(kind=self.kind, request=body, user=request.user, provenance=provenance)
        return Response(self.serializer_class(workload).data, status=status.HTTP_200_OK)

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


def _kind_schema(kind: str, tag: str, seed: dict, seed_name: str):
    """The OpenAPI description of one kind's operations: Run:ai's tag, its request and answer schemas, and
    the seed's body as the example."""
    created = CREATED_SCHEMAS[kind]
    example = OpenApiExample(seed_name, value=seed, request_only=True)
    views = dict(
        create=extend_schema(tags=[tag], request={**CREATION_REQUESTS, "distributed": DistributedCreation}[kind],
                             responses={200: created}, parameters=[DRY_RUN_PARAMETER], examples=[example],
                             summary=f"Create a {kind} (or preview it with dryRun=true).",
                             description=PREVIEW_NOTE),
        retrieve=extend_schema(tags=[tag], responses={200: created}, summary=f"Get a {kind}."),
        destroy=extend_schema(tags=[tag], summary=f"Delete a {kind}."),
        suspend=extend_schema(tags=[tag]),
        resume=extend_schema(tags=[tag]),
        metrics=extend_schema(tags=[tag]),
        pod_metrics=extend_schema(tags=[tag]),
    )
    # Only the operations the view has (metrics are the inference's): else check --deploy warns (W001).
    return lambda view: extend_schema_view(**{name: s for name, s in views.items() if hasattr(view, name)})(view)


@_kind_schema("training", "Trainings", TRAINING_REQUEST, "Seed 003: a training")
class TrainingViewSet(SuspendableMixin, KindViewSet):
    kind = Workload.Kind.TRAINING


@_kind_schema("workspace", "Workspaces", WORKSPACE_REQUEST, "Seed 003's body as a workspace")
class WorkspaceViewSet(SuspendableMixin, KindViewSet):
    kind = Workload.Kind.WORKSPACE


@_kind_schema("distributed", "Distributed", DISTRIBUTED_REQUEST, "A PyTorch job: a master and two workers")
class DistributedViewSet(SuspendableMixin, KindViewSet):
    """Distributed trainings (Run:ai 2.18's create, get and delete; latest's suspend and resume): Kubeflow
    Training Operator jobs (workloads/manifest_distributed.py)."""

    kind = Workload.Kind.DISTRIBUTED
    serializer_class = DistributedCreatedSerializer


@_kind_schema("inference", "Inferences", INFERENCE_REQUEST, "Seed 001: an inference")
@extend_schema_view(partial_update=extend_schema(tags=["Inferences"]))
class InferenceViewSet(SuspendableMixin, KindViewSet):
    """Inferences cannot be suspended: the routes exist so that the answer is a 400 that says why."""

    kind = Workload.Kind.INFERENCE

    @extend_schema(request=InferenceUpdate, responses={202: CREATED_SCHEMAS["inference"]},
                   description="Run:ai latest's update: `{\"spec\": {…}}` replaces the given top-level spec "
                               "fields, and the inference rolls to a new revision. 202 with the inference.")
    def partial_update(self, request, workloadId=None):
        body = request.data if isinstance(request.data, dict) else None
        unknown = sorted(set(body or {}) - {"spec"})
        if body is None or unknown or "spec" not in body:
            problems = {name: ["Unknown field."] for name in unknown} or {"spec": ["This field is required."]}
            raise ValidationError(problems)
        workload = services.workload_update(workload=self.get_object(), spec_changes=body["spec"], user=request.user)
        return Response(WorkloadCreatedSerializer(workload).data, status=status.HTTP_202_ACCEPTED)

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


@extend_schema_view(
    list=extend_schema(tags=["Workloads"], summary="List workloads of every kind."),
    retrieve=extend_schema(tags=["Workloads"]), count=extend_schema(tags=["Workloads"]),
    metrics=extend_schema(tags=["Workloads"]), outputs=extend_schema(tags=["Workloads"]),
    pods=extend_schema(tags=["Pods"]), pod_metrics=extend_schema(tags=["Pods"]), pod_logs=extend_schema(tags=["Pods"]),
    events=extend_schema(tags=["Events"]),
)
class WorkloadViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Every kind: list (with deleted=true for deleted ones), count, get, pods, events, metrics."""

    serializer_class = WorkloadSerializer
    filterset_class = WorkloadFilterSet
    results_key = "workloads"
    omit_last_next = True
    lookup_url_kwarg = "workloadId"
    lookup_value_regex = UUID_REGEX

    def get_queryset(self):
        if self.action in ("list", "count"):
            return Workload.objects.listed_for(self.request.user)
        return Workload.objects.visible_to(self.request.user).select_related("project", "department").annotate(
            profile_current_revision=profile_revision_subquery())  # the profile's `outdated`

    def list(self, request, *args, **kwargs):
        queryset = self.filter_queryset(self.get_queryset())
        if not list_rows.keeps_rows(queryset):
            serializer = self.get_serializer()
            return self.get_paginated_response([serializer.to_representation(list_rows.ListedWorkload(row))
                                                for row in self.paginate_queryset(list_rows.values_of(queryset))])
        # kept rows: rendered without the clock figures, which list_rows writes per request
        represent = self.get_serializer().represent

        def render(row):
            return represent(list_rows.ListedWorkload(row), clock=False)

        keys = self.paginate_queryset(list_rows.keys_of(queryset))
        return self.get_paginated_response(list_rows.ROWS.page(keys, render, queryset.db))

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

    @extend_schema(responses=PodSerializer(many=True),
                   parameters=[OpenApiParameter("search", OpenApiTypes.STR, description="Part of a pod's name.")])
    @action(detail=True, methods=["get"], filterset_class=None, results_key="pods")
    def pods(self, request, workloadId=None):
        """Run:ai's Pods tag: paged with offset and limit, `next` on every page but the last."""
        workload = self.get_object()
        pods = workload.pods.order_by("created_at", "name", "pk")
        if request.query_params.get("search"):
            pods = pods.filter(name__icontains=request.query_params["search"])
        page = self.paginate_queryset(pods)
        return self.get_paginated_response(PodSerializer(page, many=True, context={"workload": workload}).data)

    @extend_schema(
        parameters=[pod_logs.LogQuerySerializer],
        responses={(200, "text/plain"): OpenApiTypes.STR},
        description="The pod's log as text (`tailLines`/`tail`, `sinceSeconds`/`since`, `container`); with "
                    "`follow=true` a stream that goes on while the container writes (at most "
                    f"{pod_logs.MAX_FOLLOW_SECONDS} s). Every role of the workload's project and platform admins may read it. "
                    "`podId` is a pod's `id` from `/pods` (or its name). A pod with no log to give (not started, "
                    "no kubelet behind it) is a 409 that says why.",
    )
    @action(detail=True, methods=["get"], filterset_class=None, url_path=r"pods/(?P<podId>[^/]+)/logs")
    def pod_logs(self, request, workloadId=None, podId=None):
        workload = self.get_object()
        pod = self.get_object_pod(workload, podId)
        pod_logs.check_may_read_logs(workload=workload, user=request.user)
        query = pod_logs.LogQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        log = pod_logs.pod_log(workload=workload, pod=pod, query=query.validated_data)
        if isinstance(log, str):
            return HttpResponse(log, content_type="text/plain; charset=utf-8")
        response = StreamingHttpResponse(log, content_type="text/plain; charset=utf-8")
        response["X-Accel-Buffering"] = "no"  # a proxy in front must pass each chunk on as it comes
        return response

    @staticmethod
    def get_object_pod(workload, pod_id: str) -> Pod:
        pod = workload.pods.filter(Q(uid=pod_id) | Q(name=pod_id)).first()
        if pod is None:
            raise Http404
        return pod

    @extend_schema(responses=WorkloadEventSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None, results_key="events")
    def events(self, request, workloadId=None):
        """Newest first, or oldest first with sortOrder=asc (Run:ai latest's EventsSort)."""
        workload = self.get_object()
        order = request.query_params.get("sortOrder") or "desc"
        if order not in ("asc", "desc"):
            raise ValidationError({"sortOrder": ["Must be asc or desc."]})
        events = workload.events.order_by(*(("at", "id") if order == "asc" else ("-at", "-id")))
        page = self.paginate_queryset(events)
        return self.get_paginated_response(
            WorkloadEventSerializer(page, many=True, context={"workload": workload}).data)

    @extend_schema(parameters=METRICS_PARAMETERS, responses={200: MeasurementsSerializer, 207: MeasurementsSerializer})
    @action(detail=True, methods=["get"], filterset_class=None)
    def metrics(self, request, workloadId=None):
        workload = self.get_object()
        allowed = INFERENCE_TYPES if workload.kind == Workload.Kind.INFERENCE else WORKLOAD_TYPES
        return _metrics_response(request, workload, allowed)

    @extend_schema(parameters=METRICS_PARAMETERS, responses={200: MeasurementsSerializer, 207: MeasurementsSerializer},
                   description=f"Metrics of one pod of the workload (Run:ai's Pods tag): {', '.join(POD_TYPES)}.")
    @action(detail=True, methods=["get"], filterset_class=None, url_path=r"pods/(?P<podId>[^/]+)/metrics")
    def pod_metrics(self, request, workloadId=None, podId=None):
        workload = self.get_object()
        pod = get_object_or_404(Pod, workload=workload, uid=podId)
        return _metrics_response(request, workload, POD_TYPES, pod_name=pod.name)

    @extend_schema(responses=OutputsSerializer)
    @action(detail=True, methods=["get"], filterset_class=None)
    def outputs(self, request, workloadId=None):
        """What a catalog launch shows its users (URL, address, token…), from the outputs frozen at launch;
        `{"outputs": []}` for a workload not launched from a profile."""
        return Response({"outputs": workload_outputs(workload=self.get_object(), user=request.user)})
