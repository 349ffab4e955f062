"""Run:ai's `GET /api/v1/workloads/pods` and `/pods/count` (Pods tag): the pods of every workload the caller may
see, in the per-workload pods' shape (`Pod1`). Authorization is the workloads' queryset: a member sees the pods of
their projects' workloads only."""

import django_filters
from django.db.models import Case, CharField, Count, DateTimeField, F, Q, Value, When
from django.db.models.functions import Coalesce, NullIf
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from studio.listing import StudioFilterSet
from workloads import runai_fields as derived
from workloads.api.serializers import CountSerializer, PodSerializer
from workloads.models import Pod, Workload

FINISHED = ("Succeeded", "Failed")


def completed_at_expression():
    """A pod's completion time: when its row last changed, once it has finished (as the serializer answers)."""
    return Case(When(phase__in=FINISHED, then=F("updated_at")), default=None, output_field=DateTimeField())


def current_pool_expression():
    """A pod's `currentNodePool` as the answer gives it: its workload's placed pool while it is on a node."""
    placed = Coalesce(NullIf(F("workload__node_pool"), Value("")), Value(derived.DEFAULT_NODE_POOL),
                      output_field=CharField())
    return Case(When(~Q(node_name="") & ~Q(phase__in=("Succeeded", "Failed")), then=placed), default=Value(None),
                output_field=CharField())


class PodFilterSet(StudioFilterSet):
    """`filterBy`/`sortBy` over the fields of Run:ai's PodsFilter/PodsSort (2.18 and latest); `search` on the
    pod's name; `deleted=true` for the pods of deleted workloads; `completed=true|false|all`."""

    deleted = django_filters.CharFilter(method="_noop", help_text="true lists the pods of deleted workloads.")
    completed = django_filters.CharFilter(method="_noop", help_text="true, false or all (default).")
    verbosity = django_filters.ChoiceFilter(method="_noop", choices=[("brief", "brief"), ("full", "full")],
                                            help_text="Accepted; the answer always holds workloadName and projectName.")

    class Meta:
        model = Pod
        fields = []
        api_fields = {
            "clusterId": "workload__cluster_id", "workloadId": "workload_id", "nodeName": "node_name",
            "createdAt": "created_at", "deletedAt": "workload__deleted_at",
        }
        api_expressions = {
            "completedAt": completed_at_expression,
            # the pool its workload was placed in while the pod is on a node (as answered); an inference's
            # revision is not tracked (null on every pod, as answered)
            "currentNodepool": current_pool_expression,
            "revisionId": derived.null_expression(CharField()),
        }
        search_fields = ["name"]
        default_sort = ["created_at", "name"]

    def filter_queryset(self, queryset):
        deleted = (self.data.get("deleted") or "false").lower()
        completed = (self.data.get("completed") or "all").lower()
        problems = {}
        if deleted not in ("true", "false"):
            problems["deleted"] = [f"Must be true or false, not {deleted!r}."]
        if completed not in ("true", "false", "all"):
            problems["completed"] = [f"Must be true, false or all, not {completed!r}."]
        if problems:
            raise ValidationError(problems)
        queryset = queryset.filter(workload__deleted_at__isnull=deleted == "false")
        if completed != "all":
            finished = Q(phase__in=FINISHED)
            queryset = queryset.filter(finished) if completed == "true" else queryset.exclude(finished)
        return super().filter_queryset(queryset)


@extend_schema_view(
    # Run:ai's operation ids (runapy's method names); drf-spectacular's own would collide with the pods of one
    # workload (/api/v1/workloads/{workloadId}/pods).
    list=extend_schema(tags=["Pods"], operation_id="list_pods", summary="List the pods of every workload you may see.",
                       responses=PodSerializer(many=True)),
    count=extend_schema(tags=["Pods"], operation_id="count_pods",
                        summary="Count the pods of every workload you may see.",
                        responses=CountSerializer),
)
class PodViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    serializer_class = PodSerializer
    filterset_class = PodFilterSet
    results_key = "pods"
    omit_last_next = True

    def get_queryset(self):
        visible = Workload.objects.visible_to(self.request.user)
        return Pod.objects.filter(workload__in=visible.values("pk")).select_related("workload__project")

    @extend_schema(parameters=[OpenApiParameter("search", OpenApiTypes.STR, description="Part of a pod's name.")])
    @action(detail=False, methods=["get"])
    def count(self, request):
        queryset = self.filter_queryset(self.get_queryset()).order_by()
        return Response({"count": queryset.aggregate(n=Count("pk"))["n"]})

