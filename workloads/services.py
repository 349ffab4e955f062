"""Writes of workloads: submit, suspend, resume, delete. Each validates, writes in one transaction, records an
event and enqueues the cluster work on commit."""

import random
import string
import uuid
from decimal import Decimal
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from assets.datavolumes import usable_in as usable_data_volumes
from assets.services import asset_use_release
from perf import keyed_rows
from policies.services import policy_enforce
from profiles.models import LaunchSecret
from studio.audit import audit_record, snapshot
from studio.errors import Conflict
from studio.iam.permissions import ROLE_RANK, has_project_role, project_role
from studio.iam.pod_identity import ids_from_provider
from studio.models import DEFAULT_NODE_POOL, AuditEvent, Level, Project
from studio.org.numbers import Unit, quota_numbers
from studio.queue import enqueue_on_commit
from studio.selectors import node_pool_errors, quota_pools
from studio.words import gpu_count
from workloads import forecast, forecast_reads, placement
from workloads.compute_quota import compute_quota_errors
from workloads.from_templates import asset_uses_record, asset_uses_release
from workloads.models import Workload, WorkloadEvent
from workloads.signals import announce
from workloads.specs import gpu_request_of, validate_spec, workload_cpu_use, workload_gpus
from workloads.specs.distributed import replica_total
from workloads.specs.references import exposed_url_errors, secret_references


def _record(workload: Workload, reason: str, message: str, *, type=WorkloadEvent.Type.NORMAL) -> None:
    WorkloadEvent.objects.create(
        workload=workload, at=timezone.now(), type=type, reason=reason, message=message, phase=workload.actual_phase
    )


SUSPENDABLE = (Workload.Kind.TRAINING, Workload.Kind.WORKSPACE, Workload.Kind.DISTRIBUTED)
NAME_ATTEMPTS = 20  # generated names tried before a submission gives up: 26**5 suffixes make one retry rare


def _names(requested: str, as_prefix: bool):
    """The names to try: the requested one; with useGivenNameAsPrefix, the prefix with a new random 5-letter
    suffix each time (settings.WORKLOAD_NAME_SEED makes the sequence repeatable, for tests)."""
    if not as_prefix:
        yield requested
        return
    seed = settings.WORKLOAD_NAME_SEED
    source = random.Random(seed) if seed is not None else random.SystemRandom()
    for _ in range(NAME_ATTEMPTS):
        yield f"{requested[: 63 - 6]}-{''.join(source.choices(string.ascii_lowercase, k=5))}"


def unique_name(requested: str, as_prefix: bool) -> str:
    """One name as a submission would try it first (a launch preview shows it; nothing is reserved)."""
    return next(_names(requested, as_prefix))


class _NameTaken(Exception):
    pass


def _decimal(value) -> Decimal | None:
    return None if value is None or float(value) < 0 else Decimal(str(value))


def pool_quotas(project: Project, pools: list[str], held: dict[str, Decimal]) -> list[placement.PoolQuota]:
    """The project's GPU numbers in each of `pools`: its entry's deserved and limit there (a project without
    per-pool quotas: its totals in the default pool, deserved 0 under its limit elsewhere), its department's limit
    there, and what it holds there."""
    own = {(e.get("nodePool") or {}).get("name") or DEFAULT_NODE_POOL: e.get("gpu") or {}
           for e in project.node_pool_resources or () if isinstance(e, dict)}
    department = {(e.get("nodePool") or {}).get("name") or DEFAULT_NODE_POOL: e.get("gpu") or {}
                  for e in project.department.node_pool_resources or () if isinstance(e, dict)}
    capacity = (project.cluster.gpu_capacity or {}).get("pools") or {}
    out = []
    for name in pools:
        if own:
            gpu = own.get(name) or {}
            deserved, limit = _decimal(gpu.get("deserved")) or Decimal(0), _decimal(gpu.get("limit"))
        else:
            deserved = project.gpu_deserved if name == DEFAULT_NODE_POOL else Decimal(0)
            limit = project.gpu_limit
        out.append(placement.PoolQuota(name=name, deserved=deserved, limit=limit, held=held.get(name, Decimal(0)),
                                       department=project.department.name,
                                       department_limit=_decimal((department.get(name) or {}).get("limit")),
                                       largest_node=(capacity.get(name) or {}).get("largestNode")))
    return out


