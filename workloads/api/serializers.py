"""API shapes of workloads: the Run:ai create/get body (workloads/api/seed_examples.py) and the generic workload view."""

import uuid
from datetime import UTC

from django.conf import settings
from django.utils import timezone
from rest_framework import serializers
from rest_framework.fields import DateTimeField

from workloads import runai_fields as derived
from workloads.cluster import pending
from workloads.manifests.parts import MAIN_CONTAINER
from workloads.specs.distributed import DistributedSpec, MasterSpec
from workloads.specs.kinds import InferenceSpec, TrainingSpec, WorkspaceSpec

_datetime = DateTimeField()


def iso_time(value):
    """DRF's rendering of a datetime (ISO 8601 in the current time zone, UTC as `Z`), without its per-call cost for
    the common case, a UTC value (what PostgreSQL answers) where UTC is the time zone: the project never activates
    another one, and asking asgiref for the current one per date was a tenth of the list's CPU. A text is already
    this rendering (a list row's timestamps where ANSWERS_UTC: workloads.api.list_rows) and is written as it is."""
    if value is None:
        return None
    kind = type(value)
    if kind is str:
        return value
    if ANSWERS_UTC and value.tzinfo is UTC:
        return value.isoformat()[:-6] + "Z"
    return _datetime.to_representation(value)


ANSWERS_UTC = settings.TIME_ZONE == "UTC"  # timestamps are answered in UTC, written with `Z`


class WorkloadCreatedSerializer(serializers.Serializer):
    """Seeds 001/003: the body answered to create and GET of a training, workspace or inference. Ids are strings
    as Run:ai's spec types them (the seeds print 1 only because the renderer shows the example)."""

    name = serializers.CharField()
    requestedName = serializers.CharField(source="requested_name")
    workloadId = serializers.UUIDField(source="id")
    projectId = serializers.CharField(source="project_id")
    departmentId = serializers.CharField(source="department_id")
    clusterId = serializers.UUIDField(source="cluster_id")
    createdBy = serializers.CharField(source="created_by_name")
    createdAt = serializers.DateTimeField(source="created_at")
    desiredPhase = serializers.CharField(source="desired_phase")
    actualPhase = serializers.CharField(source="actual_phase")
    spec = serializers.SerializerMethodField()

    def to_representation(self, w) -> dict:
        # Written out by hand (every submission answers it), as DRF's fields above render it: None stays None,
        # CharField and UUIDField str(), DateTimeField iso_time. Subclasses (more fields) keep DRF's loop.
        if type(self) is not WorkloadCreatedSerializer:
            return super().to_representation(w)
        return {
            "name": _str(w.name), "requestedName": _str(w.requested_name), "workloadId": _str(w.id),
            "projectId": _str(w.project_id), "departmentId": _str(w.department_id), "clusterId": _str(w.cluster_id),
            "createdBy": _str(w.created_by_name), "createdAt": iso_time(w.created_at),
            "desiredPhase": _str(w.desired_phase), "actualPhase": _str(w.actual_phase), "spec": self.get_spec(w),
        }

    def get_spec(self, workload) -> dict:
        return answered_spec(workload.spec)


def _str(value):
    return None if value is None else str(value)


def _created_schema(name: str, spec_serializer):
    """The create/get answer of one kind for the OpenAPI document, with that kind's spec (rendering uses
    WorkloadCreatedSerializer, which echoes the stored spec)."""
    return type(name, (WorkloadCreatedSerializer,), {"spec": spec_serializer(read_only=True),
                                                      "__doc__": WorkloadCreatedSerializer.__doc__})


class DistributedCreatedSerializer(WorkloadCreatedSerializer):
    """Run:ai's DistributedWorkload: the workers' spec, and the master's as it was sent."""

    masterSpecSameAsWorker = serializers.SerializerMethodField()
    masterSpec = serializers.SerializerMethodField()

    def get_masterSpecSameAsWorker(self, workload) -> bool:
        request = workload.request or {}
        return request.get("masterSpecSameAsWorker", request.get("masterSpec") is None)

    def get_masterSpec(self, workload) -> dict | None:
        master = (workload.request or {}).get("masterSpec")
        return answered_spec(master) if master else None


