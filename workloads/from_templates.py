"""A workload request with Run:ai's `templateId`: the template's assets fill the spec (environment: image,
command, arguments, variables, tools' ports, uid/gid; compute: GPUs, CPU, memory; data sources: volumes), then the
template's own fields, then the request's (assets/composition.py). The workload keeps the template and the assets
it came from (`Workload.template_id`, `made_from`); the assets record the use (they cannot be deleted under a live
workload) until the workload is deleted."""

from collections.abc import Mapping

from assets.composition import merged
from assets.services import asset_use_release
from assets.template_selectors import template_fill
from assets.templates import workload_assets_use
from studio.ids import is_uuid

# A distributed training's fields that are its workers', not its master's.
WORKERS_ONLY = ("distributedFramework", "numWorkers", "minReplicas", "maxReplicas", "slotsPerWorker",
                "sshAuthMountPath", "mpiLauncherCreationPolicy", "cleanPodPolicy", "completions", "parallelism")


def request_with_template(*, kind: str, data, user) -> tuple[object, dict]:
    """(the create body with the template's spec under the request's fields, the workload's provenance);
    a body without templateId (or one that is not a UUID: the request's validation names it) as it came."""
    if not isinstance(data, Mapping) or not is_uuid(data.get("templateId")):
        return data, {}
    filled = template_fill(user=user, template_id=data["templateId"], project_id=data.get("projectId"), kind=kind)
    own = data.get("spec")
    body = {**data, "spec": merged(filled.spec, own) if isinstance(own, Mapping) else (
        filled.spec if own is None else own)}
    master = (filled.template.spec.get("master") or {}).get("spec")
    if kind == "distributed" and master and not filled.template.spec.get("masterSpecSameAsWorker"):
        # the master: the workers' assets and fields less the workers' own, its template fields, the request's
        base = {k: v for k, v in filled.spec.items() if k not in WORKERS_ONLY}
        own_master = data.get("masterSpec")
        master = merged(base, master)
        body["masterSpec"] = merged(master, own_master) if isinstance(own_master, Mapping) else (
            master if own_master is None else own_master)
    return body, {"template_id": filled.template.pk, "made_from": {**filled.asset_ids, "used": filled.used}}


def asset_uses_record(workload) -> None:
    """The assets a workload made from a template uses, recorded with the assets."""
    used = (workload.made_from or {}).get("used") or []
    if used:
        workload_assets_use(workload_kind=workload.kind, workload_id=str(workload.pk), workload_name=workload.name,
                            asset_ids=used)


def asset_uses_release(workload) -> None:
    if workload.made_from:
        asset_use_release(consumer=workload.kind, consumer_id=str(workload.pk))