def allowed_pools(spec: dict | None) -> list[str]:
    return [str(p) for p in (spec or {}).get("nodePools") or () if p] or [DEFAULT_NODE_POOL]


def quota_decision(project: Project, kind: str, gpus: Decimal, *, spec: dict | None = None,
                   total: Decimal | None = None, with_forecast: bool = False) -> dict:
    """Whether `gpus` more fit the project. On a cluster that schedules with KAI Scheduler (docs/scheduling.md)
    work over quota waits in the project's queue, so only what could never run is refused (`_never_runs`: the
    workload's `total` GPUs over the project's or its department's limit or the cluster's GPUs, or a
    non-preemptible one over the project's deserved GPUs). Elsewhere inferences and workspaces stay within its
    deserved GPUs and trainings (distributed ones too) may use up to its limit.
    `{"allowed", "project", "requested", "deserved", "limit", "used", "allocated", "message"}` (+ `scheduler`,
    `nodePool` on KAI, and with `with_forecast` what the scheduler would do with it now: workloads/forecast.py).
    `used` is what the project requests now (its running and waiting GPUs) and `allocated` what of it runs: the
    organisation's numbers (studio.org.numbers), in the chosen pool on KAI, over every pool elsewhere."""
    # one query (its GPUs, per pool): on submission only when it asks for GPUs, as the quota sum always was
    numbers = quota_numbers(projects=[project], read_pools=False).project(project.pk) if gpus > 0 or with_forecast \
        else Unit()
    held = {name: n.requested for name, n in numbers.pools.items()}
    used = numbers.total.requested
    limit = project.gpu_limit
    answer = {"project": project.name, "requested": float(gpus), "deserved": float(project.gpu_deserved),
              "limit": None if limit is None else float(limit), "used": float(used),
              "allocated": float(numbers.total.allocated)}
    if project.cluster.uses_kai:
        never = _never_runs(project, kind, total if total is not None else gpus, spec or {})
        if never:
            return {**answer, "allowed": False, "scheduler": "kai", "message": never}
        pools = pool_quotas(project, allowed_pools(spec), held)
        per_pod = gpu_request_of(spec) if spec else Decimal(0)
        chosen, how, why = placement.choose(pools, total if total is not None else gpus, project.name, per_pod)
        if chosen is None:
            return {**answer, "allowed": False, "scheduler": "kai", "message": f"It can never run: {why}."}
        in_pool = chosen.held + gpus
        answer = {**answer, "nodePool": chosen.name, "deserved": float(chosen.deserved),
                  "limit": None if chosen.limit is None else float(chosen.limit), "used": float(chosen.held),
                  "allocated": float(numbers.pools[chosen.name].allocated if chosen.name in numbers.pools else 0)}
        if with_forecast:
            state = forecast_reads.pool_state(project, chosen.name, department_limit=chosen.department_limit)
            answer["forecast"] = forecast.forecast(state, float(gpus), preemptible=kind in forecast_reads.PREEMPTIBLE_KINDS)
        return {**answer, "allowed": True, "scheduler": "kai", "message": (
            f"Within the project's GPU quota in node pool {chosen.name}." if how == "deserved" or gpus <= 0 else
            f"Over the project's deserved GPUs in node pool {chosen.name} ({_n(in_pool)} of {_n(chosen.deserved)}): "
            f"it waits in project {project.name}'s queue there until KAI Scheduler lends it idle GPUs (a training may "
            "be reclaimed later)." if how == "over-quota" else
            f"Over the project's GPU limit in node pool {chosen.name} for now ({_n(in_pool)} of {_n(chosen.limit)}): "
            f"it waits in project {project.name}'s queue there until its other workloads there finish.")}
    message = ""
    if gpus <= 0:
        pass
    elif kind in (Workload.Kind.TRAINING, Workload.Kind.DISTRIBUTED):
        if limit is not None and used + gpus > limit:
            message = f"Project GPU limit exceeded: {gpu_count(used + gpus)} requested in total, limit is {limit:g}."
    elif used + gpus > project.gpu_deserved:
        message = (f"Project GPU quota (deserved) exceeded: {gpu_count(used + gpus)} requested in total, deserved is "
                   f"{project.gpu_deserved:g}; only trainings may go over it.")
    return {**answer, "allowed": not message, "message": message or "Within the project's GPU quota."}


