"""KAI Scheduler's pod-grouper, as kubesim plays it: every pod for the `kai-scheduler` gets a PodGroup
(`scheduling.run.ai/v2alpha2`) named after its top owner, and the pod the `pod-group-name` annotation.

What decides the group, as KAI v0.12's pod-grouper does (pkg/podgrouper):
- the top owner, following controller ownerReferences (pod -> ReplicaSet -> Deployment, pod -> Job, pod ->
  PyTorchJob …); `pg-<top owner name>-<top owner uid>`, except a Deployment's (or Knative Service's, or an
  owner-less pod's) pods, which get one group each (`pg-<pod name>-<pod uid>`);
- the queue: the `kai.scheduler/queue` label of the top owner, else of the pod, else `default-queue`;
- the priority class: the `priorityClassName` label of the top owner, else of the pod, else the pod's
  `spec.priorityClassName`, else the kind's default (Deployment and Knative Service: `inference`, everything
  else `train`); a class the cluster does not define falls back to the default;
- preemptibility: the `kai.scheduler/preemptibility` label of the owner or pod, else by the class's value
  (below 100: preemptible);
- minMember: 1; a Kubeflow training job's all its replicas (`runPolicy.schedulingPolicy.minAvailable` when
  set); a Job's `kai.scheduler/batch-min-member` annotation when set.
The PodGroup carries the top owner's labels and is owned by it (by the pod, for per-pod groups), so it goes
when its workload does.
"""

from ..errors import ApiError

SCHEDULER_NAME = "kai-scheduler"
QUEUE_LABEL = "kai.scheduler/queue"
POOL_LABEL = "kai.scheduler/node-pool"  # KAI's partition label: the shard that schedules the group
PRIORITY_LABEL = "priorityClassName"
PREEMPTIBILITY_LABEL = "kai.scheduler/preemptibility"
POD_GROUP_ANNOTATION = "pod-group-name"
MIN_MEMBER_ANNOTATION = "kai.scheduler/batch-min-member"
DEFAULT_QUEUE = "default-queue"
GPU_GROUP_LABEL = "runai-gpu-group"  # the shared GPU of a fraction's pod
POD_GROUPS = "podgroups.scheduling.run.ai"
POD_GROUP_API = "scheduling.run.ai/v2alpha2"
QUEUES = "queues.scheduling.run.ai"
PRIORITY_CLASSES_KEY = "priorityclasses.scheduling.k8s.io"
# The classes KAI installs (its chart's templates/priorityclasses): value, and whether preemptible.
PRIORITY_CLASSES = {"train": 50, "build-preemptible": 75, "build": 100, "inference": 125}
NON_PREEMPTIBLE_PRIORITY = 100
PER_POD_KINDS = {("apps/v1", "Deployment"), ("serving.knative.dev/v1", "Service"), ("v1", "Pod")}
INFERENCE_KINDS = {("apps/v1", "Deployment"), ("serving.knative.dev/v1", "Service")}
KUBEFLOW_REPLICAS = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "MPIJob": "mpiReplicaSpecs",
                     "XGBoostJob": "xgbReplicaSpecs", "JAXJob": "jaxReplicaSpecs"}


def is_kai_pod(pod: dict) -> bool:
    return (pod.get("spec") or {}).get("schedulerName") == SCHEDULER_NAME


def top_owner(store, pod: dict) -> dict:
    """The last object up the controller ownerReferences that the store holds (the pod itself when none)."""
    obj, seen = pod, set()
    while True:
        refs = obj["metadata"].get("ownerReferences") or []
        ref = next((r for r in refs if r.get("controller")), refs[0] if refs else None)
        if ref is None or ref.get("uid") in seen:
            return obj
        seen.add(ref.get("uid"))
        found = store.get_uid(ref.get("uid"))
        if found is None:
            return obj
        obj = found[1]


def priority_value(store, name: str) -> int | None:
    """The value of a priority class the cluster defines (KAI's own, or one created on the server)."""
    found = store.get(PRIORITY_CLASSES_KEY, None, name) if name else None
    if found is not None:
        return int(found.get("value") or 0)
    return None


