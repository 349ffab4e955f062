"""API shapes of workloads: the Run:ai create/get body (seeds 001, 003) and the generic workload view."""

from rest_framework import serializers
from rest_framework.fields import DateTimeField

from workloads.models import Pod, WorkloadEvent

_datetime = DateTimeField()


def _iso(value):
    return None if value is None else _datetime.to_representation(value)


class WorkloadCreatedSerializer(serializers.Serializer):
    """Seeds 001/003: the body answered to create and GET of a training, workspace or inference."""

    name = serializers.CharField()
    requestedName = serializers.CharField(source="requested_name")
    workloadId = serializers.UUIDField(source="id")
    projectId = serializers.IntegerField(source="project_id")
    departmentId = serializers.IntegerField(source="department_id")
    clusterId = serializers.UUIDField(source="cluster_id")
    createdBy = serializers.CharField(source="created_by_name")
    createdAt = serializers.DateTimeField(source="created_at")
    desiredPhase = serializers.CharField(source="desired_phase")
    actualPhase = serializers.CharField(source="actual_phase")
    spec = serializers.JSONField()


class WorkloadSerializer(serializers.Serializer):
    """The generic view of a workload of any kind."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    requestedName = serializers.CharField(source="requested_name")
    type = serializers.CharField(source="kind")
    projectId = serializers.IntegerField(source="project_id")
    projectName = serializers.CharField(source="project.name")
    departmentId = serializers.IntegerField(source="department_id")
    clusterId = serializers.UUIDField(source="cluster_id")
    phase = serializers.CharField(source="actual_phase")
    phaseMessage = serializers.CharField(source="phase_message")
    desiredPhase = serializers.CharField(source="desired_phase")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    phaseUpdatedAt = serializers.DateTimeField(source="phase_updated_at", allow_null=True)
    startedAt = serializers.DateTimeField(source="started_at", allow_null=True)
    completedAt = serializers.DateTimeField(source="completed_at", allow_null=True)
    deletedAt = serializers.DateTimeField(source="deleted_at", allow_null=True)
    submittedBy = serializers.CharField(source="created_by_name")
    runningPods = serializers.IntegerField(source="running_pods")
    requestedPods = serializers.IntegerField(source="requested_pods")
    requestedGpus = serializers.DecimalField(source="gpu_request", max_digits=10, decimal_places=3, coerce_to_string=False)
    source = serializers.CharField()
    profile = serializers.SerializerMethodField()

    def to_representation(self, w) -> dict:
        # Written out by hand: lists render up to 500 of these, and DRF's per-field machinery is the cost there.
        # The declared fields above still describe the shape in the OpenAPI schema.
        return {
            "id": str(w.id), "name": w.name, "requestedName": w.requested_name, "type": w.kind,
            "projectId": w.project_id, "projectName": w.project.name, "departmentId": w.department_id,
            "clusterId": str(w.cluster_id), "phase": w.actual_phase, "phaseMessage": w.phase_message,
            "desiredPhase": w.desired_phase, "createdAt": _iso(w.created_at), "updatedAt": _iso(w.updated_at),
            "phaseUpdatedAt": _iso(w.phase_updated_at), "startedAt": _iso(w.started_at),
            "completedAt": _iso(w.completed_at), "deletedAt": _iso(w.deleted_at), "submittedBy": w.created_by_name,
            "runningPods": w.running_pods, "requestedPods": w.requested_pods, "requestedGpus": float(w.gpu_request),
            "source": w.source, "profile": self.get_profile(w),
        }

    def get_profile(self, workload) -> dict | None:
        if workload.profile_id is None and not workload.profile_name:
            return None
        return {"id": workload.profile_id, "name": workload.profile_name, "revision": workload.profile_revision}


class PodSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="uid")
    nodeName = serializers.CharField(source="node_name")
    createdAt = serializers.DateTimeField(source="created_at", allow_null=True)

    class Meta:
        model = Pod
        fields = ["id", "name", "phase", "nodeName", "createdAt", "message"]


class WorkloadEventSerializer(serializers.ModelSerializer):
    createdAt = serializers.DateTimeField(source="at")

    class Meta:
        model = WorkloadEvent
        fields = ["id", "createdAt", "type", "reason", "message", "phase", "source"]


class AcceptedSerializer(serializers.Serializer):
    code = serializers.IntegerField(default=202)
    message = serializers.CharField(default="Request has been accepted.")


class CountSerializer(serializers.Serializer):
    count = serializers.IntegerField()


class MeasurementValueSerializer(serializers.Serializer):
    value = serializers.CharField()
    timestamp = serializers.CharField()


class MeasurementSerializer(serializers.Serializer):
    type = serializers.CharField()
    labels = serializers.DictField(child=serializers.CharField())
    values = MeasurementValueSerializer(many=True)


class MeasurementsSerializer(serializers.Serializer):
    measurements = MeasurementSerializer(many=True)
