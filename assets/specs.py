"""The spec of each asset kind, as Run:ai's 2.18 and latest documents define it (the union of both): its fields,
those required, those a PUT may change, those that are secrets, and the rules that span fields.

Pure: `spec_problems(kind, spec)` lists every problem of a request's spec at once as (dotted path, message);
`public_spec(kind, spec)` is what an answer shows. Secrets never leave `secret_part` (the services encrypt it)."""

from assets.fields import (
    Rule,
    boolean,
    check_object,
    choice,
    integer,
    list_of,
    number,
    obj,
    quantity,
    text,
    uuid_ref,
)
from studio.clusters.quantities import parse_quantity_strict

K8S_NAME = r"[a-z0-9]([a-z0-9-]*[a-z0-9])?"
MIG_PROFILES = ("1g.5gb", "1g.10gb", "2g.10gb", "2g.20gb", "3g.20gb", "3g.40gb", "4g.20gb", "4g.40gb", "7g.40gb",
                "7g.80gb")
CAPABILITIES = ("AUDIT_CONTROL", "AUDIT_READ", "AUDIT_WRITE", "BLOCK_SUSPEND", "CHOWN", "DAC_OVERRIDE",
                "DAC_READ_SEARCH", "FOWNER", "FSETID", "IPC_LOCK", "IPC_OWNER", "KILL", "LEASE", "LINUX_IMMUTABLE",
                "MAC_ADMIN", "MAC_OVERRIDE", "MKNOD", "NET_ADMIN", "NET_BIND_SERVICE", "NET_BROADCAST", "NET_RAW",
                "SETGID", "SETFCAP", "SETPCAP", "SETUID", "SYS_ADMIN", "SYS_BOOT", "SYS_CHROOT", "SYS_MODULE",
                "SYS_NICE", "SYS_PACCT", "SYS_PTRACE", "SYS_RAWIO", "SYS_RESOURCE", "SYS_TIME", "SYS_TTY_CONFIG",
                "SYSLOG", "WAKE_ALARM")
PORT = integer(minimum=1, maximum=65535)

_ENV_VAR = obj({
    "name": text(), "value": Rule({"type": "string", "nullable": True}, "any"),
    "credential": obj({"assetId": uuid_ref(), "key": text()}),
    "configMap": obj({"name": text(pattern=K8S_NAME), "key": text()}),
    "podFieldRef": obj({"path": text()}),
    "exclude": boolean(), "description": Rule({"type": "string", "nullable": True}, "any"),
})
_PROBE = obj({
    "initialDelaySeconds": integer(minimum=0), "periodSeconds": integer(minimum=1),
    "timeoutSeconds": integer(minimum=1), "successThreshold": integer(minimum=1),
    "failureThreshold": integer(minimum=1),
    "handler": obj({"httpGet": obj({"path": text(pattern=r"(/[a-zA-Z0-9\-_./]*)?"), "port": PORT, "host": text(),
                                    "scheme": choice("HTTP", "HTTPS")})}),
})
_CONNECTION = obj({
    "name": text(), "isExternal": boolean(),
    "internalToolInfo": obj({
        "toolType": choice("jupyter-notebook", "pycharm", "visual-studio-code", "tensorboard", "rstudio", "mlflow",
                           "custom", "matlab", "chatbot-ui"),
        "connectionType": choice("LoadBalancer", "NodePort", "ExternalUrl", "ServingPort"),
        "containerPort": PORT,
        "nodePortInfo": obj({"isCustomPort": boolean()}),
        "externalUrlInfo": obj({"isCustomUrl": boolean(), "externalUrl": text()}),
        "servingPortInfo": obj({"protocol": choice("grpc", "http")}),
    }, required=("toolType", "connectionType", "containerPort")),
    "externalToolInfo": obj({"toolType": choice("wandb", "comet"), "externalUrl": text()},
                            required=("toolType", "externalUrl")),
}, required=("name",))

