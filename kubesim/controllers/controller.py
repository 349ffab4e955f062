"""The cluster's control loop: a work queue of changed objects (fed by the store) and a timer queue of due
transitions, drained every `tick`; so a quiet cluster of 10,000 objects costs nothing per tick. Reconcilers
for each kind live in kubesim/node/kubelet.py, jobs.py and workloads.py; here are the small ones (Services, PVCs, Ingresses,
HPAs, Namespaces) and garbage collection by ownerReferences (background, foreground and orphan propagation).
"""

import heapq
import itertools
import logging
import sys
import threading
import time

from ..errors import Unavailable
from ..node.events import Recorder
from ..node.kai import KaiScheduler
from ..node.kubelet import Kubelet
from ..node.podgrouper import QUEUES
from ..node.scheduler import POD_GROUP_KEYS, Scheduler
from ..resources import METRICS_GROUP
from ..store import jcopy, now_rfc3339, parse_rfc3339
from .jobs import JobController
from .kubeflow import KubeflowJobs
from .workloads import Workloads

log = logging.getLogger("kubesim")
BATCH = 500  # objects reconciled per lock hold, so API requests are never held up for long
RETRY_SECONDS, RETRY_MAX_SECONDS = 0.5, 10.0  # a failed reconcile runs again after 0.5 s, 1 s, 2 s … 10 s


