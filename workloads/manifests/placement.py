"""A workload's objects placed on a KAI Scheduler cluster (docs/scheduling.md): every pod template, and the object
that owns it (KAI's pod-grouper reads the top owner's labels first), carries the project's queue, Run:ai's
priority class and its preemptibility as labels, and the pods KAI's scheduler name. A training's Job does not
count a pod KAI evicted (condition DisruptionTarget) as a failure: the Job makes a new pod, which queues again.
Pure: plain dicts in and out."""

from __future__ import annotations

from studio.clusters.scheduler import Placement

DISRUPTION_IGNORED = {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}


def _templates(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    if obj.get("kind") in ("Job", "Deployment") or (obj.get("kind") == "Service" and "template" in spec):
        return [spec["template"]] if isinstance(spec.get("template"), dict) else []
    found = []
    for key, value in spec.items():  # a Kubeflow job's <framework>ReplicaSpecs
        if key.endswith("ReplicaSpecs") and isinstance(value, dict):
            found += [r["template"] for r in value.values() if isinstance(r, dict) and isinstance(r.get("template"), dict)]
    return found


def place(objects: list[dict], placement: Placement | None) -> list[dict]:
    """The objects with KAI's labels and scheduler name where they run pods; unchanged without a placement."""
    if placement is None:
        return objects
    labels = placement.labels()
    for obj in objects:
        templates = _templates(obj)
        if not templates:
            continue
        obj["metadata"].setdefault("labels", {}).update(labels)
        for template in templates:
            template.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
            template.setdefault("spec", {})["schedulerName"] = placement.scheduler_name
        if obj.get("kind") == "Job" and templates[0]["spec"].get("restartPolicy") == "Never":
            policy = obj["spec"].setdefault("podFailurePolicy", {"rules": []})
            if DISRUPTION_IGNORED not in policy["rules"]:
                policy["rules"].insert(0, DISRUPTION_IGNORED)
    return objects
