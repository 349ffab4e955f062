"""A data volume on its cluster: the origin claim's volume copied, read-only, into each namespace that may use
it, as Run:ai copies a data volume's PVC into the namespaces of the projects it is shared with.

A PersistentVolume binds to one claim only, and a claim lives in one namespace; so for each project namespace the
data volume reaches, the origin claim's PersistentVolume is copied as a new one (`data-volume-<id>-<project>`:
the same storage source, ReadOnlyMany, reclaim policy Retain, so that removing a copy never deletes the data)
pre-bound to a claim `data-volume-<id>` in that namespace, which workloads mount read-only. The storage
driver must allow one source in several volumes (NFS, CephFS, host paths and most file CSI drivers do; a
ReadWriteOnce block device attached elsewhere does not — its data volume stays NotReady at the pods' mount).
Everything made carries the managed-by label and `paas-studio/datavolume-id`; the sync converges what exists
with what is wanted, so it is idempotent and repairs drift."""

from assets.datavolumes import projects_of, usable_in
from assets.models import DataVolume
from studio.clusters import kube

LABEL = "paas-studio/datavolume-id"
PROJECT_LABEL = "paas-studio/project"


def claim_name(data_volume_id) -> str:
    return f"data-volume-{data_volume_id}"


def _not_ready(dv: DataVolume, message: str) -> None:
    DataVolume.objects.filter(pk=dv.pk).update(phase=DataVolume.Phase.NOT_READY, phase_message=message)


def _labels(dv: DataVolume, project) -> dict:
    return {"app.kubernetes.io/managed-by": "paas-studio", LABEL: str(dv.pk), PROJECT_LABEL: project.name}


def _copy(dv: DataVolume, origin: dict, project) -> tuple[dict, dict]:
    spec = {k: v for k, v in origin["spec"].items() if k not in ("claimRef", "storageClassName", "accessModes",
                                                                  "persistentVolumeReclaimPolicy")}
    name = f"{claim_name(dv.pk)}-{project.pk}"
    volume = {"apiVersion": "v1", "kind": "PersistentVolume",
              "metadata": {"name": name, "labels": _labels(dv, project)},
              "spec": {**spec, "accessModes": ["ReadOnlyMany"], "persistentVolumeReclaimPolicy": "Retain",
                       "storageClassName": "", "claimRef": {"namespace": project.namespace,
                                                            "name": claim_name(dv.pk)}}}
    claim = {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
             "metadata": {"name": claim_name(dv.pk), "namespace": project.namespace, "labels": _labels(dv, project)},
             "spec": {"accessModes": ["ReadOnlyMany"], "storageClassName": "", "volumeName": name,
                      "resources": {"requests": {"storage": (spec.get("capacity") or {}).get("storage", "1Gi")}}}}
    return volume, claim


def _remove(conn, volumes: list[dict]) -> None:
    for volume in volumes:
        ref = volume["spec"].get("claimRef") or {}
        if ref.get("name"):
            kube.delete(conn, "v1", "PersistentVolumeClaim", ref.get("namespace"), ref["name"])
        kube.delete(conn, "v1", "PersistentVolume", None, volume["metadata"]["name"])


def _make(conn, volume: dict, claim: dict) -> None:
    kube.create_or_adopt(conn, volume, owner_label=LABEL)  # the volume first: the claim binds to it
    kube.create_or_adopt(conn, claim, owner_label=LABEL)


def claims_ensure(conn, *, project, data_volume_ids) -> list[str]:
    """The claims of the data volumes a workload of `project` mounts, in its namespace (which exists): called
    by the workloads' push before it creates the workload's objects. Data volumes the project may not use, or
    not Ready, are left out: the pods then wait for their claim, as on any cluster. The ids made."""
    made = []
    for dv in usable_in(project).filter(pk__in=[i for i in data_volume_ids if i], phase=DataVolume.Phase.READY):
        try:
            origin = kube.get(conn, "v1", "PersistentVolume", None, dv.pv_name)
        except kube.NotFound:
            continue
        _make(conn, *_copy(dv, origin, project))
        made.append(str(dv.pk))
    return made


def datavolume_sync(data_volume_id: str) -> None:
    dv = DataVolume.objects.select_related("project", "cluster").filter(pk=data_volume_id).first()
    if dv is None:
        return
    conn = kube.connect(dv.cluster)
    made = kube.list_objects(conn, "v1", "PersistentVolume", label_selector=f"{LABEL}={dv.pk}")
    if dv.phase == DataVolume.Phase.DELETING:
        _remove(conn, made)
        if dv.should_delete_original_volume:
            kube.delete(conn, "v1", "PersistentVolumeClaim", dv.project.namespace, dv.origin_pvc_name)
        dv.delete()
        return
    try:
        claim = kube.get(conn, "v1", "PersistentVolumeClaim", dv.project.namespace, dv.origin_pvc_name)
    except kube.NotFound:
        return _not_ready(dv, f"The claim {dv.origin_pvc_name} was not found in namespace {dv.project.namespace}.")
    volume_name = (claim.get("spec") or {}).get("volumeName")
    if (claim.get("status") or {}).get("phase") != "Bound" or not volume_name:
        return _not_ready(dv, f"The claim {dv.origin_pvc_name} is not bound to a volume yet.")
    try:
        origin = kube.get(conn, "v1", "PersistentVolume", None, volume_name)
    except kube.NotFound:
        return _not_ready(dv, f"The volume {volume_name} of claim {dv.origin_pvc_name} was not found.")
    wanted = {}
    for project in projects_of(dv):
        volume, copied = _copy(dv, origin, project)
        wanted[volume["metadata"]["name"]] = (project, volume, copied)
    _remove(conn, [v for v in made if v["metadata"]["name"] not in wanted])
    for project, volume, copied in wanted.values():
        # A namespace not made yet (no workload there so far) gets its copy when a workload is pushed to it
        # (claims_ensure): made here, it would lack the labels the workloads' push gives it.
        if kube.exists(conn, "v1", "Namespace", None, project.namespace):
            _make(conn, volume, copied)
    DataVolume.objects.filter(pk=dv.pk).update(phase=DataVolume.Phase.READY, phase_message="", pv_name=volume_name)