ENVIRONMENT = {
    "image": text(), "imagePullPolicy": choice("Always", "Never", "IfNotPresent"), "command": text(),
    "args": text(), "workingDir": text(), "runAsUid": integer(), "runAsGid": integer(),
    "supplementalGroups": text(), "environmentVariables": list_of(_ENV_VAR), "createHomeDir": boolean(),
    "probes": obj({"readiness": _PROBE}), "tty": boolean(), "stdin": boolean(),
    "uidGidSource": choice("fromTheImage", "fromIdpToken", "custom"), "capabilities": list_of(choice(*CAPABILITIES)),
    "seccompProfileType": choice("RuntimeDefault", "Unconfined", "Localhost"), "runAsNonRoot": boolean(),
    "readOnlyRootFilesystem": boolean(), "allowPrivilegeEscalation": boolean(), "hostIpc": boolean(),
    "hostNetwork": boolean(), "connections": list_of(_CONNECTION), "overrideUidGidInWorkspace": boolean(),
}
COMPUTE = {
    "gpuDevicesRequest": integer(minimum=0), "gpuRequestType": choice("portion", "memory", "migProfile"),
    "gpuPortionRequest": number(), "gpuPortionLimit": number(), "gpuMemoryRequest": quantity(),
    "gpuMemoryLimit": quantity(), "migProfile": choice(*MIG_PROFILES), "cpuCoreRequest": number(),
    "cpuCoreLimit": number(), "cpuMemoryRequest": quantity(), "cpuMemoryLimit": quantity(),
    "largeShmRequest": boolean(),
    "extendedResources": list_of(obj({"resource": text(), "quantity": quantity(), "exclude": boolean()})),
}
PVC = {
    "path": text(), "existingPvc": boolean(), "claimName": text(max_length=63), "readOnly": boolean(),
    "ephemeral": boolean(), "dataSharing": boolean(),
    "claimInfo": obj({
        "size": quantity(), "storageClass": text(pattern=K8S_NAME),
        "accessModes": obj({"readWriteOnce": boolean(), "readOnlyMany": boolean(), "readWriteMany": boolean()}),
        "volumeMode": choice("Filesystem", "Block"),
        "addedAttrValues": list_of(obj({"key": text(max_length=63, pattern=r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"),
                                        "value": Rule({"type": "string"}, "any")}, required=("key",))),
    }),
}
NFS = {"path": text(), "readOnly": boolean(), "server": text(), "mountPath": text()}
S3 = {"bucket": text(), "path": text(), "url": text(), "accessKeyAssetId": uuid_ref()}
GIT = {"repository": text(), "branch": text(), "revision": text(), "path": text(), "passwordAssetId": uuid_ref(),
       "credentialId": uuid_ref()}
HOST_PATH = {"path": text(), "readOnly": boolean(), "mountPath": text(),
             "mountPropagation": choice("None", "HostToContainer")}
DEFAULT_MODE = text(pattern="0[0-7]{3}", max_length=4)
CONFIG_MAP = {"configMap": text(pattern=K8S_NAME), "mountPath": text(), "subPath": text(), "defaultMode": DEFAULT_MODE}
SECRET_VOLUME = {"credentialAssetId": uuid_ref(), "mountPath": text(), "defaultMode": DEFAULT_MODE}
EXISTING_SECRET = text(pattern=K8S_NAME)
ACCESS_KEY = {"existingSecretName": EXISTING_SECRET, "accessKeyId": text(secret=True),
              "secretAccessKey": text(secret=True)}
PASSWORD = {"existingSecretName": EXISTING_SECRET, "user": text(), "password": text(secret=True)}
DOCKER_REGISTRY = {**PASSWORD, "url": text()}
GENERIC_SECRET = {"existingSecretName": EXISTING_SECRET, "keyValuePairs": list_of(obj({
    "key": text(pattern=r"[-._a-zA-Z0-9]+"), "value": Rule({"type": "string", "nullable": True}, "any")},
    required=("key",)))}
NGC_API_KEY = {"ngc_api_key": text(pattern=r"[-._A-Za-z0-9]+", secret=True)}

# kind: (fields, required, fields a PUT may change: None for all of them)
KINDS = {
    "environment": (ENVIRONMENT, ("image",), None),
    "compute": (COMPUTE, (), None),
    "pvc": (PVC, ("path",), ("path",)),
    "nfs": (NFS, ("server", "path", "mountPath"), None),
    "s3": (S3, ("bucket", "path"), None),
    "git": (GIT, ("repository", "path"), None),
    "hostPath": (HOST_PATH, ("path", "mountPath"), None),
    "config-map": (CONFIG_MAP, ("configMap", "mountPath"), ()),
    "secret-volume": (SECRET_VOLUME, ("credentialAssetId", "mountPath"), ()),
    "accessKey": (ACCESS_KEY, (), ()),
    "password": (PASSWORD, (), ()),
    "dockerRegistry": (DOCKER_REGISTRY, ("url",), ()),
    "genericSecret": (GENERIC_SECRET, (), ()),
    "ngcApiKey": (NGC_API_KEY, ("ngc_api_key",), ()),
}
CREDENTIAL_KINDS = ("accessKey", "password", "dockerRegistry", "genericSecret", "ngcApiKey")
DATASOURCE_KINDS = ("pvc", "nfs", "s3", "git", "hostPath", "config-map", "secret-volume")
# A credential is given either as the name of a Secret already in the namespace, or by its values.
_CREDENTIAL_VALUES = {"accessKey": ("accessKeyId", "secretAccessKey"), "password": ("user", "password"),
                      "dockerRegistry": ("user", "password"), "genericSecret": ("keyValuePairs",)}
# Fields that name another asset, and the kinds it may be (assets/services.py checks that the caller sees it).
REFERENCES = {("s3", "accessKeyAssetId"): ("accessKey",), ("git", "passwordAssetId"): ("password",),
              ("git", "credentialId"): ("password", "accessKey", "genericSecret"),
              ("secret-volume", "credentialAssetId"): CREDENTIAL_KINDS}


def spec_problems(kind: str, spec, path: str = "spec") -> list[tuple[str, str]]:
    fields, required, _ = KINDS[kind]
    if spec is None:
        spec = {}
    problems = check_object(fields, required, spec, path)
    if problems or not isinstance(spec, dict):
        return problems
    return [(f"{path}.{name}" if name else path, message) for name, message in _cross_field(kind, spec)]


def _cross_field(kind: str, spec: dict) -> list[tuple[str, str]]:
    if kind == "compute":
        return _compute(spec)
    if kind == "pvc":
        return _pvc(spec)
    if kind in _CREDENTIAL_VALUES:
        values = _CREDENTIAL_VALUES[kind]
        given = [name for name in values if spec.get(name) not in (None, "", [])]
        if spec.get("existingSecretName") and given:
            return [("existingSecretName", f"Give either existingSecretName or {' and '.join(values)}, not both.")]
        if not spec.get("existingSecretName"):
            return [(name, "This field is required (or give existingSecretName).") for name in values
                    if name not in given]
    return []


def _compute(spec: dict) -> list[tuple[str, str]]:
    q = parse_quantity_strict
    problems = []
    devices, kind = spec.get("gpuDevicesRequest"), spec.get("gpuRequestType")
    if devices is not None and devices > 1 and kind not in (None, "portion"):
        problems.append(("gpuRequestType", "More than one GPU device allows only the portion request type."))
    portion = spec.get("gpuPortionRequest")
    if portion is not None and not 0 < portion <= 1:
        problems.append(("gpuPortionRequest", "Must be more than 0 and at most 1."))
    if kind == "memory" and not spec.get("gpuMemoryRequest"):
        problems.append(("gpuMemoryRequest", "This field is required with gpuRequestType memory."))
    if kind == "migProfile" and not spec.get("migProfile"):
        problems.append(("migProfile", "This field is required with gpuRequestType migProfile."))
    for request, limit, parse in (("gpuPortionRequest", "gpuPortionLimit", float), ("cpuCoreRequest", "cpuCoreLimit", float),
                                  ("gpuMemoryRequest", "gpuMemoryLimit", q), ("cpuMemoryRequest", "cpuMemoryLimit", q)):
        if spec.get(request) is not None and spec.get(limit) is not None and parse(spec[limit]) < parse(spec[request]):
            problems.append((limit, f"Must be at least {request}."))
    return problems


def _pvc(spec: dict) -> list[tuple[str, str]]:
    if spec.get("existingPvc"):
        return [] if spec.get("claimName") else [("claimName", "This field is required with existingPvc.")]
    claim = spec.get("claimInfo") or {}
    problems = [] if claim.get("size") else [("claimInfo.size", "This field is required to create a claim.")]
    if claim.get("accessModes") is not None and not any(claim["accessModes"].values()):
        problems.append(("claimInfo.accessModes", "Choose at least one access mode."))
    return problems


def secret_part(kind: str, spec: dict) -> dict:
    """The fields of a spec that are secrets (and, for a generic secret, its values)."""
    fields = KINDS[kind][0]
    secrets = {name: spec[name] for name, rule in fields.items() if rule.secret and spec.get(name) is not None}
    if kind == "genericSecret" and spec.get("keyValuePairs"):
        secrets["keyValuePairs"] = spec["keyValuePairs"]
    return secrets


def public_spec(kind: str, spec: dict) -> dict:
    """What may be shown of a spec: secrets left out (a generic secret's keys without their values)."""
    fields = KINDS[kind][0]
    public = {name: value for name, value in spec.items() if not fields.get(name, Rule({})).secret}
    if kind == "genericSecret" and spec.get("keyValuePairs"):
        public["keyValuePairs"] = [{"key": pair.get("key")} for pair in spec["keyValuePairs"]]
    return public


def updatable(kind: str) -> tuple | None:
    return KINDS[kind][2]

# Run:ai's Registry: a container registry's URL and login (assets/registries.py asks it for repositories and tags).
# Its password is a secret; its spec cannot change through the generic update (assets/registry_api.py's does).
REGISTRY = {"url": text(pattern=r"(https?://)?[A-Za-z0-9.-]+(:[0-9]{1,5})?(/\S*)?"), "credentialKind": choice("password"),
            "user": text(), "password": text(secret=True)}
KINDS["registry"] = (REGISTRY, ("url", "credentialKind", "user", "password"), ())
