"""Workload -> Kubernetes objects. Pure: plain dicts in, plain dicts out.

This package chooses, by the workload's kind, between the built-in kinds (`objects`: Job, Deployment, Knative
Service or Deployment + HPA, Services, Ingress, claims) and the Kubeflow Training Operator jobs of a distributed
training (`distributed`). Pod-level pieces live in `parts` (container, compute, scheduling, security) and
`storage` (volumes, claims, git init containers). The names, labels and kinds below are `objects`'.
"""

from __future__ import annotations

from studio.clusters.scheduler import Placement
from workloads.manifests import distributed
from workloads.manifests.objects import (
    AUTOSCALING_METRIC_ANNOTATION,
    AUTOSCALING_TARGET_ANNOTATION,
    DEPLOYMENT,
    DISTRIBUTED,
    HPA,
    INGRESS,
    JOB,
    KIND_LABEL,
    KINDS,
    KNATIVE_API,
    KNATIVE_AUTOSCALING,
    KNATIVE_SERVICE,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    NAME_LIMIT,
    PROJECT_LABEL,
    PVC,
    SERVICE,
    TERMINATE_AFTER_PREEMPTION_ANNOTATION,
    URL_ACCESS_ANNOTATION,
    WORKLOAD_ID_LABEL,
    WorkloadRef,
    build,
    object_name,
    primary,
    workload_labels,
)
from workloads.manifests.placement import place

__all__ = [
    "AUTOSCALING_METRIC_ANNOTATION", "AUTOSCALING_TARGET_ANNOTATION", "DEPLOYMENT", "DISTRIBUTED", "HPA", "INGRESS",
    "JOB", "KIND_LABEL", "KINDS", "KNATIVE_API", "KNATIVE_AUTOSCALING", "KNATIVE_SERVICE", "MANAGED_BY",
    "MANAGED_BY_LABEL", "NAME_LIMIT", "PROJECT_LABEL", "PVC", "SERVICE", "TERMINATE_AFTER_PREEMPTION_ANNOTATION",
    "URL_ACCESS_ANNOTATION", "WORKLOAD_ID_LABEL", "WorkloadRef", "build_manifests", "object_kinds", "object_name",
    "primary_kind", "suspend_patch", "workload_labels",
]


def primary_kind(ref: WorkloadRef, *, knative: bool, spec: dict | None = None) -> tuple[str, str]:
    """The object whose status defines the workload's phase (a distributed training's depends on its
    framework, from `spec`)."""
    if ref.kind == DISTRIBUTED:
        return distributed.job_kind(spec or {})
    return primary(ref.kind, knative=knative)


def object_kinds(kind: str, *, knative: bool) -> list[tuple[str, str]]:
    """Every (apiVersion, kind) a workload of this kind may own, in creation order."""
    if kind == DISTRIBUTED:
        return [PVC, *distributed.POD_GROUP_KINDS, *distributed.JOB_KINDS, SERVICE, INGRESS]
    primary_api = primary(kind, knative=knative)
    if primary_api == KNATIVE_SERVICE:  # Knative owns the networking and the scaling
        return [PVC, KNATIVE_SERVICE]
    return [PVC, primary_api, SERVICE, INGRESS] + ([HPA] if kind == "inference" else [])


def suspend_patch(ref: WorkloadRef, *, suspended: bool, spec: dict | None = None) -> tuple[str, str, dict]:
    """(apiVersion, kind, merge-patch body) that suspends or resumes the workload's primary object."""
    if ref.kind == DISTRIBUTED:
        return distributed.suspend_patch(spec or {}, suspended=suspended)
    if ref.kind == "training":
        return (*JOB, {"spec": {"suspend": suspended}})
    if ref.kind == "workspace":
        return (*DEPLOYMENT, {"spec": {"replicas": 0 if suspended else 1}})
    raise ValueError(f"A {ref.kind} workload cannot be suspended.")


def build_manifests(
    ref: WorkloadRef, spec: dict, *, knative: bool = True, gpu_scheduler: str = "runai-scheduler",
    master: dict | None = None, gang: str | None = None, placement: Placement | None = None,
    node_pools: dict[str, tuple[str, str]] | None = None,
) -> list[dict]:
    """Every object of the workload, ordered for creation: claims, the primary object, Services,
    Ingress, HPA. A distributed training's master spec is `master`; `gang` the PodGroup API the cluster
    serves, if any (`distributed`); `placement` its project's KAI queue and priority class on a cluster that
    schedules with KAI Scheduler (`placement`: KAI's pod-grouper makes the gang's PodGroup there); `node_pools`
    the node label of each of the cluster's pools, which keeps the pods in the pools the spec names."""
    if ref.kind == DISTRIBUTED:
        objects = distributed.build(ref, spec, master=master, gang=None if placement else gang,
                                    gpu_scheduler=gpu_scheduler, min_available=placement is not None,
                                    node_pools=node_pools)
    else:
        objects = build(ref, spec, knative=knative, gpu_scheduler=gpu_scheduler, node_pools=node_pools)
    return place(objects, placement)
