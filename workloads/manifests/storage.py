"""Pod volumes of a workload (spec.storage), their mounts, the claims to create and git init containers.

Volume names come from the source type and index (`pvc-0`, `git-1`): the example bodies (workloads/api/seed_examples.py)
give every source the same `name`, and a pod refuses two volumes of one name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workloads.manifests.parts import enabled, number_text

GIT_IMAGE = "alpine/git:2.45.2"
GIT_INIT_CONTAINER = "git-clone"
S3_CSI_DRIVER = "rclone.csi.veloxpack.io"  # why this driver: see `_s3_volume`
ACCESS_MODES = {"readWriteOnce": "ReadWriteOnce", "readOnlyMany": "ReadOnlyMany", "readWriteMany": "ReadWriteMany"}
MOUNT_PROPAGATIONS = {"None", "HostToContainer", "Bidirectional"}


@dataclass
class Storage:
    volumes: list[dict] = field(default_factory=list)
    mounts: list[dict] = field(default_factory=list)
    devices: list[dict] = field(default_factory=list)  # raw block PVCs
    init_containers: list[dict] = field(default_factory=list)
    claims: list[dict] = field(default_factory=list)  # PVC specs to create: {"name", "spec"}

    def add(self, volume: dict, mount_path, *, read_only=False, propagation=None, sub_path=None) -> None:
        self.volumes.append(volume)
        if not mount_path:
            return
        mount = {"name": volume["name"], "mountPath": mount_path}
        if sub_path:
            mount["subPath"] = sub_path
        if read_only:
            mount["readOnly"] = True
        if propagation in MOUNT_PROPAGATIONS:
            mount["mountPropagation"] = propagation
        self.mounts.append(mount)


def _mode(item: dict) -> dict:
    """Run:ai's `defaultMode` is the octal text "0644"; Kubernetes takes the number."""
    mode = item.get("defaultMode")
    return {"defaultMode": int(mode, 8)} if isinstance(mode, str) and mode else {}


def claim_spec(info: dict, *, shared: bool = False) -> dict:
    """`shared` (Run:ai's dataSharing): with no access mode asked for, other workloads may mount the claim too
    (ReadWriteMany instead of ReadWriteOnce)."""
    info = info if isinstance(info, dict) else {}
    modes = info.get("accessModes") if isinstance(info.get("accessModes"), dict) else {}
    default = "ReadWriteMany" if shared else "ReadWriteOnce"
    spec = {
        "accessModes": [mode for key, mode in ACCESS_MODES.items() if modes.get(key)] or [default],
        "resources": {"requests": {"storage": number_text(info.get("size") or "1Gi")}},
    }
    if info.get("storageClass"):
        spec["storageClassName"] = info["storageClass"]
    if info.get("volumeMode") in ("Filesystem", "Block"):
        spec["volumeMode"] = info["volumeMode"]
    return spec


