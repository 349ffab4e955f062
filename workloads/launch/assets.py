"""A workload from assets, as Run:ai's New workload form makes one: an environment, a compute resource, data
sources and credentials the project may use, put together into the create body of the workloads API, validated
by the same `workloads.specs`, previewed by the same `workload_preview` and submitted by the same
`workload_submit`; the assets it used are recorded (assets.services.asset_use_record), so an asset in use is
not deleted and its page says what uses it.

How each asset fills the spec:
- environment: image, pull policy, command, args, working dir, environment variables (a credential's key as a
  Secret reference), probes, tty/stdin, the security fields; its tools' container ports as the workload's ports.
- compute: `spec.compute` as it is.
- data sources: `spec.storage` — pvc, nfs, s3 (its access key's Secret), git (its password's Secret), hostPath,
  configMapVolume, secretVolume (its credential's Secret).
- credentials: a docker registry's Secret as an image pull secret; the others' Secrets as environment variables
  (an access key's AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a user and password's <NAME>_USER and
  <NAME>_PASSWORD, an NGC key's NGC_API_KEY, a generic secret's keys).

A credential's Secret is the one it names (`existingSecretName`), else the one made from its values in the
project's namespace, named by `credential_secret_name`."""

import re

from django.db import transaction
from django.db.models import prefetch_related_objects

from assets.models import Asset, AssetUse, Kind
from assets.secret_manifests import (
    ACCESS_KEY_ID,
    NGC_API_KEY,
    PASSWORD,
    SECRET_ACCESS_KEY,
    USERNAME,
    pull_secret_name,
)
from assets.selectors import ListQuery, asset_list
from assets.services import asset_use_record
from assets.specs import CREDENTIAL_KINDS, DATASOURCE_KINDS
from studio.models import Project
from workloads.from_templates import request_with_template
from workloads.launch.preview import workload_preview
from workloads.models import Workload
from workloads.services import workload_submit
from workloads.specs import validate_workload_request

KINDS = ("workspace", "training")
_SECURITY = ("uidGidSource", "capabilities", "seccompProfileType", "runAsNonRoot", "readOnlyRootFilesystem",
             "runAsUid", "runAsGid", "supplementalGroups", "allowPrivilegeEscalation", "hostIpc", "hostNetwork")
_PLAIN = ("image", "imagePullPolicy", "command", "args", "workingDir", "createHomeDir", "probes", "tty", "stdin")
_SERVICE_TYPES = {"LoadBalancer": "LoadBalancer", "NodePort": "NodePort"}
_ENV = re.compile(r"[^A-Z0-9_]")


def usable_assets(*, user, project: Project, kind: str) -> dict[str, list[Asset]]:
    """What a workload of `kind` in `project` may use, by family: the assets the user sees of the project's scope
    and those above it that support the kind (Run:ai's list with projectId and the kind's flag)."""
    rows = asset_list(user=user, kinds=tuple(Kind), query=ListQuery(project=project, supports=kind))
    prefetch_related_objects(rows, "department", "cluster")  # each card names its scope: two queries in all
    return {"environments": [a for a in rows if a.kind == Kind.ENVIRONMENT],
            "computes": [a for a in rows if a.kind == Kind.COMPUTE],
            "datasources": [a for a in rows if a.kind in DATASOURCE_KINDS],
            "credentials": [a for a in rows if a.kind in CREDENTIAL_KINDS]}


def credential_secret_name(asset: Asset) -> str:
    """The Kubernetes Secret a credential stands for in a project's namespace: the one it names, else the one the
    credentials' sync makes (assets.secret_manifests)."""
    return pull_secret_name(asset_id=asset.pk, spec=asset.spec or {})


def _env_name(text: str) -> str:
    return _ENV.sub("_", text.upper()) or "CREDENTIAL"


def _environment_part(env: Asset, by_id: dict) -> dict:
    spec = env.spec or {}
    part = {key: spec[key] for key in _PLAIN if spec.get(key) is not None}
    security = {key: spec[key] for key in _SECURITY if spec.get(key) is not None}
    if security:
        part["security"] = security
    variables = []
    for variable in spec.get("environmentVariables") or []:
        item = {k: v for k, v in variable.items() if k in ("name", "value", "configMap", "podFieldRef",
                                                             "description", "exclude") and v is not None}
        credential = variable.get("credential")
        if credential and by_id.get(credential.get("assetId")) is not None:
            item["secret"] = {"name": credential_secret_name(by_id[credential["assetId"]]), "key": credential["key"]}
        variables.append(item)
    if variables:
        part["environmentVariables"] = variables
    ports = []
    for connection in spec.get("connections") or []:
        tool = connection.get("internalToolInfo") or {}
        if tool.get("containerPort"):
            port = {"container": tool["containerPort"], "name": connection.get("name"),
                    "toolType": tool.get("toolType")}
            if tool.get("connectionType") in _SERVICE_TYPES:
                port["serviceType"] = _SERVICE_TYPES[tool["connectionType"]]
            ports.append({k: v for k, v in port.items() if v is not None})
    if ports:
        part["ports"] = ports
    return part