NON_PREEMPTIBLE_CLASSES = ("build", "inference")


def _preemptible(kind: str, spec: dict) -> bool:
    """Run:ai's classes (workloads.runai_fields): trainings are preemptible unless told otherwise."""
    if spec.get("priorityClass"):
        return spec["priorityClass"] not in NON_PREEMPTIBLE_CLASSES
    if spec.get("preemptibility"):
        return spec["preemptibility"] == "preemptible"
    return kind in (Workload.Kind.TRAINING, Workload.Kind.DISTRIBUTED)


def _department_gpu_limit(project: Project) -> Decimal | None:
    limits = [(entry.get("gpu") or {}).get("limit") for entry in project.department.node_pool_resources or ()]
    if not limits or any(v is None or float(v) < 0 for v in limits):
        return None
    return Decimal(str(sum(float(v) for v in limits)))


def _n(value) -> str:
    return f"{float(value):g}"


def _never_runs(project: Project, kind: str, gpus: Decimal, spec: dict) -> str:
    """Why a workload of `gpus` GPUs could never run on the project's KAI queue; "" when it could."""
    if gpus <= 0:
        return ""
    if project.gpu_limit is not None and gpus > project.gpu_limit:
        return (f"It can never run: {gpu_count(gpus)} is more than project {project.name}'s limit of "
                f"{gpu_count(project.gpu_limit)}.")
    department_limit = _department_gpu_limit(project)
    if department_limit is not None and gpus > department_limit:
        return (f"It can never run: {gpu_count(gpus)} is more than department {project.department.name}'s limit of "
                f"{gpu_count(department_limit)}.")
    capacity = (project.cluster.gpu_capacity or {}).get("total")
    if capacity and gpus > capacity:
        return f"It can never run: {gpu_count(gpus)} is more than cluster {project.cluster.name} has ({_n(capacity)})."
    per_pod = gpu_request_of(spec) if spec else Decimal(0)
    largest = (project.cluster.gpu_capacity or {}).get("largestNode")
    if largest and per_pod > largest:  # a pod lands on one node: no share of the cluster's total can hold it
        return (f"It can never run: each pod asks for {gpu_count(per_pod)} and the largest node of cluster "
                f"{project.cluster.name} has {_n(largest)}.")
    if not _preemptible(kind, spec) and 0 <= project.gpu_deserved < gpus:
        return (f"It can never run: a non-preemptible {kind} runs only within project {project.name}'s deserved "
                f"GPUs ({_n(project.gpu_deserved)}), and it asks for {_n(gpus)}. Trainings may go over the quota.")
    return ""


def check_quota(project: Project, kind: str, gpus: Decimal, *, spec: dict | None = None,
                total: Decimal | None = None) -> dict:
    """The quota decision (quota_decision); a 400 naming why when it is refused."""
    decision = quota_decision(project, kind, gpus, spec=spec, total=total)
    if not decision["allowed"]:
        raise ValidationError({"spec.compute": [decision["message"]]})
    return decision


def check_compute_quota(project: Project, kind: str, request: dict) -> None:
    """A 400 naming the CPU or memory request when all the workload's pods could never fit the project's or its
    department's CPU or memory limit (workloads.compute_quota)."""
    errors = compute_quota_errors(project, kind, request, allowed_pools(request["spec"]))
    if errors:
        raise ValidationError(errors)


def project_for_submit(user, request: dict) -> Project:
    # The caller's role in the project decides both: no role, not visible (as Project.objects.visible_to: the same
    # rules, already read for the request); below member, not allowed. Then the row, by its key.
    role = project_role(user, int(request["projectId"]))
    project = next(iter(keyed_rows.rows(Project, related=("department", "cluster"), id=request["projectId"])), None)
    if project is None or role is None:
        raise ValidationError({"projectId": ["No such project, or you are not a member of it."]})
    if ROLE_RANK[role] < ROLE_RANK[Level.MEMBER]:
        raise PermissionDenied("Viewers may not submit workloads.")
    if str(project.cluster_id) != str(request["clusterId"]):
        raise ValidationError({"clusterId": [f"Project {project.name} runs on cluster {project.cluster_id}."]})
    return project


