"""Per-pool quotas, end to end (issue 36): two node pools of 8 GPUs, one department, two projects, driven through
the product's API against a cluster that runs KAI Scheduler with a shard per pool. At each step the transcript
says what each project holds in each pool (read from the cluster: its running pods' nodes) against its deserved
and limit there, and `check_limits` holds every pool to the project's and the department's limit.

Quotas (GPUs, deserved/limit): department research: pool-a 6/8, pool-b 8/8; project nlp: pool-a 2/4, pool-b 6/6;
project cv: pool-a 4/6, pool-b 2/2.
1. nlp submits 6 one-GPU trainings in pool-a: 4 run (its limit there), 2 wait.
2. nlp submits 3 naming no pool: its pools in order; pool-a is past its deserved there, so they go to pool-b.
3. cv submits 6 one-GPU trainings in pool-a: it gets the pool's 4 free GPUs (its deserved); the department's limit
   there (8) now holds nlp and cv together, so its next GPU is reclaimed from nlp within the department: each ends
   at its fair share of the pool (deserved plus an equal part of the 2 over-quota GPUs: nlp 3, cv 5).
4. A 7-GPU training for nlp in pool-b (more than its limit of 6 there, less than a node) is refused with a 400 naming the limit."""

from __future__ import annotations

import time
from collections import Counter

from kubernetes import client

from tests.scheduling.scenario import IMAGE, LONG_RUN, Stage, Transcript
from tests.workloads.cluster_support import wait_for

POOLS = {"pool-a": (2, 4), "pool-b": (6, 6)}  # nlp's (deserved, limit)
QUOTAS = {"research": {"pool-a": (6, 8), "pool-b": (8, 8)},
          "nlp": {"pool-a": (2, 4), "pool-b": (6, 6)},
          "cv": {"pool-a": (4, 6), "pool-b": (2, 2)}}
POOL_LABEL = "run.ai/node-pool"


def _resources(quotas: dict, pool_ids: dict) -> list[dict]:
    return [{"nodePool": {"id": pool_ids[name], "name": name},
             "gpu": {"deserved": deserved, "limit": limit, "overQuotaWeight": 1}}
            for name, (deserved, limit) in quotas.items()]


