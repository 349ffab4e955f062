"""The scheduling scenario of docs/scheduling.md, driven through the product's public API against a cluster that
runs KAI Scheduler (kubesim's, or the real one), with a transcript of every workload's phase and reason over time.

One node pool of N GPUs (16 on kubesim); projects A and B of one department, each deserved N/2, limit N:
1. A fills the pool with N one-GPU trainings (over its quota): all run.
2. A adds a one-GPU workspace within its deserved: it runs (one of A's own trainings is preempted for it).
3. B submits N/2 one-GPU trainings (its deserved): within a bounded time A's over-quota trainings are reclaimed and
   B's run; A's workspace is never a victim.
4. B's work ends: A's reclaimed trainings run again with no user action.
5. A submits beyond its limit: accepted, waits with an over-quota reason.
6. Two 0.5-GPU workspaces (in B) share one GPU.
7. A quota lowered in the API reaches the queue.
`run()` answers what the product reported at each checkpoint (`outcome`), which the differential test compares
across clusters, and the transcript."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from kubernetes import client

from tests.workloads.cluster_support import wait_for

QUEUE_API = ("scheduling.run.ai", "v2", "queues")
POOL_GPUS = 16
IMAGE = "busybox:1.36"
# Trainings run until deleted: kubesim's run time, and the real stack's KWOK pod-complete delay.
LONG_RUN = [{"name": "kubesim.paas-studio/run-seconds", "value": "3600"},
            {"name": "kubesim.paas-studio/run-duration", "value": "3600s"}]


@dataclass
class Stage:
    """Where the scenario runs: the cluster row, the admin's API client, the cluster's own client (as an operator
    would look), a sync round, and a name for the transcript."""

    name: str
    cluster: object
    api: object
    k8s: object
    sync: object
    timeout: float = 90.0

    def release(self, workload_ids) -> None:
        """Delete the workloads through the API and wait until their pods are gone from the cluster: the
        scenarios' trainings run until deleted, and on a cluster shared by later tests they would hold its GPUs."""
        ids = {str(i) for i in workload_ids}
        for workload_id in ids:
            found = self.api.get(f"/api/v1/workloads/{workload_id}")
            if found.status_code == 200:  # Run:ai deletes by kind: /workloads/trainings/{id}, ...
                kind = found.json()["type"].lower()
                path = "distributed" if kind == "distributed" else f"{kind}s"
                self.api.delete(f"/api/v1/workloads/{path}/{workload_id}")
        core = client.CoreV1Api(self.k8s)

        def left() -> list[str]:
            pods = core.list_pod_for_all_namespaces(label_selector="paas-studio/workload-id").items
            return [p.metadata.name for p in pods if p.metadata.labels.get("paas-studio/workload-id") in ids]

        wait_for(lambda: not left(), step=self.sync, timeout=self.timeout, interval=0.5,
                 what="the scenario's pods to be deleted")


@dataclass
class Transcript:
    started: float = field(default_factory=time.monotonic)
    lines: list = field(default_factory=list)
    last: dict = field(default_factory=dict)
    marks: list = field(default_factory=list)

    def mark(self, text: str) -> None:
        self.marks.append((self.elapsed(), text))
        self.lines.append(f"{self.elapsed():7.1f}s  ── {text}")

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def record(self, workloads: list[dict]) -> None:
        for w in workloads:
            reason = w.get("pendingReason") or {}
            said = reason.get("type") or ""
            if said in ("Reclaimed", "Preempted"):
                by = reason.get("reclaimedBy") or reason.get("preemptedBy") or {}
                said += f" by {by.get('project', '?')}/{by.get('workload', by.get('podGroup', '?'))}"
                said += f", waiting: {(reason.get('waitingFor') or {}).get('type', '')}"
            elif said == "OverQuota":
                said += f" ({reason.get('quota')} of {reason.get('scope')} {reason.get('scopeName')})"
            state = (w["phase"], said, w.get("queuePosition"))
            key = f"{w['projectName']}/{w['name']}"
            if self.last.get(key) != state:
                self.last[key] = state
                place = f" #{state[2]}" if state[2] else ""
                self.lines.append(f"{self.elapsed():7.1f}s  {key:<22} {state[0]:<12} {said}{place}")

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