Training = _created_schema("Training", TrainingSpec)
Workspace = _created_schema("Workspace", WorkspaceSpec)
Inference = _created_schema("Inference", InferenceSpec)
Distributed = type("Distributed", (DistributedCreatedSerializer,), {
    "spec": DistributedSpec(read_only=True), "masterSpec": MasterSpec(read_only=True, allow_null=True),
    "__doc__": DistributedCreatedSerializer.__doc__})
CREATED_SCHEMAS = {"training": Training, "workspace": Workspace, "inference": Inference, "distributed": Distributed}


def answered_spec(spec: dict) -> dict:
    """The spec as submitted, with the values Run:ai types as strings answered as strings (an extended
    resource's quantity may be sent as the number 2, as the example training does; the spec answers "2")."""
    compute = spec.get("compute") or {}
    resources = compute.get("extendedResources")
    if not resources:
        return spec
    resources = [{**r, "quantity": str(r["quantity"])} if "quantity" in r else r for r in resources]
    return {**spec, "compute": {**compute, "extendedResources": resources}}


# Run:ai's workload view (schema `Workload`): required fields we do not track are derived (runai_fields).
TENANT_ID = derived.TENANT_ID
K8S_PHASE = {  # our phase -> the phase Kubernetes would show for the workload's pods
    "Creating": "Pending", "Pending": "Pending", "Initializing": "Pending", "Resuming": "Pending",
    "Running": "Running", "Degraded": "Running", "Updating": "Running", "Stopping": "Running",
    "Terminating": "Running", "Completed": "Succeeded", "Failed": "Failed",
}


class PendingReasonSerializer(serializers.Serializer):
    """Why a workload waits (workloads.pending): `type` says which of the keys below it has."""

    type = serializers.ChoiceField(choices=pending.TYPES)
    message = serializers.CharField()
    resource = serializers.CharField(required=False, help_text="NoNodeRoom: the first resource no node has free; "
                                                               "OverQuota: nvidia.com/gpu.")
    resources = serializers.ListField(child=serializers.CharField(), required=False,
                                      help_text="NoNodeRoom: every resource the scheduler found short.")
    nodePool = serializers.CharField(required=False, allow_null=True)
    schedulerMessage = serializers.CharField(required=False, help_text="The scheduler's own words.")
    scope = serializers.ChoiceField(choices=["project", "department"], required=False,
                                    help_text="OverQuota: whose quota.")
    scopeName = serializers.CharField(required=False)
    quota = serializers.ChoiceField(choices=["deserved", "limit"], required=False)
    allowed = serializers.FloatField(required=False)
    used = serializers.FloatField(required=False, help_text="GPUs held, plus those of the workloads queued ahead.")
    requested = serializers.FloatField(required=False)
    over = serializers.FloatField(required=False, help_text="OverQuota: by how many GPUs.")
    image = serializers.CharField(required=False)
    reason = serializers.CharField(required=False, help_text="ImagePull: ErrImagePull, ImagePullBackOff, …")
    queueLength = serializers.IntegerField(required=False, help_text="Pending workloads of its node pool (on a KAI "
                                                                     "cluster: of its project's queue).")
    queue = serializers.CharField(required=False, help_text="On a KAI cluster: its project's queue.")
    schedulerReason = serializers.CharField(required=False, help_text=(
        "OverQuota on a KAI cluster: KAI's reason, OverLimit or NonPreemptibleOverQuota."))
    reclaimedBy = serializers.DictField(required=False, help_text=(
        "Reclaimed: whose quota took its GPUs back: {project, workload, namespace, podGroup}."))
    preemptedBy = serializers.DictField(required=False, help_text="Preempted: the higher-priority workload.")
    waitingFor = serializers.DictField(required=False, help_text=(
        "Reclaimed / Preempted: why it waits now (a reason of the other types)."))
    at = serializers.CharField(required=False, allow_null=True, help_text="Reclaimed / Preempted: when.")
    estimatedStartAt = serializers.DateTimeField(required=False, allow_null=True, help_text=(
        "When the pool's running workloads with a known end (a time limit) free enough GPUs for it and those "
        "ahead; null when that cannot be told."))