class PoolScenario:
    def __init__(self, stage: Stage, *, suffix: str):
        self.stage, self.api, self.suffix = stage, stage.api, suffix
        self.transcript = Transcript()
        self.outcome: dict = {}
        self.projects: dict = {}
        self.ids: dict[str, str] = {}  # workload name -> id, of those accepted

    def _post(self, path: str, body: dict) -> dict:
        response = self.api.post(path, body, format="json")
        assert response.status_code in (200, 201, 202), (path, response.status_code, response.json())
        return response.json()

    def org(self) -> None:
        cluster = str(self.stage.cluster.pk)
        pool_ids = {}
        for name in ("pool-a", "pool-b"):
            pool_ids[name] = str(self._post("/api/v1/node-pools", {
                "name": name, "clusterId": cluster, "labelKey": POOL_LABEL, "labelValue": name})["id"])
        self.department = self._post("/api/v1/org-unit/departments", {
            "name": f"research-{self.suffix}", "clusterId": cluster,
            "resources": _resources(QUOTAS["research"], pool_ids)})
        for name in ("nlp", "cv"):
            self.projects[name] = self._post("/api/v1/org-unit/projects", {
                "name": f"{name}-{self.suffix}", "clusterId": cluster, "parentId": self.department["id"],
                "resources": _resources(QUOTAS[name], pool_ids)})
        self.stage.sync()  # the pools' nodes and GPUs read (the beat's round, or the watcher, does it unasked)

    def _body(self, project: str, name: str, gpus: int, pools: list[str] | None) -> dict:
        info = self.projects[project]
        spec = {"image": IMAGE, "compute": {"gpuDevicesRequest": gpus}, "command": "sleep", "args": "3600",
                "annotations": LONG_RUN}
        if pools:
            spec["nodePools"] = pools
        return {"name": name, "projectId": info["id"], "clusterId": info["clusterId"], "spec": spec}

    def forecast(self, project: str, name: str, gpus: int, pools: list[str] | None) -> dict:
        """What `dryRun=true` says the scheduler would do with it now; in the transcript."""
        response = self.api.post("/api/v1/workloads/trainings?dryRun=true", self._body(project, name, gpus, pools),
                                 format="json")
        assert response.status_code == 200, response.json()
        said = response.json()["quota"]["forecast"]
        self.transcript.lines.append(f"{self.transcript.elapsed():7.1f}s  {project}/{name} forecast: "
                                     f"{said['action']} — {said['message']}")
        return said

    def submit(self, project: str, name: str, gpus: int, pools: list[str] | None) -> int:
        response = self.api.post("/api/v1/workloads/trainings", self._body(project, name, gpus, pools),
                                 format="json")
        if response.status_code < 300:
            self.ids[name] = response.json()["workloadId"]
        if response.status_code >= 400:
            self.transcript.lines.append(f"{self.transcript.elapsed():7.1f}s  {project}/{name} refused "
                                         f"{response.status_code}: {response.json()}")
        return response.status_code

    def holdings(self) -> dict:
        """{project: {pool: GPUs of its running pods there}}, from the cluster: each running pod's node's pool."""
        core = client.CoreV1Api(self.stage.k8s)
        pool_of = {n.metadata.name: (n.metadata.labels or {}).get(POOL_LABEL, "default")
                   for n in core.list_node().items}
        held: dict = {}
        for project, info in self.projects.items():
            counts = Counter()
            for pod in core.list_namespaced_pod(info["namespace"]).items:
                if pod.status.phase == "Running" and not pod.metadata.deletion_timestamp and pod.spec.node_name:
                    gpus = sum(int((c.resources.limits or {}).get("nvidia.com/gpu", 0)) for c in pod.spec.containers)
                    counts[pool_of[pod.spec.node_name]] += gpus
            held[project] = dict(sorted(counts.items()))
        return held

    def note(self, step: str) -> dict:
        self.stage.sync()
        held = self.holdings()
        parts = []
        for project in ("nlp", "cv"):
            parts += [f"{project} {pool} {held[project].get(pool, 0)} (deserved {d}, limit {lim})"
                      for pool, (d, lim) in QUOTAS[project].items()]
        self.transcript.lines.append(f"{self.transcript.elapsed():7.1f}s  {step}: " + "; ".join(parts))
        check_limits(held)
        self.outcome[step] = held
        return held

    def settle(self, predicate, what: str, timeout: float | None = None) -> dict:
        seen = {}

        def step():
            self.stage.sync()
            seen["held"] = held = self.holdings()
            check_limits(held)  # never above a limit, at any moment we look
            return held if predicate(held) else None
        try:
            return wait_for(step, timeout=timeout or self.stage.timeout, interval=0.3, what=what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; held: {seen.get('held')}\n{self.transcript.text()}\n{self.state()}") from None

    def state(self) -> str:
        """What a failed wait saw: the nodes' pool labels, the queues, and each project's pod groups and pods."""
        core, custom = client.CoreV1Api(self.stage.k8s), client.CustomObjectsApi(self.stage.k8s)
        lines = [f"node {n.metadata.name}: {({k: v for k, v in (n.metadata.labels or {}).items() if 'pool' in k})}"
                 for n in core.list_node().items]
        for q in custom.list_cluster_custom_object("scheduling.run.ai", "v2", "queues")["items"]:
            lines.append(f"queue {q['metadata']['name']} {q['metadata'].get('labels')} "
                         f"{q['spec'].get('parentQueue')} {q['spec'].get('resources', {}).get('gpu')} {q.get('status')}")
        for info in self.projects.values():
            namespace = info["namespace"]
            for g in custom.list_namespaced_custom_object("scheduling.run.ai", "v2alpha2", namespace,
                                                          "podgroups")["items"][:3]:
                lines.append(f"podgroup {g['metadata']['name']} {g['metadata'].get('labels')} {g['spec'].get('queue')} "
                             f"{(g.get('status') or {}).get('schedulingConditions')}")
            for pod in core.list_namespaced_pod(namespace).items[:3]:
                lines.append(f"pod {pod.metadata.name} {pod.status.phase} {pod.metadata.labels} "
                             f"node={pod.spec.node_name} scheduler={pod.spec.scheduler_name}")
                events = core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={pod.metadata.name}")
                lines += [f"    event {e.reason}: {e.message}" for e in events.items[-3:]]
        return "\n".join(lines)

    def run(self) -> dict:
        t = self.transcript
        self.org()
        t.mark("1. nlp submits 6 one-GPU trainings in pool-a (deserved 2, limit 4 there), one at a time, each "
               "after the forecast of dryRun=true")
        self.outcome["1 forecast"] = self.one_by_one("nlp", "nlp-a", 6, ["pool-a"])
        self.note("1")
        t.mark("2. nlp submits 3 one-GPU trainings naming no pool (its pools: pool-a, pool-b)")
        for i in range(3):
            assert self.submit("nlp", f"nlp-any-{i}", 1, None) in (200, 202), t.text()
        self.settle(lambda h: h["nlp"].get("pool-b") == 3, "nlp's 3 run in pool-b")
        self.note("2")
        t.mark("3. cv submits 6 one-GPU trainings in pool-a (deserved 4, limit 6; department limit 8 there), one at a "
               "time, each after its forecast")
        self.outcome["3 forecast"] = self.one_by_one("cv", "cv-a", 6, ["pool-a"])
        self.settle(lambda h: h["cv"].get("pool-a") == 5 and h["nlp"].get("pool-a") == 3,
                    "cv holds 5 in pool-a and nlp 3 (their fair shares under the department's limit)")
        self.note("3")
        t.mark("4. nlp asks for 7 GPUs in pool-b (limit 6 there; a node has 8)")
        self.outcome["4 status"] = self.submit("nlp", "nlp-big", 7, ["pool-b"])
        return self.outcome

    def one_by_one(self, project: str, prefix: str, count: int, pools: list[str]) -> list[tuple[str, str]]:
        """Each submission after its forecast; then what happened to it once the scheduler settled: [(forecast
        action, "runs" | "waits")]. A forecast of start or reclaim must run; a wait must wait."""
        seen = []
        for i in range(count):
            name = f"{prefix}-{i}"
            said = self.forecast(project, name, 1, pools)
            before = self.holdings()[project].get(pools[0], 0)
            assert self.submit(project, name, 1, pools) in (200, 202), self.transcript.text()
            if said["action"] == "wait":
                time.sleep(1.5)  # a few scheduling rounds: it must still wait
                self.stage.sync()
                runs = self._runs(project, name)
            else:
                runs = self._wait_runs(project, name)
            seen.append((said["action"], "runs" if runs else "waits"))
            assert runs == (said["action"] != "wait"), (name, said, before, self.holdings())
        return seen

    def _runs(self, project: str, name: str) -> bool:
        core = client.CoreV1Api(self.stage.k8s)
        pods = core.list_namespaced_pod(self.projects[project]["namespace"],
                                        label_selector=f"paas-studio/workload-id={self.ids[name]}").items
        return any(p.status.phase == "Running" and not p.metadata.deletion_timestamp for p in pods)

    def _wait_runs(self, project: str, name: str) -> bool:
        try:
            wait_for(lambda: self._runs(project, name), timeout=self.stage.timeout, interval=0.3,
                     what=f"{name} running")
        except AssertionError:
            return False
        self.stage.sync()  # its row says so too before the next forecast reads it
        return True

    def save(self, folder) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"pool-quotas-transcript-{self.stage.name}.md").write_text(
            f"# Per-pool quotas on {self.stage.name}\n\nWritten by tests/scheduling (STUDIO_REFRESH_DOCS=1). "
            "Scenario: tests/scheduling/pool_scenario.py. Each numbered line: the GPUs each project's running pods "
            "hold in each pool, read from the cluster.\n\n```text\n" + self.transcript.text() + "```\n")


def check_limits(held: dict) -> None:
    for project in ("nlp", "cv"):
        for pool, (_, limit) in QUOTAS[project].items():
            assert held[project].get(pool, 0) <= limit, (project, pool, held)
    for pool, (_, limit) in QUOTAS["research"].items():
        assert sum(held[p].get(pool, 0) for p in ("nlp", "cv")) <= limit, ("research", pool, held)
