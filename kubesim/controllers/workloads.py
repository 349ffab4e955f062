"""Deployments (through ReplicaSets and `pod-template-hash`, as the real controllers do) and Knative Services.

A Knative Service owns its pods directly: Configuration, Revision and Route objects are not modelled, but their
names appear where clients read them (status, pod labels). A new template makes a new revision; the old
revision's pods go once the new one has a ready pod. Pod count: `autoscaling.knative.dev/min-scale` (at least 1:
a service scaled to zero keeps one pod), capped by `max-scale`.
"""

import hashlib
import json

from ..api import SUFFIX_ALPHABET
from ..store import jcopy, now_rfc3339
from .jobs import condition

KNATIVE_ONLY = ("containerConcurrency", "timeoutSeconds", "responseStartTimeoutSeconds", "idleTimeoutSeconds")


def template_hash(template: dict) -> str:
    digest = hashlib.sha256(json.dumps(template, sort_keys=True).encode()).digest()
    return "".join(SUFFIX_ALPHABET[b % len(SUFFIX_ALPHABET)] for b in digest[:10])


def _ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def _active(pods: list) -> list:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]


def _max_unavailable(spec: dict, replicas: int) -> int:
    value = ((spec.get("strategy") or {}).get("rollingUpdate") or {}).get("maxUnavailable", "25%")
    if isinstance(value, str) and value.endswith("%"):
        return replicas * int(value[:-1]) // 100
    return int(value)


def _deployment_condition(conditions, type_, status, reason, message) -> list:
    now = now_rfc3339()
    old = next((c for c in conditions if c["type"] == type_), None)
    if old and (old["status"], old.get("reason"), old.get("message")) == (status, reason, message):
        return conditions
    new = {"type": type_, "status": status, "lastUpdateTime": now,
           "lastTransitionTime": old["lastTransitionTime"] if old and old["status"] == status else now,
           "reason": reason, "message": message}
    return [new if c["type"] == type_ else c for c in conditions] if old else conditions + [new]


def _omit_zeros(status: dict, fields) -> dict:
    return {k: v for k, v in status.items() if k not in fields or v}