class WorkloadSerializer(serializers.Serializer):
    """The generic view of a workload of any kind: Run:ai's `Workload` (2.18 and latest), plus ours
    (requestedName, desiredPhase, startedAt, requestedGpus, launchedFrom, profile)."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    requestedName = serializers.CharField(source="requested_name")
    type = serializers.CharField(source="kind")
    tenantId = serializers.IntegerField()
    projectId = serializers.CharField(source="project_id")
    projectName = serializers.CharField(source="project.name")
    departmentId = serializers.CharField(source="department_id")
    departmentName = serializers.CharField(source="department.name")
    clusterId = serializers.UUIDField(source="cluster_id")
    namespace = serializers.CharField(source="project.namespace")
    phase = serializers.CharField(source="actual_phase")
    phaseMessage = serializers.CharField(source="phase_message")
    phaseUpdatedAt = serializers.DateTimeField()
    k8sPhase = serializers.CharField()
    k8sPhaseUpdatedAt = serializers.DateTimeField()
    conditions = serializers.ListField(child=serializers.DictField())
    desiredPhase = serializers.CharField(source="desired_phase")
    createdAt = serializers.DateTimeField(source="created_at")
    updatedAt = serializers.DateTimeField(source="updated_at")
    startedAt = serializers.DateTimeField(source="started_at", allow_null=True)
    completedAt = serializers.DateTimeField(source="completed_at", allow_null=True)
    deletedAt = serializers.DateTimeField(source="deleted_at", allow_null=True)
    submittedBy = serializers.CharField(source="created_by_name")
    source = serializers.ChoiceField(choices=["CLI", "Control-plane", "Other"])
    launchedFrom = serializers.CharField(source="source")
    runningPods = serializers.IntegerField(source="running_pods")
    requestedPods = serializers.DictField()
    requestedGpus = serializers.FloatField()
    allocatedResources = serializers.DictField()
    requestedNodePools = serializers.ListField(child=serializers.CharField())
    currentNodePools = serializers.ListField(child=serializers.CharField())
    images = serializers.ListField(child=serializers.CharField())
    urls = serializers.ListField(child=serializers.CharField())
    category = serializers.CharField()
    priorityClassName = serializers.CharField()
    priority = serializers.IntegerField(allow_null=True)
    preemptible = serializers.BooleanField(allow_null=True)
    totalPendingTimeSeconds = serializers.IntegerField(allow_null=True)
    totalRunningTimeSeconds = serializers.IntegerField(allow_null=True)
    idleGpus = serializers.IntegerField(allow_null=True)
    idleAllocatedGpus = serializers.FloatField(allow_null=True)
    guaranteedRuntimeEndsAt = serializers.DateTimeField(allow_null=True)
    actionsSupport = serializers.DictField()
    profile = serializers.DictField(allow_null=True)
    distributedFramework = serializers.CharField(required=False, help_text="Distributed trainings only.")
    pendingReason = PendingReasonSerializer(allow_null=True, help_text=(
        "Why the workload waits (phases Creating, Pending, Initializing, Resuming), as the last sync round saw it; "
        "null when it does not wait."))
    queuePosition = serializers.IntegerField(allow_null=True, help_text=(
        "Its place (1 = next) among the Pending workloads of its node pool, by submission; null when not Pending."))

    def to_representation(self, w) -> dict:
        return self.represent(w)

    def represent(self, w, *, clock: bool = True) -> dict:
        """Written out by hand: lists render up to 500 of these, and DRF's per-field machinery is the cost there.
        The declared fields above describe the shape in the OpenAPI schema. With `clock` False the two figures that
        move with the clock are -1, for the caller to write (workloads.api.list_rows keeps rendered rows and writes
        them per request)."""
        spec = derived.spec_of(w)
        created_at = iso_time(w.created_at)
        phase_at = iso_time(w.phase_updated_at) if w.phase_updated_at else created_at
        priority_class = derived.priority_class_of(w.kind, spec)
        pools = derived.node_pools_of(spec)
        running = w.actual_phase in derived.ALLOCATED_PHASES
        url = (w.endpoints or {}).get("url")
        return {
            "id": str(w.id), "name": w.name, "requestedName": w.requested_name, "type": w.kind,
            "tenantId": TENANT_ID, "projectId": str(w.project_id), "projectName": w.project.name,
            "departmentId": str(w.department_id), "departmentName": w.department.name,
            "clusterId": str(w.cluster_id), "namespace": w.project.namespace,
            "phase": w.actual_phase, "phaseMessage": w.phase_message, "phaseUpdatedAt": phase_at,
            "k8sPhase": K8S_PHASE.get(w.actual_phase, "Unknown"), "k8sPhaseUpdatedAt": phase_at,
            "conditions": [{"type": w.actual_phase, "status": "True", "message": w.phase_message,
                            "reason": w.actual_phase, "lastTransitionTime": phase_at}],
            "desiredPhase": w.desired_phase, "createdAt": created_at, "updatedAt": iso_time(w.updated_at),
            "startedAt": iso_time(w.started_at), "completedAt": iso_time(w.completed_at), "deletedAt": iso_time(w.deleted_at),
            "submittedBy": w.created_by_name, "source": "Control-plane", "launchedFrom": w.source,
            "runningPods": w.running_pods, "requestedPods": derived.requested_pods_of(w.kind, w.requested_pods, spec),
            "requestedGpus": float(w.gpu_request),
            "allocatedResources": {"gpu": derived.allocated_gpu_of(w.actual_phase, w.gpu_request)},
            "requestedNodePools": pools,
            # where its pods run: the pool it was placed in, while it holds GPUs (studio.org.numbers counts it there)
            "currentNodePools": [derived.placed_pool_of(w.node_pool)] if running else [],
            "images": [spec["image"]] if spec.get("image") else [], "urls": [url] if url else [],
            "category": derived.category_of(w.kind, spec), "priorityClassName": priority_class,
            "priority": derived.priority_of(priority_class), "preemptible": derived.preemptible_of(priority_class),
            "totalPendingTimeSeconds": derived.seconds_between(w.created_at, w.started_at, now := timezone.now())
            if clock else -1,
            "totalRunningTimeSeconds": derived.seconds_between(
                w.started_at, derived.running_end(w.completed_at, w.actual_phase, w.phase_updated_at), now)
            if clock else -1,
            "idleGpus": None, "idleAllocatedGpus": None, "guaranteedRuntimeEndsAt": None,
            "actionsSupport": {"delete": True, "suspend": w.kind in ("training", "workspace", "distributed")},
            "profile": self.get_profile(w), "pendingReason": w.waiting_reason, "queuePosition": w.waiting_position,
            **({"distributedFramework": spec.get("distributedFramework") or ""} if w.kind == "distributed" else {}),
        }

    def get_profile(self, workload) -> dict | None:
        if workload.profile_id is None and not workload.profile_name:
            return None
        # The profile's current revision where the queryset annotated it (workloads.launch.upgrades: outdated).
        current = getattr(workload, "profile_current_revision", None)
        return {"id": workload.profile_id, "name": workload.profile_name, "revision": workload.profile_revision,
                "currentRevision": current,
                "outdated": current is not None and (workload.profile_revision or 0) < current}


class PodSerializer(serializers.Serializer):
    """Run:ai's `Pod1` (PodSyncFields + PodComputedFields + PodVerbosityFields) plus our `phase` and `message`.
    Pods run one container, `main`, of the workload's image; the pod's node pool is not tracked (null)."""

    id = serializers.CharField()
    name = serializers.CharField()
    workloadId = serializers.UUIDField()
    workloadName = serializers.CharField()
    clusterId = serializers.UUIDField()
    projectId = serializers.CharField()
    projectName = serializers.CharField()
    tenantId = serializers.IntegerField()
    phase = serializers.CharField()
    k8sPhase = serializers.CharField()
    message = serializers.CharField()
    nodeName = serializers.CharField(allow_null=True)
    priorityClassName = serializers.CharField()
    containers = serializers.ListField(child=serializers.DictField())
    requestedNodePools = serializers.ListField(child=serializers.CharField())
    currentNodePool = serializers.CharField(allow_null=True)
    createdAt = serializers.DateTimeField()
    completedAt = serializers.DateTimeField(allow_null=True)
    updatedAt = serializers.DateTimeField()
    k8sPhaseUpdatedAt = serializers.DateTimeField()
    deletedAt = serializers.DateTimeField(allow_null=True)
    role = serializers.CharField(allow_null=True, help_text="A distributed training's pod role (the training "
                                 "operator's replica-type: master, worker, launcher, chief); null for other kinds.")

    def to_representation(self, pod) -> dict:
        # The per-workload list passes its workload; the all-pods list reads each pod's (select_related).
        w = self.context.get("workload") or pod.workload
        spec = w.spec or {}
        finished = pod.phase in ("Succeeded", "Failed")
        return {
            "id": pod.uid, "name": pod.name, "workloadId": str(w.id), "workloadName": w.name,
            "clusterId": str(w.cluster_id), "projectId": str(w.project_id), "projectName": w.project.name,
            "tenantId": TENANT_ID, "phase": pod.phase, "k8sPhase": pod.phase, "message": pod.message,
            "nodeName": pod.node_name or None, "priorityClassName": derived.priority_class_of(w.kind, spec),
            "containers": [{"name": MAIN_CONTAINER, "image": spec.get("image") or ""}],
            "requestedNodePools": derived.node_pools_of(spec),
            "currentNodePool": derived.placed_pool_of(w.node_pool) if pod.node_name and not finished else None,
            "createdAt": iso_time(pod.created_at or w.created_at), "completedAt": iso_time(pod.updated_at) if finished else None,
            "updatedAt": iso_time(pod.updated_at), "k8sPhaseUpdatedAt": iso_time(pod.updated_at), "deletedAt": iso_time(w.deleted_at),
            "role": pod.role or None,
        }


class WorkloadEventSerializer(serializers.Serializer):
    """Run:ai's `Event1`/`Event2`: `id` is the event's number as a UUID (00000000-…-000000000007), `source`
    is `studio` (a phase change recorded here) or `cluster` (a Kubernetes event); `phase` is ours."""

    id = serializers.UUIDField()
    createdAt = serializers.DateTimeField()
    type = serializers.CharField()
    clusterId = serializers.UUIDField()
    reason = serializers.CharField()
    message = serializers.CharField()
    source = serializers.CharField()
    phase = serializers.CharField()

    def to_representation(self, event) -> dict:
        return {
            "id": str(uuid.UUID(int=event.id)), "createdAt": iso_time(event.at), "type": event.type,
            "clusterId": str(self.context["workload"].cluster_id), "reason": event.reason,
            "message": event.message, "source": event.source, "phase": event.phase,
        }


class AcceptedSerializer(serializers.Serializer):
    code = serializers.IntegerField(default=202)
    message = serializers.CharField(default="Request has been accepted.")


class CountSerializer(serializers.Serializer):
    count = serializers.IntegerField()
