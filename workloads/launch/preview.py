"""A launch preview (`?dryRun=true`): what a submit would create and what would decide it, with nothing created.

The same checks as `workload_submit` (project and role, the policy, node pools, the name, the quota) run as
reads; the objects are rendered by the same pure `workloads.manifests` as the push, and each is sent to the
project's cluster with `dryRun=All`, so the verdict is the cluster's own (admission, validation, defaulting).
Nothing is written: no workload row, no event, no audit row, no task, nothing stored on the cluster.

A project namespace that does not exist yet (it is made by the first push) cannot hold a dry-run object: the
server answers 404 for any namespaced create in it. The preview then lists the Namespace with its own verdict
and gives every namespaced object `allowed: null` with reason `NamespaceNotFound` — not checked, rather than a
refusal the real launch would not meet. A cluster that does not answer gives `allowed: null` with reason
`ClusterUnavailable` and our classified message, never the remote body.
"""

import base64
import copy
import uuid
from decimal import Decimal

from django.conf import settings
from rest_framework.exceptions import ValidationError

from policies.selectors import project_security_labels
from policies.services import policy_decision
from profiles.compose import MASK
from studio.clusters import kube
from studio.errors import Conflict
from studio.models import Project
from studio.selectors import node_pool_labels
from workloads import manifests
from workloads.cluster.push import pinned, placement_for
from workloads.manifests import distributed as manifest_distributed
from workloads.models import Workload
from workloads.services import (
    check_compute_quota,
    placed_pool,
    project_for_submit,
    project_spec_errors,
    quota_decision,
    unique_name,
    with_node_pools,
)
from workloads.specs import workload_gpus
from workloads.specs.distributed import master_spec_of
from workloads.specs.references import project_host

NAMESPACE = ("v1", "Namespace")


def secret_manifest(*, name: str, keys, ref: manifests.WorkloadRef) -> dict:
    """The launch Secret of a catalog launch with every value masked: its keys are what the pods reference,
    and the values never leave the request that carried them."""
    masked = base64.b64encode(MASK.encode()).decode()
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": name, "namespace": ref.namespace, "labels": manifests.workload_labels(ref)},
            "data": {key: masked for key in sorted(keys)}}


def workload_preview(*, kind: str, request: dict, user, secret: tuple[str, list[str]] | None = None) -> dict:
    """The preview of submitting `request` (a validated create body) as `user`; `secret` is a catalog
    launch's (Secret name, keys). 400/403/409 exactly where a submit would answer them."""
    project = project_for_submit(user, request)
    # Every spec the request holds, as the submit takes them (workload_submit): the workers' (or the only) spec and
    # a distributed training's own master spec, each with the policy's defaults, its violations listed.
    held = {"spec": request["spec"], "masterSpec": request.get("masterSpec")}
    policy: dict = {"allowed": True, "violations": []}
    errors: dict = {}
    for field, raw in held.items():
        if raw:
            held[field], found = policy_decision(kind=kind, project=project, spec=raw, field=field)
            held[field] = with_node_pools(project, held[field])
            policy = {"allowed": policy["allowed"] and found["allowed"],
                      "violations": policy["violations"] + found["violations"]}
            errors.update(project_spec_errors(project=project, spec=held[field], user=user, field=field))
    if errors:
        raise ValidationError(errors)
    spec, request = held["spec"], {**request, **{k: v for k, v in held.items() if v}}
    name = unique_name(request["name"], request.get("useGivenNameAsPrefix", False))
    if Workload.objects.live().filter(project=project, name=name).exists():
        raise Conflict(f"A workload named {name!r} already exists in project {project.name}.")
    check_compute_quota(project, kind, request)
    gpus = workload_gpus(kind, request)  # a distributed training's master and workers
    quota = quota_decision(project, kind, Decimal(gpus), spec=spec, with_forecast=True)
    ref = manifests.WorkloadRef(id=str(uuid.uuid4()), name=name, kind=kind, project=project.name,
                                namespace=project.namespace, suspended=False,
                                url_host=project_host(project.name, settings.EXPOSED_URL_DOMAIN))
    master = master_spec_of(request) if kind == Workload.Kind.DISTRIBUTED else None
    pool = quota.get("nodePool") or placed_pool(spec)
    return {"dryRun": True, "name": name, "objects": _objects(project, ref, spec, secret, master=master, pool=pool),
            "quota": quota, "policy": policy}


def _objects(project: Project, ref: manifests.WorkloadRef, spec: dict, secret, *, master=None,
             pool: str = "") -> list[dict]:
    """Each object the push would create, with the cluster's verdict (the namespace first when it is new)."""
    cluster = project.cluster
    try:
        conn = kube.connect(cluster)
        knative = cluster.has_knative
        if knative is None:  # not cached yet: asked, not written (a preview writes nothing)
            knative = kube.has_api_group(conn, "serving.knative.dev")
        namespace_missing = not kube.exists(conn, *NAMESPACE, None, ref.namespace)
        gang = manifest_distributed.gang_group(kube.api_groups(conn)) if master is not None else None
        unavailable = None
    except kube.ClusterError as exc:
        conn, knative, namespace_missing, gang = None, bool(cluster.has_knative), False, None
        unavailable = {"allowed": None, "code": exc.status, "reason": "ClusterUnavailable", "message": exc.message}
    pools = node_pool_labels(cluster.pk)
    built = manifests.build_manifests(ref, pinned(spec, pool), knative=knative,
                                      gpu_scheduler=settings.GPU_SCHEDULER_NAME, master=master and pinned(master, pool),
                                      gang=gang, node_pools=pools,
                                      placement=placement_for(cluster, project.name, ref.kind, spec, pool=pool,
                                                              pools=pools))
    if secret:
        built = [secret_manifest(name=secret[0], keys=secret[1], ref=ref), *built]
    if namespace_missing:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ref.namespace, "labels": {
            "app.kubernetes.io/managed-by": "paas-studio", manifests.PROJECT_LABEL: ref.project,
            **project_security_labels(project)}}}
        built = [namespace, *built]
    not_checked = {"allowed": None, "code": 404, "reason": "NamespaceNotFound",
                   "message": f"Not checked: namespace {ref.namespace} does not exist yet; the launch creates it "
                              "first, and the server checks namespaced objects only in an existing namespace."}
    result = []
    for obj in built:
        if unavailable:
            verdict = unavailable
        elif namespace_missing and obj["kind"] != "Namespace":
            verdict = not_checked
        else:
            verdict = kube.dry_run_create(conn, obj)
        meta = obj["metadata"]
        result.append({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"],
                       "namespace": meta.get("namespace"), "manifest": _shown(obj), "verdict": verdict})
    return result


def _shown(obj: dict) -> dict:
    """The manifest as the preview shows it: a Secret's values read as the mask."""
    if obj["kind"] != "Secret":
        return obj
    shown = copy.deepcopy(obj)
    shown["data"] = {key: MASK for key in obj.get("data") or {}}
    shown.pop("stringData", None)
    return shown
