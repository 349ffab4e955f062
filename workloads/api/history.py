"""Run:ai's `GET /api/v1/workloads/{workloadId}/history` (Events tag): the workload's recorded events, oldest
first, each a `HistoryRecords` item. A phase change the sync recorded (an event of ours whose reason is the phase
it entered) is a `PhaseUpdate` with the phase's message; every other event (ours, such as Submitted or Updated,
and the cluster's warnings) is an `Event`, in the shape of the workload's events."""

import uuid

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import generics, serializers

from workloads.api.serializers import WorkloadEventSerializer, iso_time
from workloads.models import Workload

PHASES = set(Workload.Phase.values)


def history_record(event, workload) -> dict:
    if event.source == "studio" and event.reason == event.phase and event.phase in PHASES:
        return {"meta": {"creationTimestamp": iso_time(event.at), "type": "PhaseUpdate"},
                "spec": {"phaseUpdate": {"phase": event.phase, "phaseMessage": event.message}}}
    item = WorkloadEventSerializer(event, context={"workload": workload}).data
    return {"meta": {"creationTimestamp": item["createdAt"], "type": "Event"},
            "spec": {"event": {key: item[key] for key in ("createdAt", "id", "type", "clusterId", "message",
                                                          "reason", "source")}}}


class WorkloadHistoryView(generics.GenericAPIView):
    results_key = "records"
    omit_last_next = True
    filterset_class = None

    @extend_schema(tags=["Events"], operation_id="get_workload_history",
                   summary="The workload's history: phase changes and events, oldest first.",
                   responses={200: inline_serializer("WorkloadHistory", {
                       "records": serializers.ListField(child=serializers.DictField()),
                       "next": serializers.IntegerField(required=False)})})
    def get(self, request, workloadId: uuid.UUID):
        workload = get_object_or_404(Workload.objects.visible_to(request.user).live(), pk=workloadId)
        page = self.paginate_queryset(workload.events.order_by("at", "id"))
        return self.get_paginated_response([history_record(event, workload) for event in page])