def group_metadata(store, pod: dict) -> dict:
    """{name, owner, labels, queue, priorityClassName, priority, preemptible, minMember} of the pod's group."""
    owner = top_owner(store, pod)
    kind = (owner.get("apiVersion"), owner.get("kind"))
    per_pod = owner is pod or kind in PER_POD_KINDS
    named = pod if per_pod else owner
    owner_labels = owner["metadata"].get("labels") or {}
    pod_labels = pod["metadata"].get("labels") or {}
    queue = owner_labels.get(QUEUE_LABEL) or pod_labels.get(QUEUE_LABEL) or DEFAULT_QUEUE
    cls = _priority_class(store, pod, owner_labels, pod_labels,
                          "inference" if kind in INFERENCE_KINDS else "train")
    value = priority_value(store, cls)
    value = PRIORITY_CLASSES.get(cls, 0) if value is None else value
    explicit = owner_labels.get(PREEMPTIBILITY_LABEL) or pod_labels.get(PREEMPTIBILITY_LABEL)
    preemptible = (explicit == "preemptible" if explicit in ("preemptible", "non-preemptible")
                   else value < NON_PREEMPTIBLE_PRIORITY)
    min_member = _min_member(owner)
    meta = named["metadata"]
    labels = dict(owner_labels)
    if POOL_LABEL not in labels and POOL_LABEL in pod_labels:  # as KAI's pod-grouper: the pod's shard
        labels[POOL_LABEL] = pod_labels[POOL_LABEL]
    return {"name": f"pg-{meta['name']}-{meta['uid']}", "owner": named, "labels": labels,
            "queue": queue, "priorityClassName": cls, "priority": value, "preemptible": preemptible,
            "minMember": max(1, min_member)}


def _priority_class(store, pod: dict, owner_labels: dict, pod_labels: dict, default: str) -> str:
    """The first priority class the cluster defines of: the owner's label, the pod's, the pod's spec."""
    for candidate in (owner_labels.get(PRIORITY_LABEL), pod_labels.get(PRIORITY_LABEL),
                      (pod.get("spec") or {}).get("priorityClassName")):
        if candidate and priority_value(store, candidate) is not None:
            return candidate
    return default


def _min_member(owner: dict) -> int:
    """A gang's size: a Kubeflow job's minAvailable or all its replicas; a Job's annotation; else 1."""
    if owner.get("kind") in KUBEFLOW_REPLICAS and owner.get("apiVersion", "").startswith("kubeflow.org/"):
        spec = owner.get("spec") or {}
        replicas = spec.get(KUBEFLOW_REPLICAS[owner["kind"]]) or {}
        policy = ((spec.get("runPolicy") or {}).get("schedulingPolicy") or {}).get("minAvailable")
        return int(policy) if policy else sum(int((r or {}).get("replicas", 1)) for r in replicas.values())
    if owner.get("kind") == "Job":
        raw = (owner["metadata"].get("annotations") or {}).get(MIN_MEMBER_ANNOTATION)
        if raw and str(raw).isdigit():
            return max(1, int(raw))
    return 1


def ensure_group(ctl, pod: dict) -> dict:
    """The pod's PodGroup, created (or its spec brought up to date) as the pod-grouper would, and the pod
    annotated with its name. Returns the group's metadata (group_metadata) with `object` the stored group."""
    store = ctl.store
    info = group_metadata(store, pod)
    namespace = pod["metadata"]["namespace"]
    spec = {"minMember": info["minMember"], "queue": info["queue"], "priorityClassName": info["priorityClassName"],
            "preemptibility": "preemptible" if info["preemptible"] else "non-preemptible",
            "markUnschedulable": True, "schedulingBackoff": 1}
    group = store.get(POD_GROUPS, namespace, info["name"])
    if group is None:
        body = {"apiVersion": POD_GROUP_API, "kind": "PodGroup",
                "metadata": {"name": info["name"], "labels": info["labels"],
                             "ownerReferences": [ctl.owner_ref(info["owner"])]},
                "spec": spec}
        try:
            group = ctl.create(POD_GROUPS, namespace, body)
        except ApiError as exc:
            if exc.code != 409:
                raise
            group = store.get(POD_GROUPS, namespace, info["name"])
    elif {k: group["spec"].get(k) for k in spec} != spec:
        group = store.update(POD_GROUPS, {**group, "spec": {**group["spec"], **spec}})
    annotations = pod["metadata"].get("annotations") or {}
    if annotations.get(POD_GROUP_ANNOTATION) != info["name"]:
        store.update("pods", {**pod, "metadata": {**pod["metadata"],
                                                  "annotations": {**annotations, POD_GROUP_ANNOTATION: info["name"]}}})
    return {**info, "object": group}


def seed_priority_classes(ctl) -> None:
    """KAI's priority classes, as its chart creates them at install."""
    for name, value in PRIORITY_CLASSES.items():
        if ctl.store.get(PRIORITY_CLASSES_KEY, None, name) is None:
            ctl.create(PRIORITY_CLASSES_KEY, None, {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value, "globalDefault": False,
                "preemptionPolicy": "PreemptLowerPriority" if value < NON_PREEMPTIBLE_PRIORITY else "Never",
                "description": f"KAI Scheduler's {name} class"})