def with_node_pools(project: Project, spec: dict) -> dict:
    """The spec with the pools its pods may use: the ones it names, else the project's defaultNodePools (Run:ai),
    else, where the project has per-pool quotas, those pools. The manifests put the pool rule into every node
    affinity term, so a pod never lands in a pool outside the project's quotas (security round 3, S02)."""
    if spec.get("nodePools"):
        return spec
    pools = (project.runai_settings or {}).get("defaultNodePools") or quota_pools(project)
    return {**spec, "nodePools": list(pools)} if pools else spec


def placed_pool(spec: dict) -> str:
    """The node pool a workload is placed in: the first of the pools it may use (with_node_pools), "" (the
    cluster's default pool) when it names none."""
    return str((spec.get("nodePools") or [""])[0] or "")


def project_spec_errors(*, project: Project, spec: dict, user, field: str = "spec") -> dict:
    """What a spec (after its policy) may not hold in its project as `user` sets it, {"<field>.<path>": [why]}:
    node pools outside the project's quotas or cluster (a workload naming one would stay Pending for ever), a
    Secret whose values `user` may not see (S07), a data volume the project may not use, an exposed URL on a
    host that is not the project's (S06)."""
    errors = {f"{field}.{key.removeprefix('spec.')}": value
              for key, value in node_pool_errors(project, spec.get("nodePools")).items()}
    for path, message in secret_errors(project=project, spec=spec, user=user).items():
        errors.setdefault(f"{field}.{path}", []).append(message)
    for path, message in data_volume_errors(project=project, spec=spec).items():
        errors.setdefault(f"{field}.{path}", []).append(message)
    own_hosts = frozenset(own_host_names())
    for path, message in exposed_url_errors(spec, project=project.name, domain=settings.EXPOSED_URL_DOMAIN,
                                            own_hosts=own_hosts).items():
        errors.setdefault(f"{field}.{path}", []).append(message)
    return errors


def own_host_names() -> set[str]:
    """The host names PaaS Studio itself answers on: ALLOWED_HOSTS' plain names and CSRF_TRUSTED_ORIGINS' hosts
    (patterns such as `.example.com` or `*` name no one host)."""
    hosts = {h.lower() for h in settings.ALLOWED_HOSTS if h and not h.startswith(".") and "*" not in h}
    hosts |= {(urlsplit(o).hostname or "").lower() for o in settings.CSRF_TRUSTED_ORIGINS if "*" not in o}
    return hosts - {""}


def secret_errors(*, project: Project, spec: dict, user) -> dict[str, str]:
    """{field: why} for each Secret the spec's pods would read that holds values `user` may not see: a catalog
    launch's Secret (a notebook's token, a secret input) is its submitter's and the project admins' (as its
    sensitive outputs are), so neither a colleague's new workload nor a colleague's change to the workload that
    uses it may point a pod at it. Secrets made outside PaaS Studio are the namespace's, as Run:ai's credentials
    are the project's."""
    refs = secret_references(spec)
    if not refs:
        return {}
    names = {name for _, name in refs}
    launches = {row.name: row.workload_id for row in LaunchSecret.objects.filter(name__in=names)}
    if not launches:
        return {}
    owners = {w.pk: w for w in Workload.objects.filter(pk__in=launches.values(), project=project)
              .only("pk", "name", "created_by_id", "project_id")}
    errors = {}
    for path, name in refs:
        workload = owners.get(launches.get(name))
        if workload is not None and not _may_see_launch_values(user, workload):
            errors[path] = (f"Secret {name} holds the launch values of workload {workload.name}: only its submitter "
                            "and the project's admins may use it in a workload, or change one that does.")
    return errors


def data_volume_errors(*, project: Project, spec: dict) -> dict[str, str]:
    """{field: why} for each data volume the spec mounts that its project may not use (not its own, nor shared
    with it, its department or its cluster): its pods would wait for a claim that is never made. One message
    whether the data volume is another tenant's or does not exist, so that the answer tells nothing of others."""
    storage = spec.get("storage") if isinstance(spec.get("storage"), dict) else {}
    mounted = {}
    for i, item in enumerate(storage.get("dataVolume") or []):
        if not isinstance(item, dict) or item.get("exclude"):
            continue
        try:
            mounted[f"storage.dataVolume[{i}].id"] = uuid.UUID(str(item.get("id")))
        except ValueError:
            continue  # not an id: the spec's own validation names it
    if not mounted:
        return {}
    usable = set(usable_data_volumes(project).filter(pk__in=set(mounted.values())).values_list("pk", flat=True))
    return {path: f"No data volume {pk} that project {project.name} may use: its own, or one shared with it, its "
                  "department or its cluster." for path, pk in mounted.items() if pk not in usable}


