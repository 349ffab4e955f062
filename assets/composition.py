"""A workload's spec made of assets, in Run:ai's order: the environment (image, command, arguments, variables,
tools and their ports, uid/gid and the rest of its security), the compute resources (GPUs, CPU, memory), the data
sources (storage volumes), then the template's own fields, then the request's: each layer's fields override the
ones below it ("the request's fields override the template's").

Pure: plain dicts in and out, no models. A data source that reads a credential needs the name of the Secret the
credential is in; the caller passes what it knows as `secret_names` ({credential id: Secret name})."""

from collections.abc import Mapping

from assets.secret_manifests import PASSWORD, USERNAME

# environment asset field -> workload spec field (same name unless given)
_ENVIRONMENT_FIELDS = ("image", "imagePullPolicy", "command", "args", "workingDir", "createHomeDir", "probes")
_TERMINAL_FIELDS = ("tty", "stdin")  # a workspace's or a training's, not an inference's
_SECURITY_FIELDS = ("runAsUid", "runAsGid", "supplementalGroups", "uidGidSource", "capabilities",
                    "seccompProfileType", "runAsNonRoot", "readOnlyRootFilesystem")
_POD_SECURITY_FIELDS = ("allowPrivilegeEscalation", "hostIpc", "hostNetwork")  # not an inference's
COMPUTE_FIELDS = ("gpuDevicesRequest", "gpuRequestType", "gpuPortionRequest", "gpuPortionLimit", "gpuMemoryRequest",
                  "gpuMemoryLimit", "migProfile", "cpuCoreRequest", "cpuCoreLimit", "cpuMemoryRequest",
                  "cpuMemoryLimit", "largeShmRequest", "extendedResources")
# Run:ai's specific-environment fields of a 2.18 template that sit under `security` in a workload's spec
_SPECIFIC_SECURITY = ("runAsUid", "runAsGid", "supplementalGroups")
# ... and those with no field of a workload's spec: the tools' connections (the environment's ports), 2.18's
# autoScaling and latest's servingPortAccess (an inference template's), allowOverQuota (the priority class says it)
_SPECIFIC_UNMAPPED = ("connections", "autoScaling", "servingPortAccess", "allowOverQuota")


class CompositionError(ValueError):
    """An asset that cannot become part of a workload's spec; the message names it."""


def _given(spec: Mapping, names) -> dict:
    return {name: spec[name] for name in names if spec.get(name) is not None}


def environment_part(env: Mapping, kind: str, *, secret_names: Mapping, name: str = "") -> dict:
    """The spec fields an environment asset gives a workload of `kind`."""
    part = _given(env, _ENVIRONMENT_FIELDS)
    if kind != "inference":
        part.update(_given(env, _TERMINAL_FIELDS))
    security = _given(env, _SECURITY_FIELDS + (() if kind == "inference" else _POD_SECURITY_FIELDS))
    if "uidGidSource" not in security and ("runAsUid" in security or "runAsGid" in security):
        security["uidGidSource"] = "custom"  # the environment sets the ids itself
    if security:
        part["security"] = security
    variables = []
    for variable in env.get("environmentVariables") or ():
        out = _given(variable, ("name", "value", "description", "exclude"))
        if variable.get("configMap"):
            out["configMap"] = dict(variable["configMap"])
        if variable.get("podFieldRef"):
            out["podFieldRef"] = dict(variable["podFieldRef"])
        credential = variable.get("credential")
        if credential:
            secret = secret_names.get(str(credential.get("assetId")))
            if not secret:
                raise CompositionError(f"Environment {name}'s variable {variable.get('name')} reads a credential "
                                       "that is not in a Kubernetes Secret (give the credential an existing "
                                       "Secret's name).")
            out["secret"] = {"name": secret, "key": credential.get("key")}
        variables.append(out)
    if variables:
        part["environmentVariables"] = variables
    ports, urls = [], []
    for connection in env.get("connections") or ():
        tool = connection.get("internalToolInfo") or {}
        if not tool.get("containerPort"):
            continue
        common = {"container": tool["containerPort"], "toolType": tool.get("toolType"),
                  "toolName": connection.get("name")}
        common = {k: v for k, v in common.items() if v is not None}
        if tool.get("connectionType") == "ServingPort" and kind == "inference":
            part["servingPort"] = {"container": tool["containerPort"],
                                   **({"protocol": tool["servingPortInfo"]["protocol"]}
                                      if (tool.get("servingPortInfo") or {}).get("protocol") else {})}
        elif tool.get("connectionType") == "ExternalUrl":
            url = (tool.get("externalUrlInfo") or {}).get("externalUrl")
            urls.append({**common, **({"url": url} if url else {})})
        elif tool.get("connectionType") in ("LoadBalancer", "NodePort"):
            ports.append({**common, "serviceType": tool["connectionType"]})
    if ports:
        part["ports"] = ports
    if urls:
        part["exposedUrls"] = urls
    return part