class Controller:
    def __init__(self, sim, nodes):
        self.sim, self.store, self.api, self.registry = sim, sim.store, sim.api, sim.registry
        self.dirty = {}    # (key, namespace, name) -> None: an insertion-ordered set
        self.gone = []     # uids of removed objects whose dependents need collecting
        self.timers = []   # heap of (due, seq, (key, namespace, name))
        self._due = {}     # (key, namespace, name) -> earliest pending due time
        self.failures = {}  # (key, namespace, name) -> reconciles failed in a row
        self._seq = itertools.count()
        self._lb_ips = itertools.count(1)
        self.recorder = Recorder(self)
        self.scheduler = Scheduler(nodes)
        # KAI Scheduler's queues, pod groups and preemption, where the cluster runs it (KubeSim(kai=True)).
        self.kai = KaiScheduler(self) if getattr(sim, "kai", False) else None
        self.kubelet = Kubelet(self)
        self.jobs = JobController(self)
        self.workloads = Workloads(self)
        self.kubeflow = KubeflowJobs(self)
        self.handlers = {
            **self.kubeflow.handlers(),
            "pods": self.kubelet.sync, "jobs.batch": self.jobs.sync,
            "deployments.apps": self.workloads.sync_deployment, "replicasets.apps": self.workloads.sync_replicaset,
            "services.serving.knative.dev": self.workloads.sync_knative, "services": self._sync_service,
            "persistentvolumeclaims": self._sync_pvc, "persistentvolumes": self._sync_pv,
            "ingresses.networking.k8s.io": self._sync_ingress,
            "horizontalpodautoscalers.autoscaling": self._sync_hpa, "namespaces": self._sync_namespace,
            "events": self.recorder.expire,
        }
        if not getattr(sim, "node_side", True):
            # Pods, and the operators of custom resources, are played by a node side elsewhere, over HTTP (as on a
            # real server); kubesim keeps what a real control plane's controllers do.
            for key in ("pods", "services.serving.knative.dev", *self.kubeflow.handlers()):
                del self.handlers[key]
        self._stop = threading.Event()
        self._thread = None
        self.store.listeners.append(self._on_change)

    # --- queue -----------------------------------------------------------------------------------------------

    def _on_change(self, key, type_, obj, old):
        if key == "events":
            return
        if key in POD_GROUP_KEYS:  # a gang's minMember changed or its group came: its pods may fit now
            self.scheduler.freed = True
        if key == QUEUES and self.kai is not None and (type_ != "MODIFIED" or obj.get("spec") != old.get("spec")):
            self.kai.dirty = True  # a queue came, went or its quotas changed
        meta = obj["metadata"]
        namespace = meta.get("namespace", "")
        self.dirty[(key, namespace, meta["name"])] = None
        for ref in meta.get("ownerReferences") or ():
            owner = self.registry.by_kind(ref.get("apiVersion"), ref.get("kind"))
            if owner is not None:
                self.dirty[(owner.key, namespace, ref.get("name"))] = None
        if type_ == "DELETED":
            self.gone.append(meta["uid"])
            if key == "pods":
                self.kubelet.forget(obj)
                self.jobs.forget_pod(meta["uid"])
            elif key == "services.serving.knative.dev":
                self.workloads.revisions.pop(meta["uid"], None)

    def after(self, seconds: float, key: str, namespace: str, name: str) -> None:
        """Reconcile the object again in `seconds`. Reconcilers re-arm their next timer on every run, so an
        earlier pending timer for the same object makes a later one unnecessary."""
        item, due = (key, namespace or "", name), time.time() + seconds
        pending = self._due.get(item)
        if pending is not None and pending <= due:
            return
        self._due[item] = due
        heapq.heappush(self.timers, (due, next(self._seq), item))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kubesim-controller", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.sim.tick):
            try:
                self.step()
            except Exception:  # keep the cluster alive; the traceback says what to fix
                log.exception("kubesim: controller step failed")

    def step(self) -> None:
        """One tick: move due timers to the queue, then drain the queue in batches."""
        with self.store.lock:
            now = time.time()
            while self.timers and self.timers[0][0] <= now:
                due, _, item = heapq.heappop(self.timers)
                if self._due.get(item) == due:
                    del self._due[item]
                self.dirty[item] = None
        for _ in range(1000):
            with self.store.lock:
                gone, self.gone = self.gone, []
                for uid in gone:
                    self._collect(uid)
                batch = list(itertools.islice(self.dirty, BATCH))
                for item in batch:
                    del self.dirty[item]
                for item in batch:
                    try:
                        self._reconcile(*item)
                    except Exception:  # this object again later; the rest of the batch goes on
                        self._retry(item)
                if self.kai is not None:
                    self.kai.run()
                self.scheduler.run(self.store, self.kubelet.bind, self.kubelet.unschedulable)
                if not self.dirty and not self.gone:
                    return

    def _retry(self, item) -> None:
        """A reconcile that failed (on another API server: a write it did not take) runs again after a
        doubling delay, so an outage costs a few retries, not the object."""
        attempt = self.failures.get(item, 0) + 1
        self.failures[item] = attempt
        log.warning("kubesim: %s %s/%s failed (attempt %d); again later", *item, attempt,
                    exc_info=attempt == 1 and not isinstance(sys.exc_info()[1], Unavailable))
        self.after(min(RETRY_SECONDS * 2 ** (attempt - 1), RETRY_MAX_SECONDS), *item)

    def _reconcile(self, key, namespace, name) -> None:
        obj = self.store.get(key, namespace or None, name)
        if obj is None:
            return
        if obj["metadata"].get("deletionTimestamp") and key not in ("pods", "namespaces"):
            return self._finalize(key, obj)
        handler = self.handlers.get(key)
        if handler is not None:
            handler(obj)
        self.failures.pop((key, namespace or "", name), None)

    # --- helpers for the reconcilers -------------------------------------------------------------------------

    def owner_ref(self, owner: dict) -> dict:
        meta = owner["metadata"]
        return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"], "uid": meta["uid"],
                "controller": True, "blockOwnerDeletion": True}

    def owned(self, owner: dict, key: str) -> list[dict]:
        return [obj for k, obj in self.store.dependents_of(owner["metadata"]["uid"]) if k == key]

    def owned_pods(self, owner: dict) -> list[dict]:
        return self.owned(owner, "pods")

    def create(self, key: str, namespace: str, obj: dict) -> dict:
        return self.api.create(self.registry.by_key[key], namespace, obj, internal=True)

    def update(self, key: str, obj: dict) -> dict:
        meta = obj["metadata"]
        return self.api.update(self.registry.by_key[key], meta.get("namespace"), meta["name"], obj, internal=True)

    def create_pod(self, owner: dict, template: dict, generate_name: str) -> dict:
        meta = {**template.get("metadata", {}), "generateName": generate_name,
                "ownerReferences": [self.owner_ref(owner)]}
        meta.pop("name", None)
        return self.create("pods", owner["metadata"]["namespace"], {"metadata": meta, "spec": template["spec"]})

    def delete_object(self, key: str, obj: dict, propagation: str = "Background") -> None:
        meta = obj["metadata"]
        if self.store.get(key, meta.get("namespace"), meta["name"]) is not None and not meta.get("deletionTimestamp"):
            self.api.delete(self.registry.by_key[key], meta.get("namespace"), meta["name"],
                            {"propagationPolicy": propagation})

    # --- garbage collection ----------------------------------------------------------------------------------

    def _collect(self, owner_uid: str) -> None:
        """The owner is gone: delete dependents with no other live owner, unlink the rest."""
        for key, dep in self.store.dependents_of(owner_uid):
            refs = dep["metadata"].get("ownerReferences") or []
            alive = [r for r in refs if r.get("uid") != owner_uid and self.store.get_uid(r.get("uid"))]
            if alive:
                self._set_owner_refs(key, dep, alive)
            else:
                self.delete_object(key, dep)

    def _set_owner_refs(self, key: str, obj: dict, refs: list) -> None:
        meta = {**obj["metadata"], "ownerReferences": refs}
        if not refs:
            meta.pop("ownerReferences")
        self.store.update(key, {**obj, "metadata": meta})

    def _finalize(self, key: str, obj: dict) -> None:
        meta = obj["metadata"]
        finalizers = list(meta.get("finalizers") or [])
        dependents = self.store.dependents_of(meta["uid"])
        if "orphan" in finalizers:
            for dep_key, dep in dependents:
                self._set_owner_refs(dep_key, dep, [r for r in dep["metadata"]["ownerReferences"]
                                                    if r.get("uid") != meta["uid"]])
            finalizers.remove("orphan")
        elif "foregroundDeletion" in finalizers:
            if dependents:
                for dep_key, dep in dependents:
                    self.delete_object(dep_key, dep, "Foreground")
                self.after(self.sim.tick, key, meta.get("namespace", ""), meta["name"])
                return
            finalizers.remove("foregroundDeletion")
        else:
            return  # someone else's finalizer: theirs to remove
        new = jcopy(obj)
        new["metadata"]["finalizers"] = finalizers
        self.api.update(self.registry.by_key[key], meta.get("namespace"), meta["name"], new, internal=True)

    # --- small reconcilers -----------------------------------------------------------------------------------

    def _sync_namespace(self, ns: dict) -> None:
        if not ns["metadata"].get("deletionTimestamp"):
            return
        name = ns["metadata"]["name"]
        for res in self.registry.all:
            if res.namespaced and res.group != METRICS_GROUP:
                for obj in self.store.list(res.key, name):
                    self.delete_object(res.key, obj)
        if self.store.in_namespace(name) == 0:
            self.store.remove("namespaces", None, name)
        else:
            self.after(self.sim.tick, "namespaces", "", name)

    def _next_lb_ip(self) -> str:
        n = next(self._lb_ips)
        return f"172.18.{255 - n // 250}.{n % 250 + 1}"

    def _set_status(self, key: str, obj: dict, status: dict) -> None:
        if status != obj.get("status"):
            self.store.update(key, {**obj, "metadata": dict(obj["metadata"]), "status": status})

    def _sync_service(self, svc: dict) -> None:
        if svc["spec"].get("type") != "LoadBalancer" or (svc.get("status") or {}).get("loadBalancer", {}).get("ingress"):
            return
        age = time.time() - parse_rfc3339(svc["metadata"]["creationTimestamp"])
        if age < self.sim.tick:  # the cloud load balancer answers a moment later
            return self.after(self.sim.tick - age, "services", svc["metadata"]["namespace"], svc["metadata"]["name"])
        self._set_status("services", svc, {"loadBalancer": {"ingress": [{"ip": self._next_lb_ip(), "ipMode": "VIP"}]}})

    def _sync_ingress(self, ing: dict) -> None:
        if not (ing.get("status") or {}).get("loadBalancer", {}).get("ingress"):
            self._set_status("ingresses.networking.k8s.io", ing, {"loadBalancer": {"ingress": [{"ip": self._next_lb_ip()}]}})

    def _sync_pv(self, pv: dict) -> None:
        """A volume made for a claim that waits for it (pre-bound by name): the claim binds now."""
        ref = pv["spec"].get("claimRef") or {}
        if (pv.get("status") or {}).get("phase") != "Bound" and ref.get("name"):
            self.after(0, "persistentvolumeclaims", ref.get("namespace"), ref["name"])

    def _sync_pvc(self, pvc: dict) -> None:
        """The PersistentVolume controller: a claim naming a volume (pre-bound) binds to it once it exists; a
        claim of a storage class gets a volume made for it (`pvc-<uid>`, a host path as the local-path
        provisioner makes); a claim of no class (`""`) naming no volume waits, as on a cluster without one."""
        if (pvc.get("status") or {}).get("phase") == "Bound":
            return
        spec, meta = pvc["spec"], pvc["metadata"]
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
        claim_ref = {"kind": "PersistentVolumeClaim", "apiVersion": "v1", "namespace": meta["namespace"],
                     "name": meta["name"], "uid": meta["uid"]}
        if spec.get("volumeName"):
            volume = self.store.get("persistentvolumes", None, spec["volumeName"])
            ref = (volume or {}).get("spec", {}).get("claimRef") or {}
            if volume is None or (ref and (ref.get("namespace"), ref.get("name")) != (meta["namespace"],
                                                                                      meta["name"])):
                return
            storage = ((volume["spec"].get("capacity") or {}).get("storage")) or storage
            self.store.update("persistentvolumes", {**volume, "spec": {**volume["spec"], "claimRef": claim_ref},
                                                    "status": {"phase": "Bound"}})
        elif spec.get("storageClassName") in ("", None):
            return
        else:
            name = f"pvc-{meta['uid']}"
            if self.store.get("persistentvolumes", None, name) is None:
                self.store.create("persistentvolumes", {
                    "apiVersion": "v1", "kind": "PersistentVolume",
                    "metadata": {"name": name, "annotations": {"pv.kubernetes.io/provisioned-by":
                                                               "rancher.io/local-path"}},
                    "spec": {"capacity": {"storage": storage},
                             "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                             "hostPath": {"path": f"/var/local-path-provisioner/{name}_{meta['namespace']}_"
                                                  f"{meta['name']}", "type": "DirectoryOrCreate"},
                             "persistentVolumeReclaimPolicy": "Delete", "claimRef": claim_ref,
                             "storageClassName": spec["storageClassName"],
                             "volumeMode": spec.get("volumeMode") or "Filesystem"},
                    "status": {"phase": "Bound"}})
        new = {**pvc, "metadata": {**meta, "annotations": {
            **(meta.get("annotations") or {}), "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes"}},
            "spec": {**spec, "volumeName": spec.get("volumeName") or f"pvc-{meta['uid']}"},
            "status": {"phase": "Bound", "accessModes": spec.get("accessModes") or ["ReadWriteOnce"],
                       "capacity": {"storage": storage}}}
        self.store.update("persistentvolumeclaims", new)

    def _sync_hpa(self, hpa: dict) -> None:
        meta, spec = hpa["metadata"], hpa["spec"]
        ref = spec.get("scaleTargetRef") or {}
        target_res = self.registry.by_kind(ref.get("apiVersion", "apps/v1"), ref.get("kind", ""))
        target = target_res and self.store.get(target_res.key, meta["namespace"], ref.get("name", ""))
        self.after(1.0, "horizontalpodautoscalers.autoscaling", meta["namespace"], meta["name"])
        status = jcopy(hpa.get("status") or {})
        status["observedGeneration"] = meta.get("generation", 1)
        if not target:
            message = (f"the HPA controller was unable to get the target's current scale: "
                       f'{(target_res.plural if target_res else ref.get("kind", "").lower() + "s")}/scale "'
                       f'{ref.get("name")}" not found')
            status.update(currentReplicas=0, desiredReplicas=0, conditions=[
                {"type": "AbleToScale", "status": "False", "reason": "FailedGetScale", "message": message,
                 "lastTransitionTime": status.get("conditions", [{}])[0].get("lastTransitionTime")
                 or hpa["metadata"]["creationTimestamp"]}])
            return self._set_status("horizontalpodautoscalers.autoscaling", hpa, status)
        current = target["spec"].get("replicas", 1)
        desired = min(max(current, spec.get("minReplicas", 1)), spec["maxReplicas"])
        if desired != current:  # with no load to measure, the HPA only keeps the target within its bounds
            new = jcopy(target)
            new["spec"]["replicas"] = desired
            self.update(target_res.key, new)
            status["lastScaleTime"] = now_rfc3339()
        limited = desired in (spec.get("minReplicas", 1), spec["maxReplicas"]) and current != desired
        since = hpa["metadata"]["creationTimestamp"]
        status.update(currentReplicas=(target.get("status") or {}).get("replicas", current), desiredReplicas=desired,
                      currentMetrics=status.get("currentMetrics") or [], conditions=[
                          {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                           "message": "recommended size matches current size", "lastTransitionTime": since},
                          {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                           "message": "the HPA was able to successfully calculate a replica count from cpu resource "
                                      "utilization (percentage of request)", "lastTransitionTime": since},
                          {"type": "ScalingLimited", "status": "True" if limited else "False",
                           "reason": "TooFewReplicas" if limited else "DesiredWithinRange",
                           "message": "the desired replica count is less than the minimum replica count" if limited
                           else "the desired count is within the acceptable range", "lastTransitionTime": since}])
        self._set_status("horizontalpodautoscalers.autoscaling", hpa, status)