def _may_see_launch_values(user, workload: Workload) -> bool:
    return workload.created_by_id == getattr(user, "pk", None) or has_project_role(user, workload.project_id,
                                                                                   Level.ADMIN)


def spec_for_project(*, kind: str, project: Project, spec: dict, user, field: str = "spec") -> dict:
    """A spec as it enters its project, set by `user`: the policy's defaults filled and its rules checked, the node
    pools set and checked, its Secrets and exposed URLs checked (project_spec_errors). Every path that sets a
    workload's spec (submit, master spec, inference update, profile upgrade) goes through it."""
    try:
        spec = policy_enforce(kind=kind, project=project, spec=spec)
    except ValidationError as exc:
        raise ValidationError({field: exc.detail["spec"]}) from None
    spec = with_node_pools(project, spec)
    errors = project_spec_errors(project=project, spec=spec, user=user, field=field)
    if errors:
        raise ValidationError(errors)
    return spec


def workload_submit(*, kind: str, request: dict, user, source: str = Workload.Source.API,
                    provenance: dict | None = None) -> Workload:
    """Create a workload from a validated create body (workloads.specs) and enqueue its push to the cluster."""
    project = project_for_submit(user, request)
    # Every path (API, catalog launch, Kit stream) arrives here: the one place the policy applies.
    spec = spec_for_project(kind=kind, project=project, spec=request["spec"], user=user)
    # uidGidSource fromIdpToken (asked for, or the policy's default): the ids of the user's identity provider.
    request = {**request, "spec": ids_from_provider(spec, user=user)}
    if request.get("masterSpec"):  # a distributed training's master: the same rules, named by its path
        master = spec_for_project(kind=kind, project=project, spec=request["masterSpec"], user=user,
                                  field="masterSpec")
        request["masterSpec"] = ids_from_provider(master, user=user, path="masterSpec")
    gpus = workload_gpus(kind, request)
    check_compute_quota(project, kind, request)
    as_prefix = bool(request.get("useGivenNameAsPrefix", False))
    for name in _names(request["name"], as_prefix):
        try:
            return _create(kind=kind, name=name, project=project, request=request, user=user, gpus=gpus,
                           source=source, provenance=provenance)
        except _NameTaken as exc:
            if not as_prefix:
                raise Conflict(f"A workload named {name!r} already exists in project {project.name}.") from exc
    raise Conflict(f"No free name with prefix {request['name']!r} in project {project.name} after "
                   f"{NAME_ATTEMPTS} attempts.")


def _create(*, kind: str, name: str, project: Project, request: dict, user, gpus: Decimal, source: str,
            provenance: dict | None) -> Workload:
    try:
        with transaction.atomic():
            pool = placed_pool(request["spec"])
            if gpus > 0:  # serialise the quota checks of the project; without GPUs there is nothing to count
                keyed_rows.lock(Project, project.pk)
                pool = check_quota(project, kind, gpus, spec=request["spec"]).get("nodePool", pool)
            # A taken name is the unique constraint's refusal (one_live_workload_per_name): no query before it.
            workload = Workload.objects.create(
                kind=kind, name=name, requested_name=request["name"], project=project,
                department=project.department, cluster=project.cluster, created_by=user,
                created_by_name=user.email or user.get_username(), request=request, spec=request["spec"],
                gpu_request=gpus, source=source, requested_pods=requested_pods(kind, request),
                node_pool=pool, **cpu_use(kind, request),
                phase_updated_at=timezone.now(), **(provenance or {}),
            )
            _record(workload, "Submitted", f"Accepted by {user.get_username()}.")
            asset_uses_record(workload)
            audit_record(actor=user, action=AuditEvent.Action.CREATE, instance=workload)
            enqueue_on_commit("workloads.tasks.workload_push", str(workload.pk))
    except IntegrityError:
        if Workload.objects.live().filter(project=project, name=name).exists():
            raise _NameTaken(name) from None
        raise
    return workload


