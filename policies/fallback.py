"""The secure tenant default that ships: the widest layer of every effective policy, and the only one a stored
policy may loosen (a platform admin allows something for a scope by setting that rule there).

It holds workloads to Kubernetes' Pod Security Standard "baseline", which project namespaces enforce by default
(policies.pod_security): no host network or IPC, no hostPath volume, no capability outside baseline's list, no
Unconfined seccomp profile; and, beyond baseline, no privilege escalation and no explicit uid 0.

It also bounds what one workload puts on the cluster (issue 37: one distributed training of 1,000,000 workers held
the API server): the pods it runs at once and in all, how long a pod may ignore SIGTERM while it holds its GPUs,
and which Service fields reach the nodes (an ExternalName, a NodePort number of the submitter's choosing). A
platform admin raises a bound for a scope by setting that rule there (`rules.numWorkers.max: 500`).

The example bodies (workloads/api/seed_examples.py) comply except the training's `storage.hostPath`: a hostPath volume is what
baseline forbids first (the exploit of issue 12 mounted `/`), so a training with one is refused until a platform
admin allows hostPath for its scope (`rules.storage.hostPath.instances.canAdd: true`), see docs/policies.md.
"""

import copy

from policies.merge import Layer

# Pod Security Standards, baseline: the capabilities a container may add.
BASELINE_CAPABILITIES = ("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                         "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT")
SAFE_SECCOMP = ("RuntimeDefault", "Localhost")

# Run:ai's priority classes, the values its policy schema allows in `rules.priorityClass.options` (`train` and
# `build` are what `preemptibility` maps to, workloads.manifests.parts; with no class named, the KAI scheduler gives
# an inference its own `inference` class). Any other class, such as Kubernetes' system-node-critical, would let a
# workload preempt the cluster's own pods. A platform admin narrows the list for a scope by setting
# `rules.priorityClass.options` there.
RUNAI_PRIORITY_CLASSES = ("train", "build", "interactive-preemptible")

# Pods of one workload: at once (a training's parallelism, a distributed training's workers, an inference's
# replicas) and in all (a training's completions); seconds a pod may take to stop after SIGTERM (Kubernetes'
# default is 30).
MAX_PODS = 100
MAX_COMPLETIONS = 1000
MAX_GRACE_SECONDS = 300
# Service types a member may pick for `ports` (ExternalName makes a DNS alias to any host, inside the cluster).
SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer")

FALLBACK_SOURCE = {"scope": "tenant", "isFallback": True}
FALLBACK_LABEL = "tenant default"
FALLBACK_ID = "00000000-0000-4000-8000-000000000001"  # the built-in policy's id in lists (Run:ai's UUID form)


def _options(values) -> list[dict]:
    return [{"value": value} for value in values]


def _rules(policy_type: str) -> dict:
    """Every policy type (and so every workload kind: distributed trainings take the training policy, Kit streams
    the workspace one) gets every rule whose field its spec has."""
    security = {
        "runAsUid": {"min": 1},
        "capabilities": {"options": _options(BASELINE_CAPABILITIES)},
        "seccompProfileType": {"options": _options(SAFE_SECCOMP)},
    }
    if policy_type != "inferences":  # an inference's spec has no host namespaces or privilege escalation
        security.update({"allowPrivilegeEscalation": {"canEdit": False}, "hostIpc": {"canEdit": False},
                         "hostNetwork": {"canEdit": False}})
    # No service-account token in the pods (Kubernetes mounts the namespace's default one unless told otherwise).
    security["automountServiceAccountToken"] = {"canEdit": False}
    rules = {"security": security, "storage": {"hostPath": {"instances": {"canAdd": False}}},
             "priorityClass": {"options": _options(RUNAI_PRIORITY_CLASSES)},
             # customExternalPort: a NodePort's number on every node (policies.check reads it off `external`)
             "ports": {"attributes": {"serviceType": {"options": _options(SERVICE_TYPES)},
                                      "customExternalPort": {"canEdit": False}}}}
    pods = {"max": MAX_PODS}
    if policy_type == "trainings":  # trainings and distributed trainings (their workers' counts)
        rules.update(parallelism=pods, completions={"max": MAX_COMPLETIONS}, numWorkers=pods, minReplicas=pods,
                     maxReplicas=pods)
    if policy_type == "inferences":
        rules["autoscaling"] = {"minReplicas": pods, "maxReplicas": pods}
    else:
        rules["terminationGracePeriodSeconds"] = {"max": MAX_GRACE_SECONDS}
    return copy.deepcopy(rules)


def _defaults(policy_type: str) -> dict:
    if policy_type == "inferences":
        return {}
    return {"security": {"allowPrivilegeEscalation": False, "hostIpc": False, "hostNetwork": False}}


def fallback_layer(policy_type: str) -> Layer:
    return Layer(source=dict(FALLBACK_SOURCE), label=FALLBACK_LABEL, defaults=_defaults(policy_type),
                 rules=_rules(policy_type))