def _pvc(st: Storage, i: int, item: dict, base_name: str) -> None:
    name = f"pvc-{i}"
    info = item.get("claimInfo") if isinstance(item.get("claimInfo"), dict) else {}
    read_only = bool(item.get("readOnly"))
    if item.get("ephemeral"):
        # A generic ephemeral volume: Kubernetes creates and deletes the claim with the pod.
        volume = {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": claim_spec(info)}}}
    else:
        # `claimName` names an existing claim only (as in Run:ai): a claim we create is named after the
        # workload, so two workloads never adopt — and later delete — each other's data.
        existing = item.get("claimName") if item.get("existingPvc") else None
        claim = existing or f"{base_name}-{name}"
        if not existing:
            st.claims.append({"name": claim, "spec": claim_spec(info, shared=bool(item.get("dataSharing")))})
        source = {"claimName": claim, **({"readOnly": True} if read_only else {})}
        volume = {"name": name, "persistentVolumeClaim": source}
    if info.get("volumeMode") == "Block":
        st.volumes.append(volume)
        if item.get("path"):
            st.devices.append({"name": name, "devicePath": item["path"]})
    else:
        st.add(volume, item.get("path"), read_only=read_only)


def _git(st: Storage, i: int, item: dict) -> None:
    name = f"git-{i}"
    st.add({"name": name, "emptyDir": {}}, item.get("path"))
    env = [
        {"name": "GIT_REPOSITORY", "value": str(item.get("repository") or item.get("url") or "")},
        {"name": "GIT_BRANCH", "value": str(item.get("branch") or "")},
        {"name": "GIT_REVISION", "value": str(item.get("revision") or "")},
        {"name": "HOME", "value": "/tmp"},  # git writes config there; the image may run as any uid
    ]
    # latest's secretRef {name, secretKeyOfUser, secretKeyOfPassword} is 2.18's passwordSecret + secretKeyOf*.
    ref = item.get("secretRef") if isinstance(item.get("secretRef"), dict) else {}
    secret = ref.get("name") or item.get("passwordSecret")
    if secret:
        for var, key in (("GIT_USERNAME", "secretKeyOfUser"), ("GIT_PASSWORD", "secretKeyOfPassword")):
            if ref.get(key) or item.get(key):
                env.append({"name": var, "valueFrom": {"secretKeyRef": {"name": secret, "key": ref.get(key) or item[key]}}})
    # Credentials go through a credential helper, never into the URL or .git/config.
    script = (
        'set -eu\n[ -n "$GIT_REPOSITORY" ] || { echo "git: no repository given" >&2; exit 1; }\n'
        "git config --global credential.helper "
        "'!f() { echo \"username=${GIT_USERNAME:-}\"; echo \"password=${GIT_PASSWORD:-}\"; }; f'\n"
        'git clone ${GIT_BRANCH:+--branch "$GIT_BRANCH"} -- "$GIT_REPOSITORY" /repo\n'
        '[ -z "$GIT_REVISION" ] || git -C /repo checkout --detach "$GIT_REVISION"\n'
    )
    st.init_containers.append({
        "name": f"{GIT_INIT_CONTAINER}-{i}", "image": GIT_IMAGE, "command": ["/bin/sh", "-c", script],
        "env": env, "volumeMounts": [{"name": name, "mountPath": "/repo"}],
    })


def _s3_volume(i: int, item: dict) -> dict:
    """S3 as an inline CSI volume of the rclone CSI driver.

    Why CSI and not a sidecar: a FUSE sidecar must run privileged with /dev/fuse in the user's pod,
    which breaks runAsNonRoot and Pod Security "restricted"; the CSI node plugin mounts on the host.
    Why inline and why rclone: an inline volume is namespaced and lives and dies with the pod, so no
    cluster-scoped PersistentVolume has to be created and cleaned up per workload. The rclone driver
    supports the Ephemeral lifecycle mode with `nodePublishSecretRef` read from the pod's namespace;
    k8s-csi-s3 needs NodeStage and Mountpoint-S3 supports static PVs only. The driver reads rclone
    options from the secret's keys, so the secret named by `accessKeySecret` must hold
    `s3-access-key-id` and `s3-secret-access-key`; `secretKeyOf*` cannot be remapped by any CSI driver.
    """
    attributes = {"remote": "s3", "remoteType": "s3", "remotePath": str(item.get("bucket") or ""),
                  "s3-provider": "Other" if item.get("url") else "AWS"}
    if item.get("url"):
        attributes["s3-endpoint"] = str(item["url"])
    csi = {"driver": S3_CSI_DRIVER, "volumeAttributes": attributes}
    if item.get("accessKeySecret"):
        csi["nodePublishSecretRef"] = {"name": item["accessKeySecret"]}
    return {"name": f"s3-{i}", "csi": csi}


def storage(spec: dict, *, base_name: str, large_shm: bool = False) -> Storage:
    """Volumes, mounts, init containers and claims to create, in the order the spec lists sources."""
    raw = spec.get("storage") if isinstance(spec.get("storage"), dict) else {}
    st = Storage()
    for i, item in enumerate(enabled(raw.get("pvc"))):
        _pvc(st, i, item, base_name)
    for i, item in enumerate(enabled(raw.get("dataVolume"))):
        # A Run:ai data volume is a claim copied into the project's namespace, named after the data volume's id
        # (assets/datavolumes_cluster.py); data volumes are shared read-only.
        st.add({"name": f"data-volume-{i}", "persistentVolumeClaim": {"claimName": f"data-volume-{item.get('id')}",
                                                                      "readOnly": True}},
               item.get("mountPath"), read_only=True)
    for i, item in enumerate(enabled(raw.get("configMapVolume"))):
        source = {"name": str(item.get("configMap") or ""), **_mode(item)}
        st.add({"name": f"configmap-{i}", "configMap": source}, item.get("mountPath"), sub_path=item.get("subPath"))
    for i, item in enumerate(enabled(raw.get("secretVolume"))):
        st.add({"name": f"secret-{i}", "secret": {"secretName": str(item.get("secret") or ""), **_mode(item)}},
               item.get("mountPath"))
    for i, item in enumerate(enabled(raw.get("emptyDirVolume"))):
        empty_dir = {k: item[k] for k in ("medium", "sizeLimit") if item.get(k)}
        st.add({"name": f"emptydir-{i}", "emptyDir": empty_dir}, item.get("path"))
    for i, item in enumerate(enabled(raw.get("hostPath"))):
        st.add({"name": f"hostpath-{i}", "hostPath": {"path": str(item.get("path") or "")}}, item.get("mountPath"),
               read_only=bool(item.get("readOnly")), propagation=item.get("mountPropagation"))
    for i, item in enumerate(enabled(raw.get("nfs"))):
        nfs = {"server": str(item.get("server") or ""), "path": str(item.get("path") or "")}
        st.add({"name": f"nfs-{i}", "nfs": {**nfs, **({"readOnly": True} if item.get("readOnly") else {})}},
               item.get("mountPath"), read_only=bool(item.get("readOnly")))
    for i, item in enumerate(enabled(raw.get("git"))):
        _git(st, i, item)
    for i, item in enumerate(enabled(raw.get("s3"))):
        st.add(_s3_volume(i, item), item.get("path"), read_only=bool(item.get("readOnly")))
    if large_shm:
        st.add({"name": "dshm", "emptyDir": {"medium": "Memory"}}, "/dev/shm")
    return st


def unique_mounts(st: Storage) -> None:
    """The API server refuses two mounts at one path (the example bodies put configMap and secret at "string"):
    the first source listed keeps the path, and a volume left without any mount is dropped."""
    seen, mounts = set(), []
    for mount in st.mounts:
        if mount["mountPath"] not in seen:
            seen.add(mount["mountPath"])
            mounts.append(mount)
    st.mounts = mounts
    used = {m["name"] for m in mounts} | {d["name"] for d in st.devices}
    used |= {m["name"] for c in st.init_containers for m in c["volumeMounts"]}
    st.volumes = [v for v in st.volumes if v["name"] in used]
    claims = {v["persistentVolumeClaim"]["claimName"] for v in st.volumes if "persistentVolumeClaim" in v}
    st.claims = [c for c in st.claims if c["name"] in claims]
