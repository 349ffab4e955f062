"""A valid Run:ai creation body of each asset kind, by the path it is posted to (under /api/v1/asset/)."""

SPECS = {
    "environment": {"image": "nvcr.io/nvidia/pytorch:24.01-py3", "imagePullPolicy": "IfNotPresent",
                    "command": "python", "args": "train.py", "workingDir": "/workspace", "runAsUid": 1000,
                    "environmentVariables": [{"name": "EPOCHS", "value": "3"}],
                    "connections": [{"name": "jupyter", "internalToolInfo": {
                        "toolType": "jupyter-notebook", "connectionType": "ExternalUrl", "containerPort": 8888}}],
                    "probes": {"readiness": {"periodSeconds": 5, "handler": {"httpGet": {"path": "/", "port": 8888}}}}},
    "compute": {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 0.5, "cpuCoreRequest": 1,
                "cpuCoreLimit": 2, "cpuMemoryRequest": "1Gi", "cpuMemoryLimit": "2Gi", "largeShmRequest": True},
    "datasource/pvc": {"path": "/data", "claimInfo": {"size": "10Gi", "storageClass": "standard",
                                                      "accessModes": {"readWriteOnce": True}, "volumeMode": "Filesystem"}},
    "datasource/nfs": {"server": "nfs.example.com", "path": "/exports/data", "mountPath": "/mnt/nfs", "readOnly": True},
    "datasource/s3": {"bucket": "datasets", "path": "/mnt/s3", "url": "https://s3.example.com"},
    "datasource/git": {"repository": "https://github.com/example/repo.git", "branch": "main", "path": "/code"},
    "datasource/host-path": {"path": "/raid/data", "mountPath": "/data", "mountPropagation": "None"},
    "datasource/config-map": {"configMap": "settings", "mountPath": "/etc/settings", "defaultMode": "0644"},
    "datasource/secrets": {"credentialAssetId": None, "mountPath": "/etc/secret"},  # the id: a credential's
    "credentials/access-key": {"accessKeyId": "AKIAEXAMPLE", "secretAccessKey": "s3cr3t-access-key"},
    "credentials/password": {"user": "git-bot", "password": "s3cr3t-password"},
    "credentials/docker-registry": {"url": "https://registry.example.com", "user": "puller",
                                    "password": "s3cr3t-registry"},
    "credentials/generic-secret": {"keyValuePairs": [{"key": "TOKEN", "value": "s3cr3t-token"}]},
    "credentials/ngc-api-key": {"ngc_api_key": "s3cr3t-ngc-key"},
}
NO_CONTENT_ON_DELETE = {"credentials/generic-secret", "credentials/ngc-api-key"}  # Run:ai answers 204, not 202
SECRETS = ("AKIAEXAMPLE", "s3cr3t-access-key", "s3cr3t-password", "s3cr3t-registry", "s3cr3t-token",
           "s3cr3t-ngc-key")
KIND_OF = {"environment": "environment", "compute": "compute", "datasource/pvc": "pvc", "datasource/nfs": "nfs",
           "datasource/s3": "s3", "datasource/git": "git", "datasource/host-path": "hostPath",
           "datasource/config-map": "config-map", "datasource/secrets": "secret-volume",
           "credentials/access-key": "accessKey", "credentials/password": "password",
           "credentials/docker-registry": "dockerRegistry", "credentials/generic-secret": "genericSecret",
           "credentials/ngc-api-key": "ngcApiKey"}


def body(path: str, name: str, *, scope="project", project=None, credential_id=None, **meta) -> dict:
    spec = dict(SPECS[path])
    if path == "datasource/secrets":
        spec["credentialAssetId"] = credential_id
    ids = {"projectId": project.pk} if scope == "project" else {}
    return {"meta": {"name": name, "scope": scope, **ids, **meta}, "spec": spec}