def compute_part(compute: Mapping) -> dict:
    given = _given(compute, COMPUTE_FIELDS)
    return {"compute": given} if given else {}


def _mount(spec: Mapping, field: str, overrides: Mapping | None) -> str | None:
    return (overrides or {}).get("containerPath") or spec.get(field)


def datasource_part(kind: str, spec: Mapping, *, name: str, overrides: Mapping | None,
                    secret_names: Mapping) -> dict:
    """{"storage": {<type>: [volume]}} of one data source asset."""
    def secret_of(field):
        if not spec.get(field):
            return None
        secret = secret_names.get(str(spec[field]))
        if not secret:
            raise CompositionError(f"Data source {name} reads a credential that is not in a Kubernetes Secret "
                                   "(give the credential an existing Secret's name).")
        return secret

    if kind == "pvc":
        volume = {"name": name, "path": _mount(spec, "path", overrides),
                  **_given(spec, ("existingPvc", "claimName", "readOnly", "ephemeral", "claimInfo", "dataSharing"))}
        return {"storage": {"pvc": [volume]}}
    if kind == "nfs":
        return {"storage": {"nfs": [{"name": name, "mountPath": _mount(spec, "mountPath", overrides),
                                     **_given(spec, ("server", "path", "readOnly"))}]}}
    if kind == "hostPath":
        return {"storage": {"hostPath": [{"name": name, "mountPath": _mount(spec, "mountPath", overrides),
                                          **_given(spec, ("path", "readOnly", "mountPropagation"))}]}}
    if kind == "git":
        volume = {"name": name, "path": _mount(spec, "path", overrides),
                  **_given(spec, ("repository", "branch", "revision"))}
        secret = secret_of("passwordAssetId") or secret_of("credentialId")
        if secret:  # a user/password credential's Secret (assets/secret_manifests.py)
            volume.update(passwordSecret=secret, secretKeyOfUser=USERNAME, secretKeyOfPassword=PASSWORD)
        return {"storage": {"git": [volume]}}
    if kind == "s3":
        volume = {"name": name, "path": _mount(spec, "path", overrides), **_given(spec, ("bucket", "url"))}
        secret = secret_of("accessKeyAssetId")
        if secret:
            volume["accessKeySecret"] = secret
        return {"storage": {"s3": [volume]}}
    if kind == "config-map":
        return {"storage": {"configMapVolume": [{"name": name, "mountPath": _mount(spec, "mountPath", overrides),
                                                 **_given(spec, ("configMap", "subPath", "defaultMode"))}]}}
    if kind == "secret-volume":
        return {"storage": {"secretVolume": [{"name": name, "secret": secret_of("credentialAssetId"),
                                              "mountPath": _mount(spec, "mountPath", overrides),
                                              **_given(spec, ("defaultMode",))}]}}
    raise CompositionError(f"Data source {name} is of kind {kind}, which a workload cannot mount.")


def storage_part(parts: list[Mapping]) -> dict:
    """The data sources' volumes together: each type's list holds every source of that type."""
    storage: dict = {}
    for part in parts:
        for kind, volumes in part.get("storage", {}).items():
            storage.setdefault(kind, []).extend(volumes)
    return {"storage": storage} if storage else {}


def specific_part(specific: Mapping | None, kind: str) -> dict:
    """A 2.18 template's `specificEnv` as workload spec fields (uid, gid and groups go under `security`;
    `connections` name the environment's tools and change nothing here)."""
    if not specific:
        return {}
    part = {k: v for k, v in specific.items()
            if v is not None and k not in _SPECIFIC_SECURITY and k not in _SPECIFIC_UNMAPPED}
    security = _given(specific, _SPECIFIC_SECURITY)
    if security:
        part["security"] = security
    return part


def merged(base: Mapping, override: Mapping) -> dict:
    """`override` over `base`: objects merge key by key, environment variables by name, other lists and values
    are replaced; a null in `override` leaves the base's value (Run:ai's clients send null for unset fields)."""
    out = dict(base)
    for key, value in override.items():
        if value is None and key in out:
            continue
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merged(out[key], value)
        elif key == "environmentVariables" and isinstance(value, list) and isinstance(out.get(key), list):
            names = {v.get("name") for v in value if isinstance(v, Mapping)}
            out[key] = [v for v in out[key] if v.get("name") not in names] + list(value)
        else:
            out[key] = value
    return out


def compose(layers: list[Mapping]) -> dict:
    """The layers, lowest first, merged into one spec."""
    spec: dict = {}
    for layer in layers:
        spec = merged(spec, layer)
    return spec