def _storage(datasources: list[Asset], by_id: dict) -> dict:
    storage: dict[str, list] = {}

    def add(key, item):
        storage.setdefault(key, []).append({k: v for k, v in item.items() if v is not None})

    for source in datasources:
        spec, name = source.spec or {}, source.name
        if source.kind == Kind.PVC:
            add("pvc", {"name": name, **{k: spec.get(k) for k in ("path", "existingPvc", "claimName", "readOnly",
                                                                   "ephemeral", "claimInfo", "dataSharing")}})
        elif source.kind == Kind.NFS:
            add("nfs", {"name": name, **{k: spec.get(k) for k in ("path", "readOnly", "server", "mountPath")}})
        elif source.kind == Kind.HOST_PATH:
            add("hostPath", {"name": name, **{k: spec.get(k) for k in ("path", "readOnly", "mountPath",
                                                                        "mountPropagation")}})
        elif source.kind == Kind.S3:
            key = by_id.get(spec.get("accessKeyAssetId"))
            add("s3", {"name": name, "bucket": spec.get("bucket"), "path": spec.get("path"), "url": spec.get("url"),
                       **({"accessKeySecret": credential_secret_name(key), "secretKeyOfAccessKeyId": ACCESS_KEY_ID,
                           "secretKeyOfSecretKey": SECRET_ACCESS_KEY} if key else {})})
        elif source.kind == Kind.GIT:
            secret = by_id.get(spec.get("passwordAssetId") or spec.get("credentialId"))
            add("git", {"name": name, **{k: spec.get(k) for k in ("repository", "branch", "revision", "path")},
                        **({"passwordSecret": credential_secret_name(secret), "secretKeyOfUser": USERNAME,
                            "secretKeyOfPassword": PASSWORD} if secret else {})})
        elif source.kind == Kind.CONFIG_MAP:
            add("configMapVolume", {"name": name, **{k: spec.get(k) for k in ("configMap", "mountPath", "subPath",
                                                                               "defaultMode")}})
        elif source.kind == Kind.SECRET_VOLUME:
            credential = by_id.get(spec.get("credentialAssetId"))
            add("secretVolume", {"name": name, "secret": credential_secret_name(credential) if credential else None,
                                 "mountPath": spec.get("mountPath"), "defaultMode": spec.get("defaultMode")})
    return storage


def _credential_parts(credentials: list[Asset]) -> tuple[list, list]:
    pulls, variables = [], []
    for credential in credentials:
        secret = credential_secret_name(credential)
        if credential.kind == Kind.DOCKER_REGISTRY:
            pulls.append({"name": secret})
            continue
        prefix = _env_name(credential.name)
        keys = {Kind.ACCESS_KEY: [("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID), ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY)],
                Kind.PASSWORD: [(f"{prefix}_USER", USERNAME), (f"{prefix}_PASSWORD", PASSWORD)],
                Kind.NGC_API_KEY: [("NGC_API_KEY", NGC_API_KEY)]}.get(credential.kind)
        if keys is None:  # a generic secret: each of its keys
            keys = [(_env_name(pair["key"]), pair["key"]) for pair in (credential.spec or {}).get("keyValuePairs")
                    or [] if pair.get("key")]
        variables += [{"name": name, "secret": {"name": secret, "key": key}} for name, key in keys]
    return pulls, variables


def assets_body(*, kind: str, name: str, project: Project, environment: Asset, compute: Asset | None,
                datasources: list[Asset], credentials: list[Asset], referenced: list[Asset] = (),
                template: Asset | None = None) -> dict:
    """The workloads API's create body made of the chosen assets (`referenced`: the credentials the chosen
    assets name, whose Secrets they read); with a template, its `templateId` too (its own fields under these)."""
    by_id = {str(a.pk): a for a in [*credentials, *referenced]}
    spec = _environment_part(environment, by_id)
    if compute is not None:
        spec["compute"] = dict(compute.spec or {})
    storage = _storage(datasources, by_id)
    if storage:
        spec["storage"] = storage
    pulls, variables = _credential_parts(credentials)
    if pulls:
        spec["imagePullSecrets"] = pulls
    if variables:
        spec["environmentVariables"] = [*spec.get("environmentVariables", []), *variables]
    body = {"name": name, "projectId": str(project.pk), "clusterId": str(project.cluster_id), "spec": spec}
    if template is not None:
        body["templateId"] = str(template.pk)
    return body


def referenced_credentials(*, user, assets: list[Asset]) -> list[Asset]:
    """The credentials the chosen assets name (an S3 source's access key, an environment variable's credential),
    those the user sees."""
    ids = set()
    for asset in assets:
        spec = asset.spec or {}
        ids.update(str(spec[k]) for k in ("accessKeyAssetId", "passwordAssetId", "credentialId", "credentialAssetId")
                   if spec.get(k))
        ids.update(str((v.get("credential") or {}).get("assetId")) for v in spec.get("environmentVariables") or []
                   if (v.get("credential") or {}).get("assetId"))
    return list(Asset.objects.visible_to(user).filter(pk__in=ids)) if ids else []


def assets_preview(*, kind: str, body: dict, user) -> dict:
    """What submitting the body would create and decide, nothing created (workloads.launch.preview)."""
    body, _ = request_with_template(kind=kind, data=body, user=user)
    return workload_preview(kind=kind, request=validate_workload_request(kind, body), user=user)


def assets_submit(*, kind: str, body: dict, user, used: list[Asset]) -> Workload:
    """Submit the body through the workloads API's service and record what it used; made from a template (its
    `templateId`) as the API makes it: the template's fields under the chosen assets', its provenance kept."""
    body, provenance = request_with_template(kind=kind, data=body, user=user)
    request = validate_workload_request(kind, body)
    with transaction.atomic():
        workload = workload_submit(kind=kind, request=request, user=user, provenance=provenance)
        for asset in used:
            asset_use_record(asset=asset, consumer=AssetUse.Consumer(kind), consumer_id=str(workload.pk),
                             consumer_name=workload.name)
    return workload


def template_choices(template: Asset) -> dict:
    """The New workload page's choices a template of assets fills: its environment, compute and data sources."""
    ids = (template.spec or {}).get("assets") or {}
    return {"environment": str(ids.get("environment") or ""), "compute": str(ids.get("compute") or ""),
            "datasources": [str(s.get("id")) for s in ids.get("datasources") or () if s.get("id")]}
