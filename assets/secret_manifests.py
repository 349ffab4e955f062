"""A credential asset as the Kubernetes Secret made of it in each namespace it serves. Pure: plain values in, a
manifest out (no models, no Kubernetes client); assets/secrets_sync.py applies them.

| Credential | Secret type | Keys |
|---|---|---|
| docker registry | `kubernetes.io/dockerconfigjson` | `.dockerconfigjson` (`auths` of the registry's host: username, password, auth) |
| user / password | `kubernetes.io/basic-auth` | `username`, `password` |
| access key | `Opaque` | `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` |
| generic secret | `Opaque` | its keys |
| NGC API key | `Opaque` | `NGC_API_KEY` |

A credential given as `existingSecretName` names a Secret that is already there: none is made. Every Secret made
carries `app.kubernetes.io/managed-by=paas-studio`, the credential's id and the project's name as labels; its name
is derived from the credential's id, so that a repeated create is a 409 that means "already done"."""

import base64
import json
from urllib.parse import urlsplit

MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "paas-studio"
CREDENTIAL_LABEL = "paas-studio/credential-id"
KIND_LABEL = "paas-studio/credential-kind"
PROJECT_LABEL = "paas-studio/project"
SELECTOR = f"{MANAGED_BY_LABEL}={MANAGED_BY},{CREDENTIAL_LABEL}"
MATERIALISED = ("accessKey", "password", "dockerRegistry", "genericSecret", "ngcApiKey")
DOCKER_HUB = "https://index.docker.io/v1/"


# The keys of the Secrets made of credentials, which workloads read them by.
ACCESS_KEY_ID, SECRET_ACCESS_KEY = "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"
USERNAME, PASSWORD, NGC_API_KEY = "username", "password", "NGC_API_KEY"
# The same access key as the rclone S3 CSI driver reads it (workloads/manifests/storage.py, an S3 data source).
S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY = "s3-access-key-id", "s3-secret-access-key"


def secret_name(asset_id) -> str:
    return f"studio-credential-{asset_id}"


def _b64(text: str) -> str:
    return base64.b64encode(str(text).encode()).decode()


def registry_key(url: str) -> str:
    """The `auths` key of a registry's URL, as `docker login` writes it: the host (and port); Docker Hub's own."""
    url = (url or "").strip()
    host = urlsplit(url if "://" in url else f"https://{url}").netloc or url
    if host in ("docker.io", "index.docker.io", "registry-1.docker.io", "hub.docker.com"):
        return DOCKER_HUB
    return host


def _content(kind: str, spec: dict, secret: dict) -> tuple[str, dict[str, str]] | None:
    if kind == "dockerRegistry":
        user, password = spec.get("user") or "", secret.get("password") or ""
        config = {"auths": {registry_key(spec.get("url") or ""): {
            "username": user, "password": password, "auth": _b64(f"{user}:{password}")}}}
        return "kubernetes.io/dockerconfigjson", {".dockerconfigjson": json.dumps(config, sort_keys=True)}
    if kind == "password":
        return "kubernetes.io/basic-auth", {USERNAME: spec.get("user") or "", PASSWORD: secret.get("password") or ""}
    if kind == "accessKey":
        key_id, key = secret.get("accessKeyId") or "", secret.get("secretAccessKey") or ""
        return "Opaque", {ACCESS_KEY_ID: key_id, SECRET_ACCESS_KEY: key, S3_ACCESS_KEY_ID: key_id,
                          S3_SECRET_ACCESS_KEY: key}
    if kind == "genericSecret":
        return "Opaque", {str(p["key"]): "" if p.get("value") is None else str(p["value"])
                          for p in secret.get("keyValuePairs") or () if isinstance(p, dict) and p.get("key")}
    if kind == "ngcApiKey":
        return "Opaque", {NGC_API_KEY: secret.get("ngc_api_key") or ""}
    return None


def credential_secret(*, asset_id, kind: str, spec: dict, secret: dict, namespace: str, project: str) -> dict | None:
    """The Secret of one credential in one project's namespace; None when the credential names an existing
    Secret or is of a kind that makes none."""
    if kind not in MATERIALISED or spec.get("existingSecretName"):
        return None
    content = _content(kind, spec, secret)
    if content is None:
        return None
    secret_type, values = content
    return {"apiVersion": "v1", "kind": "Secret", "type": secret_type,
            "metadata": {"name": secret_name(asset_id), "namespace": namespace, "labels": {
                MANAGED_BY_LABEL: MANAGED_BY, CREDENTIAL_LABEL: str(asset_id), KIND_LABEL: kind,
                PROJECT_LABEL: project}},
            "data": {key: _b64(value) for key, value in values.items()}}


def pull_secret_name(*, asset_id, spec: dict) -> str:
    """The Secret a docker registry credential's pods pull with: the existing one it names, else the one made."""
    return spec.get("existingSecretName") or secret_name(asset_id)


def with_pull_secrets(spec: dict, names: list[str]) -> dict:
    """A workload's spec with these Secrets added to its `imagePullSecrets` (those it names already kept first)."""
    if not names:
        return spec
    given = [s for s in spec.get("imagePullSecrets") or () if isinstance(s, dict)]
    have = {s.get("name") for s in given}
    return {**spec, "imagePullSecrets": given + [{"name": n} for n in names if n not in have]}