class Scenario:
    def __init__(self, stage: Stage, *, suffix: str, gpus: int = POOL_GPUS):
        self.stage, self.api, self.suffix = stage, stage.api, suffix
        self.gpus, self.half = gpus, gpus // 2
        self.transcript = Transcript()
        self.outcome: dict = {}
        self.ids: dict[str, str] = {}

    # --- the product's API ------------------------------------------------------------------------------

    def _post(self, path: str, body: dict, status=(200, 201, 202)) -> dict:
        response = self.api.post(path, body, format="json")
        assert response.status_code in status, (path, response.status_code, response.json())
        return response.json()

    def org(self) -> None:
        cluster = str(self.stage.cluster.pk)
        pool = {"nodePool": {"name": "default"}}
        dept = self._post("/api/v1/org-unit/departments", {"name": f"research-{self.suffix}", "clusterId": cluster})
        self.projects = {}
        for letter in ("a", "b"):
            body = {"name": f"{letter}-{self.suffix}", "clusterId": cluster, "parentId": dept["id"],
                    "resources": [{**pool, "gpu": {"deserved": self.half, "limit": self.gpus, "overQuotaWeight": 1}}]}
            self.projects[letter] = self._post("/api/v1/org-unit/projects", body)
        self.dept = dept

    def queue(self, name: str) -> dict | None:
        try:
            return client.CustomObjectsApi(self.stage.k8s).get_cluster_custom_object(*QUEUE_API, name)
        except client.ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def submit(self, letter: str, kind: str, name: str, compute: dict, status=(200, 202)) -> dict:
        project = self.projects[letter]
        spec = {"image": IMAGE, "compute": compute}
        if kind == "trainings":
            spec.update(command="sleep", args="3600", annotations=LONG_RUN)
        body = {"name": name, "projectId": project["id"], "clusterId": project["clusterId"], "spec": spec}
        response = self.api.post(f"/api/v1/workloads/{kind}", body, format="json")
        if response.status_code in status:
            self.ids[name] = response.json()["workloadId"]
        else:  # in the transcript: a refusal is part of what the product reported
            self.transcript.lines.append(f"{self.transcript.elapsed():7.1f}s  {project['name']}/{name:<15} refused "
                                         f"{response.status_code}: {response.json()}")
        return {"status": response.status_code, **response.json()}

    def workloads(self) -> list[dict]:
        found = []
        for letter in ("a", "b"):
            answer = self.api.get(f"/api/v1/workloads?filterBy=projectId=={self.projects[letter]['id']}&limit=500")
            assert answer.status_code == 200, answer.json()
            found += answer.json()["workloads"]
        return found

    def watch(self, predicate, what: str, timeout: float | None = None):
        """Sync rounds and reads of the workload list until `predicate(workloads)`; every change transcribed."""
        def step():
            self.stage.sync()
            listed = self.workloads()
            self.transcript.record(listed)
            return predicate(listed)
        try:
            return wait_for(step, timeout=timeout or self.stage.timeout, interval=0.3, what=what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{self._cluster_state()}") from None

    def _cluster_state(self) -> str:
        """The pods of both projects that are not plainly running, with their events: what a failed wait saw."""
        core, lines = client.CoreV1Api(self.stage.k8s), []
        for letter in ("a", "b"):
            namespace = self.projects[letter]["namespace"]
            for pod in core.list_namespaced_pod(namespace).items:
                if pod.status.phase == "Running" and not pod.metadata.deletion_timestamp:
                    continue
                lines.append(f"pod {namespace}/{pod.metadata.name} {pod.status.phase} node={pod.spec.node_name} "
                             f"deleting={pod.metadata.deletion_timestamp} finalizers={pod.metadata.finalizers} "
                             f"conditions={[(c.type, c.status, c.reason) for c in pod.status.conditions or ()]}")
                events = core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={pod.metadata.name}")
                lines += [f"    event {e.reason}: {e.message}" for e in events.items[-5:]]
        return "\n".join(lines[:200])

    # --- the scenario -----------------------------------------------------------------------------------

    def run(self) -> dict:
        t = self.transcript
        self.org()
        a, b = (self.projects[x]["name"] for x in ("a", "b"))
        wait_for(lambda: self.queue(a) and self.queue(b) and self.queue(f"research-{self.suffix}.department"),
                 timeout=self.stage.timeout, what="the queues of the department and its projects")
        self.outcome["queues"] = {name: (self.queue(name) or {}).get("spec", {}).get("resources", {}).get("gpu")
                                  for name in (a, b)}

        n, half = self.gpus, self.half
        t.mark(f"1. A fills the pool: {n} one-GPU trainings (A deserves {half}, limit {n})")
        for i in range(n):
            self.submit("a", "trainings", f"a-train-{i:02d}", {"gpuDevicesRequest": 1})
        self.watch(lambda ws: _count(ws, a, "a-train-", "Running") == n, f"A's {n} trainings Running")
        self.outcome["1 A over quota"] = _summary(self.workloads())
        self.outcome["1 A status"] = self._settled("a", allocated=float(n))

        t.mark("2. A adds a one-GPU workspace within its deserved quota")
        assert self.submit("a", "workspaces", "a-notebook", {"gpuDevicesRequest": 1})["status"] == 200, t.text()
        self.watch(lambda ws: _count(ws, a, "a-notebook", "Running") == 1, "A's workspace Running")
        self.watch(lambda ws: _count(ws, a, "a-train-", "Running") == n - 1
                   and _reasons(ws, a).get("Preempted"), "one of A's trainings preempted for it")
        self.outcome["2 workspace"] = _summary(self.workloads())

        t.mark(f"3. B submits {half} one-GPU trainings (its deserved quota)")
        started = time.monotonic()
        for i in range(half):
            self.submit("b", "trainings", f"b-train-{i}", {"gpuDevicesRequest": 1})
        self.watch(lambda ws: _count(ws, b, "b-train-", "Running") == half, f"B's {half} trainings Running")
        self.outcome["3 seconds for B to run"] = round(time.monotonic() - started, 1)
        # Every reclaimed training, not the first: the watcher hears KAI's Evict events one pod at a time.
        listed = self.watch(lambda ws: _reasons(ws, a).get("Reclaimed", 0) >= half and ws,
                            "A's reclaimed trainings say so")
        self.outcome["3 B reclaims"] = _summary(listed)
        reclaimed = [w for w in listed if (w.get("pendingReason") or {}).get("type") == "Reclaimed"]
        self.outcome["3 reclaimed by"] = sorted({w["pendingReason"]["reclaimedBy"].get("project") for w in reclaimed})
        self.outcome["3 workspace never a victim"] = _phase(listed, "a-notebook") == "Running" and not any(
            e["reason"] in ("Reclaimed", "Preempted") for e in self._events("a-notebook"))
        self.outcome["3 example"] = reclaimed[0]["pendingReason"] if reclaimed else None

        t.mark("4. B's work ends (its trainings deleted)")
        for i in range(half):
            assert self.api.delete(f"/api/v1/workloads/trainings/{self.ids[f'b-train-{i}']}").status_code == 204
        self.watch(lambda ws: _count(ws, a, "a-train-", "Running") == n - 1, "A's trainings running again")
        self.outcome["4 A runs again"] = _summary(self.workloads())
        self.outcome["4 events of a reclaimed training"] = [e["reason"] for e in self._events(
            reclaimed[0]["name"]) if e["reason"] in ("Reclaimed", "Preempted", "Running", "Pending")][::-1] \
            if reclaimed else []

        t.mark("5. A submits beyond its limit")
        accepted = self.submit("a", "trainings", "a-beyond", {"gpuDevicesRequest": 1})
        self.outcome["5 accepted"] = accepted["status"]
        beyond = self.watch(lambda ws: _waiting(ws, "a-beyond", "OverQuota"), "A's extra training over its limit")
        reason = beyond["pendingReason"]
        self.outcome["5 reason"] = {k: reason.get(k) for k in ("type", "quota", "scope", "scopeName",
                                                                "schedulerReason")}
        never = self.submit("a", "trainings", "a-never", {"gpuDevicesRequest": n + 1}, status=())
        self.outcome["5 never runs"] = never["status"]

        t.mark("6. Two 0.5-GPU workspaces in B")
        for i in (1, 2):
            self.submit("b", "workspaces", f"b-half-{i}", {"gpuRequestType": "portion", "gpuPortionRequest": 0.5})
        self.watch(lambda ws: _count(ws, b, "b-half-", "Running") == 2, "B's two halves Running")
        pods = client.CoreV1Api(self.stage.k8s).list_namespaced_pod(self.projects["b"]["namespace"]).items
        halves = [p for p in pods if p.metadata.name.startswith("b-half-") and p.status.phase == "Running"]
        self.outcome["6 one GPU"] = {"pods": len(halves), "nodes": len({p.spec.node_name for p in halves}),
                                     "gpuGroups": len({(p.metadata.labels or {}).get("runai-gpu-group")
                                                       for p in halves})}
        self.outcome["6 B status"] = self._settled("b", allocated=1.0)

        lowered = half // 2
        t.mark(f"7. A's quota lowered in the API: deserved {lowered}")
        project = self.projects["a"]
        patched = self.api.patch(f"/api/v1/org-unit/projects/{project['id']}", {"resources": [
            {"nodePool": {"name": "default"}, "gpu": {"deserved": lowered, "limit": n, "overQuotaWeight": 1}}]},
            format="json")
        assert patched.status_code == 200, patched.json()
        changed = time.monotonic()
        wait_for(lambda: ((self.queue(a) or {}).get("spec", {}).get("resources", {}).get("gpu") or {})
                 .get("quota") == lowered, timeout=self.stage.timeout, what=f"A's queue quota {lowered}")
        self.outcome["7 queue after the API change"] = self.queue(a)["spec"]["resources"]["gpu"]
        self.outcome["7 seconds to reach the queue"] = round(time.monotonic() - changed, 1)
        self.outcome["7 A status"] = self._settled("a", deserved=float(lowered))
        return self.outcome

    def _settled(self, letter: str, **expected) -> dict:
        """The project's scheduler status once it shows `expected` (the queue controller counts a moment after
        the pods run; a sync round reads it)."""
        def seen():
            self.stage.sync()
            status = self._status(letter)
            return status if all(status.get(k) == v for k, v in expected.items()) else None
        return wait_for(seen, timeout=self.stage.timeout, interval=0.5, what=f"{letter}'s queue status {expected}")

    def _status(self, letter: str) -> dict:
        answer = self.api.get(f"/api/v1/org-unit/projects/{self.projects[letter]['id']}").json()
        found = ((answer.get("status") or {}).get("additionalStatusData") or {}).get("scheduler") or {}
        return {k: found.get(k) for k in ("deserved", "limit", "allocated", "overQuota", "waiting")}

    def _events(self, name: str) -> list[dict]:
        answer = self.api.get(f"/api/v1/workloads/{self.ids[name]}/events")
        return answer.json().get("events", []) if answer.status_code == 200 else []

    def save(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"scheduling-transcript-{self.stage.name}.md"
        body = (f"# The scheduling scenario on {self.stage.name}\n\nWritten by tests/scheduling (STUDIO_REFRESH_DOCS=1): each line "
                "is a workload whose phase, pending reason or queue place changed, as the product's API reported "
                "it (seconds since the scenario began).\n\n```text\n" + self.transcript.text() + "```\n\n"
                "## What the product reported at each checkpoint\n\n```json\n"
                + json.dumps(self.outcome, indent=2, sort_keys=True, default=str) + "\n```\n")
        path.write_text(body)
        return path


def _count(workloads, project: str, prefix: str, phase: str) -> int:
    return sum(1 for w in workloads if w["projectName"] == project and w["name"].startswith(prefix)
               and w["phase"] == phase)


def _reasons(workloads, project: str) -> dict:
    found: dict = {}
    for w in workloads:
        if w["projectName"] == project and w.get("pendingReason"):
            kind = w["pendingReason"]["type"]
            found[kind] = found.get(kind, 0) + 1
    return found


def _phase(workloads, name: str) -> str | None:
    return next((w["phase"] for w in workloads if w["name"] == name), None)


def _waiting(workloads, name: str, reason: str):
    found = next((w for w in workloads if w["name"] == name), None)
    return found if found and found["phase"] == "Pending" and (found.get("pendingReason") or {}).get("type") == reason \
        else None


def _summary(workloads) -> dict:
    """{project: {"Running": n, "Pending:<reason>": n, …}} — what the comparison across clusters looks at."""
    out: dict = {}
    for w in workloads:
        reason = (w.get("pendingReason") or {}).get("type")
        key = w["phase"] + (f":{reason}" if w["phase"] == "Pending" and reason else "")
        group = out.setdefault(w["projectName"].split("-", 1)[0], {})
        group[key] = group.get(key, 0) + 1
    return out
