"""The example create bodies of a training and an inference as Run:ai's documents publish them, as API consumers send them: the
examples of /api/schema/ and the tests' bodies (tests/workloads/seed_bodies.py).

Each must validate, and its spec must echo back unchanged. A workspace is a training without completions,
parallelism and backoffLimit. Copy before changing: `copy.deepcopy(...)`.
"""

import copy

TRAINING_REQUEST = {
    "name": "my-workload-name",
    "useGivenNameAsPrefix": True,
    "projectId": 1,
    "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
    "spec": {
        "command": "python",
        "args": "-x my-script.py",
        "image": "python:3.8",
        "imagePullPolicy": "Always",
        "workingDir": "/home/myfolder",
        "createHomeDir": True,
        "probes": {
            "readiness": {
                "initialDelaySeconds": 0,
                "periodSeconds": 1,
                "timeoutSeconds": 1,
                "successThreshold": 1,
                "failureThreshold": 1,
                "handler": {
                    "httpGet": {"path": "string", "port": 1, "host": "example.com", "scheme": "HTTP"}
                },
            }
        },
        "nodeType": "my-node-type",
        "nodePools": ["my-node-pool-a", "my-node-pool-b"],
        "podAffinity": {"type": "Required", "key": "string"},
        "tty": True,
        "stdin": True,
        "environmentVariables": [
            {
                "name": "HOME",
                "value": "/home/my-folder",
                "secret": {"name": "postgress_secret", "key": "POSTGRES_PASSWORD"},
                "exclude": False,
            }
        ],
        "annotations": [{"name": "billing", "value": "my-billing-unit", "exclude": False}],
        "labels": [{"name": "stage", "value": "initial-research", "exclude": False}],
        "tolerations": [
            {
                "name": "string",
                "operator": "Equal",
                "key": "string",
                "value": "string",
                "effect": "NoSchedule",
                "seconds": 1,
            }
        ],
        "terminateAfterPreemption": False,
        "autoDeletionTimeAfterCompletionSeconds": 15,
        "backoffLimit": 3,
        "ports": [
            {
                "container": 8080,
                "serviceType": "LoadBalancer",
                "external": 30080,
                "toolType": "pytorch",
                "toolName": "my-pytorch",
                "name": "port-instance-a",
            }
        ],
        "exposedUrls": [
            {
                "container": 8080,
                "authorizedUsers": ["user-a", "user-b"],
                "authorizedGroups": ["group-a", "group-b"],
                "toolType": "jupyter",
                "toolName": "my-pytorch",
                "name": "url-instance-a",
            }
        ],
        "priorityClass": "build",
        "completions": 1,
        "parallelism": 1,
        "compute": {
            "gpuDevicesRequest": 1,
            "gpuRequestType": "portion",
            "gpuPortionRequest": 0.5,
            "gpuPortionLimit": 0.5,
            "gpuMemoryRequest": "10M",
            "gpuMemoryLimit": "10M",
            "migProfile": "1g.5gb",
            "cpuCoreRequest": 0.5,
            "cpuCoreLimit": 2,
            "cpuMemoryRequest": "20M",
            "cpuMemoryLimit": "30M",
            "largeShmRequest": False,
            "extendedResources": [
                {"resource": "hardware-vendor.example/foo", "quantity": 2, "exclude": False}
            ],
        },
        "storage": {
            "dataVolume": [{"id": "123e4567-e89b-12d3-a456-426614174000", "mountPath": "/mnt/data"}],
            "pvc": [
                {
                    "name": "storage-instance-a",
                    "existingPvc": False,
                    "claimName": "my-claim",
                    "path": "/container/my-claim",
                    "readOnly": False,
                    "ephemeral": False,
                    "claimInfo": {
                        "size": "1G",
                        "storageClass": "my-storage-class",
                        "accessModes": {"readWriteOnce": True, "readOnlyMany": False, "readWriteMany": False},
                        "volumeMode": "Filesystem",
                    },
                }
            ],
            "git": [
                {
                    "name": "storage-instance-a",
                    "branch": "main",
                    "revision": "string",
                    "path": "/container/my-repository",
                    "passwordSecret": "my-password-secret",
                    "secretKeyOfUser": "User",
                    "secretKeyOfPassword": "Password",
                }
            ],
            "configMapVolume": [{"name": "storage-instance-a", "configMap": "string", "mountPath": "string"}],
            "secretVolume": [{"name": "storage-instance-a", "secret": "string", "mountPath": "string"}],
            "hostPath": [
                {
                    "name": "storage-instance-a",
                    "path": "/container/directory",
                    "readOnly": True,
                    "mountPath": "/local/directory",
                    "mountPropagation": "None",
                }
            ],
            "nfs": [
                {
                    "name": "storage-instance-a",
                    "path": "/container/nfs",
                    "readOnly": True,
                    "server": "my.nfs.com",
                    "mountPath": "/local/nfs",
                }
            ],
            "s3": [
                {
                    "name": "storage-instance-a",
                    "bucket": "my-bucket",
                    "path": "/container/my-bucket",
                    "accessKeySecret": "my-access-key-secret",
                    "secretKeyOfAccessKeyId": "AccessKeyId",
                    "secretKeyOfSecretKey": "SecretKey",
                }
            ],
        },
        "security": {
            "uidGidSource": "fromTheImage",
            "capabilities": ["CHOWN", "KILL"],
            "seccompProfileType": "RuntimeDefault",
            "runAsNonRoot": True,
            "readOnlyRootFilesystem": False,
            "runAsUid": 500,
            "runAsGid": 30,
            "supplementalGroups": "2,3,5,8",
            "allowPrivilegeEscalation": False,
            "hostIpc": False,
            "hostNetwork": False,
        },
    },
}