def cpu_use(kind: str, request: dict) -> dict:
    """The row's `cpu_request` (millicores) and `memory_request` (bytes): over every pod it may run at once."""
    cpu, memory = workload_cpu_use(kind, request)
    return {"cpu_request": cpu, "memory_request": memory}


def requested_pods(kind: str, request: dict) -> int:
    spec = request["spec"]
    if kind == Workload.Kind.DISTRIBUTED:
        return replica_total(request)
    if kind == Workload.Kind.TRAINING:
        return int(spec.get("parallelism") or 1)
    if kind == Workload.Kind.INFERENCE:
        return max(1, int((spec.get("autoscaling") or {}).get("minReplicas") or 1))
    return 1


def _require_role(user, workload: Workload) -> None:
    if not has_project_role(user, workload.project_id, Level.MEMBER):
        raise PermissionDenied("Viewers may not change workloads.")


def _transition(workload: Workload, *, desired: str, phase: str, reason: str, message: str, task: str,
                actor=None) -> Workload:
    """Move the workload towards `desired`; recorded in its timeline and in the audit trail (by `actor`, or
    the system's when the platform decided it)."""
    with transaction.atomic():
        locked = Workload.objects.select_for_update().get(pk=workload.pk)
        before = snapshot(locked)
        locked.desired_phase = desired
        if locked.actual_phase != phase:
            locked.actual_phase, locked.phase_updated_at = phase, timezone.now()
        if desired == Workload.Desired.DELETED:
            locked.deleted_at = timezone.now()
            asset_uses_release(locked)  # its assets may be deleted now
        locked.save()
        _record(locked, reason, message)
        audit_record(actor=actor, instance=locked, before=before, action=AuditEvent.Action.DELETE
                     if desired == Workload.Desired.DELETED else AuditEvent.Action.UPDATE)
        enqueue_on_commit(task, str(locked.pk))
    return locked


def workload_suspend(*, workload: Workload, user) -> Workload:
    _require_role(user, workload)
    if workload.kind not in SUSPENDABLE:
        raise ValidationError({"workloadId": ["Only trainings, distributed trainings and workspaces can be suspended."]})
    if workload.is_finished:
        raise ValidationError({"workloadId": [f"The workload has finished ({workload.actual_phase}); nothing to suspend."]})
    if workload.desired_phase == Workload.Desired.STOPPED:
        return workload  # already asked: accepting again changes nothing
    return _transition(workload, desired=Workload.Desired.STOPPED, phase=Workload.Phase.STOPPING,
                       reason="Suspend", message=f"Suspended by {user.get_username()}.", task="workloads.tasks.workload_suspend",
                       actor=user)


def workload_suspend_by_system(*, workload: Workload, reason: str, message: str) -> Workload:
    """A suspend the platform decides (idle GPU reclaim, a time limit: workloads/cluster/reclaim.py), with its reason
    as the event's; resumed like any other."""
    with transaction.atomic():
        workload = _transition(workload, desired=Workload.Desired.STOPPED, phase=Workload.Phase.STOPPING,
                               reason=reason, message=message, task="workloads.tasks.workload_suspend")
        announce(Workload, [{"workload_id": str(workload.pk), "phase": Workload.Phase.STOPPING, "reason": reason,
                             "message": message, "at": workload.phase_updated_at or timezone.now()}])
    return workload


def workload_resume(*, workload: Workload, user) -> Workload:
    _require_role(user, workload)
    if workload.kind not in SUSPENDABLE:
        raise ValidationError({"workloadId": ["Only trainings, distributed trainings and workspaces can be resumed."]})
    if workload.is_finished:
        raise ValidationError({"workloadId": [f"The workload has finished ({workload.actual_phase}); it cannot resume."]})
    if workload.desired_phase == Workload.Desired.RUNNING:
        return workload
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=workload.project_id)
        check_quota(project, workload.kind, workload.gpu_request, spec=workload.spec)
        return _transition(workload, desired=Workload.Desired.RUNNING, phase=Workload.Phase.RESUMING,
                           reason="Resume", message=f"Resumed by {user.get_username()}.", task="workloads.tasks.workload_resume",
                           actor=user)


