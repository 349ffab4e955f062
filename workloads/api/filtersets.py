import django_filters
from django.db.models import CharField, DateTimeField, IntegerField

from studio.ids import IdFilter
from studio.listing import StudioFilterSet
from workloads import runai_fields as derived
from workloads.models import Workload


class WorkloadFilterSet(StudioFilterSet):
    """One FilterSet for the API list and the workloads page. Field names are those of Run:ai's `filterBy` and
    `sortBy` for workloads (2.18 and latest), plus our own (desiredPhase, runningPods, launchedFrom)."""

    deleted = django_filters.BooleanFilter(method="filter_deleted", help_text="true lists deleted workloads.")
    projectId = IdFilter(field_name="project_id")

    class Meta:
        model = Workload
        fields = []
        api_fields = {
            "name": "name", "type": "kind", "phase": "actual_phase", "desiredPhase": "desired_phase",
            "projectId": "project_id", "projectName": "project__name", "departmentId": "department_id",
            "departmentName": "department__name", "clusterId": "cluster_id", "createdAt": "created_at",
            "submittedBy": "created_by_name", "launchedFrom": "source", "runningPods": "running_pods",
            "deletedAt": "deleted_at", "completedAt": "completed_at", "phaseUpdatedAt": "phase_updated_at",
        }
        api_expressions = {
            "allocatedGPU": derived.allocated_gpu_expression,
            "nodepool": derived.node_pool_expression,
            "category": derived.category_expression,
            "priorityClassName": derived.priority_class_expression,
            "priority": derived.priority_expression,
            "totalRunningTimeSeconds": derived.running_time_expression,
            "totalPendingTimeSeconds": derived.pending_time_expression,
            "distributedFramework": derived.distributed_framework_expression,
            # Run:ai fields that have no counterpart here: they are null on every workload (no idle-GPU
            # accounting, no guaranteed runtime, no AI applications).
            "idleGpus": derived.null_expression(IntegerField()),
            "idleAllocatedGpus": derived.null_expression(IntegerField()),
            "guaranteedRuntimeEndsAt": derived.null_expression(DateTimeField()),
            "aiApplicationId": derived.null_expression(CharField()),
            "aiApplicationName": derived.null_expression(CharField()),
        }
        search_fields = ["name", "project__name", "created_by_name"]
        default_sort = ["-created_at"]

    def filter_deleted(self, queryset, name, value):
        return queryset.filter(deleted_at__isnull=not value)

    def filter_queryset(self, queryset):
        if self.form.cleaned_data.get("deleted") is None:
            queryset = queryset.filter(deleted_at__isnull=True)
        return super().filter_queryset(queryset)