INFERENCE_REQUEST = {
    "name": "my-workload-name",
    "useGivenNameAsPrefix": True,
    "projectId": 1,
    "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
    "spec": {
        "command": "python",
        "args": "-x my-script.py",
        "image": "python:3.8",
        "imagePullPolicy": "Always",
        "workingDir": "/home/myfolder",
        "createHomeDir": True,
        "probes": {
            "readiness": {
                "initialDelaySeconds": 0,
                "periodSeconds": 1,
                "timeoutSeconds": 1,
                "successThreshold": 1,
                "failureThreshold": 1,
                "handler": {
                    "httpGet": {"path": "string", "port": 1, "host": "example.com", "scheme": "HTTP"}
                },
            }
        },
        "nodeType": "my-node-type",
        "nodePools": ["my-node-pool-a", "my-node-pool-b"],
        "podAffinity": {"type": "Required", "key": "string"},
        "environmentVariables": [
            {
                "name": "HOME",
                "value": "/home/my-folder",
                "secret": {"name": "postgress_secret", "key": "POSTGRES_PASSWORD"},
                "exclude": False,
            }
        ],
        "annotations": [{"name": "billing", "value": "my-billing-unit", "exclude": False}],
        "labels": [{"name": "stage", "value": "initial-research", "exclude": False}],
        "tolerations": [
            {
                "name": "string",
                "operator": "Equal",
                "key": "string",
                "value": "string",
                "effect": "NoSchedule",
                "seconds": 1,
            }
        ],
        "ports": [
            {
                "container": 8080,
                "serviceType": "LoadBalancer",
                "external": 30080,
                "toolType": "pytorch",
                "toolName": "my-pytorch",
                "name": "port-instance-a",
            }
        ],
        "exposedUrls": [
            {
                "container": 8080,
                "authorizedUsers": ["user-a", "user-b"],
                "authorizedGroups": ["group-a", "group-b"],
                "toolType": "jupyter",
                "toolName": "my-pytorch",
                "name": "url-instance-a",
            }
        ],
        "compute": {
            "gpuDevicesRequest": 1,
            "gpuRequestType": "portion",
            "gpuPortionRequest": 0.5,
            "gpuPortionLimit": 0.5,
            "gpuMemoryRequest": "10M",
            "gpuMemoryLimit": "10M",
            "migProfile": "1g.5gb",
            "cpuCoreRequest": 0.5,
            "cpuCoreLimit": 2,
            "cpuMemoryRequest": "20M",
            "cpuMemoryLimit": "30M",
            "largeShmRequest": False,
            "extendedResources": [
                {"resource": "hardware-vendor.example/foo", "quantity": 2, "exclude": False}
            ],
        },
        "storage": {
            "dataVolume": [{"id": "123e4567-e89b-12d3-a456-426614174000", "mountPath": "/mnt/data"}],
            "pvc": [
                {
                    "name": "storage-instance-a",
                    "existingPvc": False,
                    "claimName": "my-claim",
                    "path": "/container/my-claim",
                    "readOnly": False,
                    "ephemeral": False,
                    "claimInfo": {
                        "size": "1G",
                        "storageClass": "my-storage-class",
                        "accessModes": {"readWriteOnce": True, "readOnlyMany": False, "readWriteMany": False},
                        "volumeMode": "Filesystem",
                    },
                }
            ],
            "git": [
                {
                    "name": "storage-instance-a",
                    "branch": "main",
                    "revision": "string",
                    "path": "/container/my-repository",
                    "passwordSecret": "my-password-secret",
                    "secretKeyOfUser": "User",
                    "secretKeyOfPassword": "Password",
                }
            ],
            "configMapVolume": [{"name": "storage-instance-a", "configMap": "string", "mountPath": "string"}],
            "secretVolume": [{"name": "storage-instance-a", "secret": "string", "mountPath": "string"}],
        },
        "security": {
            "uidGidSource": "fromTheImage",
            "capabilities": ["CHOWN", "KILL"],
            "seccompProfileType": "RuntimeDefault",
            "runAsNonRoot": True,
            "readOnlyRootFilesystem": False,
            "runAsUid": 500,
            "runAsGid": 30,
            "supplementalGroups": "2,3,5,8",
        },
        "servingPort": {"container": 8080, "protocol": "http"},
        "autoscaling": {
            "minReplicas": 0,
            "maxReplicas": 1,
            "scaleToZeroRetentionSeconds": 3600,
            "metric": "throughput",
            "metricThreshold": 0,
        },
    },
}

WORKSPACE_REQUEST = copy.deepcopy(TRAINING_REQUEST)
for _key in ("completions", "parallelism", "backoffLimit"):
    del WORKSPACE_REQUEST["spec"][_key]


# Not a seed: a PyTorch job of a master and two workers, one GPU each, for the Distributed operations' example.
DISTRIBUTED_REQUEST = {
    "name": "my-distributed",
    "projectId": "1",
    "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210",
    "spec": {
        "image": "kubeflow/pytorch-dist-mnist:latest",
        "command": "python /opt/mnist/src/mnist.py --epochs 1",
        "distributedFramework": "PyTorch",
        "numWorkers": 2,
        "compute": {"gpuDevicesRequest": 1},
        "cleanPodPolicy": "Running",
    },
    "masterSpecSameAsWorker": True,
}