def workload_update(*, workload: Workload, spec_changes: dict, user) -> Workload:
    """Run:ai latest's PATCH of an inference: the given top-level spec fields replace the current ones, the
    whole spec is validated and held to the policy again, and the primary object is rolled to a new revision
    (Knative makes a Revision; a Deployment a new ReplicaSet) by the workload_roll task."""
    _require_role(user, workload)
    if workload.kind != Workload.Kind.INFERENCE:
        raise ValidationError({"workloadId": ["Only inferences can be updated."]})
    if not isinstance(spec_changes, dict):
        raise ValidationError({"spec": ["Must be a JSON object."]})
    try:
        merged = validate_spec(workload.kind, {**workload.spec, **spec_changes})
    except ValidationError as exc:
        raise ValidationError({"spec": exc.detail}) from None
    spec = spec_for_project(kind=workload.kind, project=workload.project, spec=merged, user=user)
    gpus = workload_gpus(workload.kind, {"spec": spec})
    check_compute_quota(workload.project, workload.kind, {"spec": spec})
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=workload.project_id)
        locked = Workload.objects.select_for_update().get(pk=workload.pk)
        before = snapshot(locked)
        if gpus > locked.gpu_request:  # only the increase needs room in the quota
            check_quota(project, locked.kind, gpus - locked.gpu_request, spec=spec, total=gpus)
        revision = locked.events.filter(reason="Updated").count() + 2  # the create was revision 1
        locked.spec, locked.request = spec, {**locked.request, "spec": spec}
        locked.gpu_request, locked.requested_pods = gpus, requested_pods(locked.kind, {"spec": spec})
        for name, value in cpu_use(locked.kind, {"spec": spec}).items():
            setattr(locked, name, value)
        if locked.actual_phase not in (Workload.Phase.CREATING, Workload.Phase.PENDING):
            locked.actual_phase, locked.phase_updated_at = Workload.Phase.UPDATING, timezone.now()
        locked.save()
        _record(locked, "Updated", f"Revision {revision} by {user.get_username()}: "
                                   f"{', '.join(sorted(spec_changes)) or 'no fields'} changed.")
        audit_record(actor=user, action=AuditEvent.Action.UPDATE, instance=locked, before=before)
        enqueue_on_commit("workloads.tasks.workload_roll", str(locked.pk))
    return locked


def workload_delete(*, workload: Workload, user) -> Workload:
    _require_role(user, workload)
    asset_use_release(consumer=workload.kind, consumer_id=str(workload.pk))  # its assets may be deleted now
    return _transition(workload, desired=Workload.Desired.DELETED, phase=Workload.Phase.DELETING,
                       reason="Delete", message=f"Deleted by {user.get_username()}.", task="workloads.tasks.workload_remove",
                       actor=user)


def workload_delete_by_system(*, workload: Workload, reason: str, message: str) -> Workload:
    """A delete the platform decides (a Kit stream left idle: kit.sessions), with its reason as the event's."""
    asset_use_release(consumer=workload.kind, consumer_id=str(workload.pk))
    return _transition(workload, desired=Workload.Desired.DELETED, phase=Workload.Phase.DELETING,
                       reason=reason, message=message, task="workloads.tasks.workload_remove")


def project_workloads_release(*, project: Project, unreached: list[str] = ()) -> None:
    """Before a project is deleted: its deleted workloads go with it (their events, pods, samples and launch
    Secrets' values), those whose removal the cluster has not confirmed yet too once their delete was sent again
    (`unreached`: the ones whose cluster could not be reached). A live workload, or an unreached one, keeps the
    project: a 409 naming it. Deleted rows were what made every project that ever ran one undeletable."""
    rows = Workload.objects.filter(project=project)
    live = list(rows.filter(deleted_at__isnull=True).order_by("name").values_list("name", flat=True)[:6])
    if live:
        shown = ", ".join(live[:5]) + (", ..." if len(live) > 5 else "")
        raise Conflict(f"Project {project.name} still has live workloads: {shown}. Delete them first.")
    if unreached:
        shown = ", ".join(sorted(unreached)[:5]) + (", ..." if len(unreached) > 5 else "")
        raise Conflict(f"Project {project.name}'s cluster {project.cluster.name} could not be reached to finish "
                       f"removing its deleted workloads: {shown}. Try again once the cluster answers.")
    ids = list(rows.values_list("pk", flat=True))
    LaunchSecret.objects.filter(workload_id__in=ids).delete()
    rows.delete()