class Workloads:
    def __init__(self, controller):
        self.ctl, self.store = controller, controller.store
        self.revisions = {}  # knative service uid -> (revision number, template hash)

    # --- Deployment -> ReplicaSet ----------------------------------------------------------------------------

    def sync_deployment(self, d: dict) -> None:
        meta, spec = d["metadata"], d["spec"]
        replicas, digest = spec.get("replicas", 1), template_hash(spec["template"])
        owned = self.ctl.owned(d, "replicasets.apps")
        current = next((rs for rs in owned if rs["metadata"]["labels"].get("pod-template-hash") == digest), None)
        revisions = [int((rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", 0))
                     for rs in owned]
        if current is None:
            current = self._create_replicaset(d, digest, replicas, max(revisions, default=0) + 1)
        elif current["spec"].get("replicas") != replicas:
            self._scale(d, current, replicas)
        for rs in owned:
            if rs is not current and rs["spec"].get("replicas"):
                self._scale(d, rs, 0)
        revision = current["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
        status = self._deployment_status(d, owned, current, replicas)
        annotations = meta.get("annotations") or {}
        if status != d.get("status") or annotations.get("deployment.kubernetes.io/revision") != revision:
            new_meta = {**meta, "annotations": {**annotations, "deployment.kubernetes.io/revision": revision}}
            self.store.update("deployments.apps", {**d, "metadata": new_meta, "status": status})

    def _deployment_status(self, d: dict, owned: list, current: dict, replicas: int) -> dict:
        meta, spec = d["metadata"], d["spec"]
        rs_list = [self.store.get("replicasets.apps", meta["namespace"], rs["metadata"]["name"]) or rs
                   for rs in owned + ([] if current in owned else [current])]
        sums = {f: sum((rs.get("status") or {}).get(f, 0) for rs in rs_list)
                for f in ("replicas", "readyReplicas", "availableReplicas")}
        updated = (self.store.get("replicasets.apps", meta["namespace"], current["metadata"]["name"]) or current)
        updated_count = (updated.get("status") or {}).get("replicas", 0)
        available_ok = sums["availableReplicas"] >= replicas - _max_unavailable(spec, replicas)
        conditions = (d.get("status") or {}).get("conditions") or []
        conditions = _deployment_condition(conditions, "Available", "True" if available_ok else "False",
                                           "MinimumReplicasAvailable" if available_ok else "MinimumReplicasUnavailable",
                                           "Deployment has minimum availability." if available_ok
                                           else "Deployment does not have minimum availability.")
        done = updated_count == replicas == sums["replicas"] and sums["availableReplicas"] >= replicas
        name = current["metadata"]["name"]
        conditions = _deployment_condition(conditions, "Progressing", "True",
                                           "NewReplicaSetAvailable" if done else "ReplicaSetUpdated",
                                           f'ReplicaSet "{name}" has successfully progressed.' if done
                                           else f'ReplicaSet "{name}" is progressing.')
        return _omit_zeros({"observedGeneration": meta.get("generation", 1), **sums, "updatedReplicas": updated_count,
                            "unavailableReplicas": max(0, replicas - sums["availableReplicas"]),
                            "conditions": conditions},
                           ("replicas", "readyReplicas", "availableReplicas", "updatedReplicas", "unavailableReplicas"))

    def _create_replicaset(self, d: dict, digest: str, replicas: int, revision: int) -> dict:
        meta, spec = d["metadata"], d["spec"]
        template = jcopy(spec["template"])
        template["metadata"]["labels"] = {**(template["metadata"].get("labels") or {}), "pod-template-hash": digest}
        selector = jcopy(spec["selector"])
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), "pod-template-hash": digest}
        rs = {"metadata": {"name": f"{meta['name']}-{digest}", "labels": template["metadata"]["labels"],
                           "annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas),
                                           "deployment.kubernetes.io/max-replicas": str(replicas + 1),
                                           "deployment.kubernetes.io/revision": str(revision)},
                           "ownerReferences": [self.ctl.owner_ref(d)]},
              "spec": {"replicas": replicas, "selector": selector, "template": template}}
        created = self.ctl.create("replicasets.apps", meta["namespace"], rs)
        self.ctl.recorder.emit(d, "Normal", "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
                                                                 f"from 0 to {replicas}", "deployment-controller")
        return created

    def _scale(self, d: dict, rs: dict, replicas: int) -> None:
        before = rs["spec"].get("replicas", 0)
        new = jcopy(rs)
        new["spec"]["replicas"] = replicas
        new["metadata"].setdefault("annotations", {})["deployment.kubernetes.io/desired-replicas"] = str(replicas)
        self.ctl.update("replicasets.apps", new)
        direction = "up" if replicas > before else "down"
        self.ctl.recorder.emit(d, "Normal", "ScalingReplicaSet", f"Scaled {direction} replica set "
                               f"{rs['metadata']['name']} from {before} to {replicas}", "deployment-controller")

    def sync_replicaset(self, rs: dict) -> None:
        meta = rs["metadata"]
        active = _active(self.ctl.owned_pods(rs))
        want = rs["spec"].get("replicas", 1)
        for _ in range(want - len(active)):
            pod = self.ctl.create_pod(rs, jcopy(rs["spec"]["template"]), meta["name"] + "-")
            active.append(pod)
            self.ctl.recorder.emit(rs, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                                   "replicaset-controller")
        if len(active) > want:
            # Like the real controller: unscheduled first, then not ready, then the newest.
            active.sort(key=lambda p: (bool(p["spec"].get("nodeName")), _ready(p),
                                       p["metadata"]["creationTimestamp"]), reverse=False)
            for pod in active[:len(active) - want]:
                self.ctl.delete_object("pods", pod)
                self.ctl.recorder.emit(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {pod['metadata']['name']}",
                                       "replicaset-controller")
            active = active[len(active) - want:]
        ready = sum(1 for p in active if _ready(p))
        status = {"replicas": len(active), "fullyLabeledReplicas": len(active), "readyReplicas": ready,
                  "availableReplicas": ready, "observedGeneration": meta.get("generation", 1)}
        status = _omit_zeros(status, ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"))
        if status != rs.get("status"):
            self.store.update("replicasets.apps", {**rs, "metadata": dict(meta), "status": status})

    # --- Knative Service -------------------------------------------------------------------------------------

    def sync_knative(self, ksvc: dict) -> None:
        meta, spec = ksvc["metadata"], ksvc.get("spec") or {}
        name, namespace = meta["name"], meta["namespace"]
        template = spec.get("template") or {}
        tmeta = template.get("metadata") or {}
        number = self._revision_number(meta["uid"], template)
        revision = tmeta.get("name") or f"{name}-{number:05d}"
        pods = _active(self.ctl.owned_pods(ksvc))
        current = [p for p in pods if p["metadata"]["labels"].get("serving.knative.dev/revision") == revision]
        want = _knative_scale(tmeta.get("annotations") or {})
        for _ in range(want - len(current)):
            current.append(self._create_revision_pod(ksvc, template, revision, number))
        for pod in current[want:]:
            self.ctl.delete_object("pods", pod)
        current = current[:want]
        ready = sum(1 for p in current if _ready(p))
        status = jcopy(ksvc.get("status") or {})
        if ready:
            for pod in pods:
                if pod["metadata"]["labels"].get("serving.knative.dev/revision") != revision:
                    self.ctl.delete_object("pods", pod)
            status["latestReadyRevisionName"] = revision
            status["traffic"] = [{"revisionName": revision, "latestRevision": True, "percent": 100}]
        conditions = status.get("conditions") or []
        states = _knative_states(name, revision, ready, self._failure(current))
        conditions = _knative_conditions(conditions, states)
        status.update({"observedGeneration": meta.get("generation", 1), "latestCreatedRevisionName": revision,
                       "url": f"http://{name}.{namespace}.example.com",
                       "address": {"url": f"http://{name}.{namespace}.svc.cluster.local"},
                       "conditions": sorted(conditions, key=lambda c: c["type"])})
        if status != ksvc.get("status"):
            self.store.update("services.serving.knative.dev", {**ksvc, "metadata": dict(meta), "status": status})

    def _revision_number(self, uid: str, template: dict) -> int:
        """The revision a Service's template makes: the same while the template is, the next once it changed."""
        digest = template_hash(template)
        number, seen = self.revisions.get(uid, (0, None))
        if seen != digest:
            number += 1
            self.revisions[uid] = (number, digest)
        return number

    def _create_revision_pod(self, ksvc: dict, template: dict, revision: str, number: int) -> dict:
        name = ksvc["metadata"]["name"]
        pod_template = {"metadata": jcopy(template.get("metadata") or {}),
                        "spec": {k: jcopy(v) for k, v in (template.get("spec") or {}).items() if k not in KNATIVE_ONLY}}
        pod_template["metadata"].pop("name", None)
        pod_template["metadata"]["labels"] = {
            **(pod_template["metadata"].get("labels") or {}), "app": revision,
            "serving.knative.dev/service": name, "serving.knative.dev/configuration": name,
            "serving.knative.dev/configurationGeneration": str(number), "serving.knative.dev/revision": revision}
        for c in pod_template["spec"].get("containers") or []:
            c.pop("readinessProbe", None)
            c.setdefault("name", "user-container")  # Knative's webhook names an unnamed container so
        prefix = f"{revision}-deployment-{template_hash(template)}-"
        return self.ctl.create_pod(ksvc, pod_template, prefix)

    @staticmethod
    def _failure(pods: list) -> str | None:
        for pod in pods:
            for cs in (pod.get("status") or {}).get("containerStatuses") or []:
                waiting = (cs.get("state") or {}).get("waiting") or {}
                if waiting.get("reason") in ("ErrImagePull", "ImagePullBackOff", "CrashLoopBackOff"):
                    return waiting.get("message") or waiting["reason"]
        return None


def _knative_scale(annotations: dict) -> int:
    """The pods a revision runs: its min-scale (at least 1), within its max-scale."""
    low = int(annotations.get("autoscaling.knative.dev/min-scale") or annotations.get(
        "autoscaling.knative.dev/minScale") or 0)
    high = int(annotations.get("autoscaling.knative.dev/max-scale") or annotations.get(
        "autoscaling.knative.dev/maxScale") or 0)
    return max(low, 1) if not high else min(max(low, 1), high)


def _knative_states(name: str, revision: str, ready: int, failure: str | None) -> dict:
    """A Knative Service's conditions: type -> (status, reason, message)."""
    waiting = f'Configuration "{name}" is waiting for a Revision to become ready.'
    missing = f'Configuration "{name}" does not have any ready Revision.'
    if ready:
        return {"ConfigurationsReady": ("True", None, None), "Ready": ("True", None, None),
                "RoutesReady": ("True", None, None)}
    if failure:
        return {"ConfigurationsReady": ("False", "RevisionFailed",
                                        f'Revision "{revision}" failed with message: {failure}.'),
                "Ready": ("False", "RevisionMissing", missing), "RoutesReady": ("False", "RevisionMissing", missing)}
    return {"ConfigurationsReady": ("Unknown", None, None), "Ready": ("Unknown", "RevisionMissing", waiting),
            "RoutesReady": ("Unknown", "RevisionMissing", waiting)}


def _knative_conditions(conditions: list, states: dict) -> list:
    for type_, (value, reason, message) in states.items():
        conditions = [{k: v for k, v in c.items() if v is not None and k != "lastProbeTime"}
                      for c in condition(conditions, type_, value, reason, message)]
    return conditions
