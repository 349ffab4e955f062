"""One number everywhere (issue 36, "Must show"): on kubesim's KAI Scheduler with two node pools, a department and two
projects, after each step (submit, run, wait, finish) every place that shows a quota number is read through its
public surface and must agree, and what they call allocated must be what the cluster's running pods hold:

- the projects API (`status.quotaStatus`, `status.nodePoolQuotaStatuses`) and the departments API (the same);
- the org-unit telemetry (projects' and departments' GPU_ALLOCATION, by node pool);
- the node pools API (`quotaStatus`), the nodes telemetry (ALLOCATED_GPUS by pool and by node);
- the workload telemetry (GPU_ALLOCATION by project and current node pool);
- the /quota pages (the department roll-up and each project's), the projects list (its CSV), Try it's quota note
  (the launch preview, `dryRun=true`, per pool, and the Try it page of a service profile) and the GPU overview
  (its pools' CSV).

Writes its table to docs/quota-numbers-comparison.txt (STUDIO_REFRESH_DOCS=1; else under the run's own folder)."""

from __future__ import annotations

import copy
import csv
import io
import re
import uuid
from collections import Counter, defaultdict

import pytest
from django.test import Client
from kubernetes import client

from profiles import services as profile_services
from profiles.system import TEMPLATES
from studio import services
from studio.models import Project
from tests import docs_output
from tests.conftest import SIM_TOKEN, bearer_client, official_client
from tests.factories import UserFactory
from tests.scheduling.scenario import IMAGE, LONG_RUN
from tests.workloads.cluster_support import wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

POOL_LABEL = "run.ai/node-pool"
POOLS = ("pool-a", "pool-b")
QUOTAS = {"research": {"pool-a": (4, 4), "pool-b": (4, 4)},
          "nlp": {"pool-a": (2, 4), "pool-b": (2, 4)},
          "cv": {"pool-a": (2, 4), "pool-b": (2, 2)}}
TOTAL = "all pools"


def _resources(quotas: dict, pool_ids: dict) -> list[dict]:
    return [{"nodePool": {"id": pool_ids[name], "name": name},
             "gpu": {"deserved": deserved, "limit": limit, "overQuotaWeight": 1}}
            for name, (deserved, limit) in quotas.items()]


def _n(value) -> float:
    return round(float(value or 0), 3)


class Comparison:
    """The org on the simulated cluster, and what each place shows: {(unit, pool): (allocated, requested)} with
    requested None where a place shows allocated only; pool TOTAL for a unit's sum over the pools."""

    def __init__(self, sim, root):
        self.sim, self.root = sim, root
        self.suffix = uuid.uuid4().hex[:5]
        self.cluster = services.cluster_create(actor=root, name=f"numbers-{self.suffix}", api_server_url=sim.url,
                                               token=SIM_TOKEN, verify_tls=False)
        self.api = bearer_client(root)
        self.page = Client()
        self.page.force_login(root)
        self.k8s = official_client(sim)
        self.projects: dict[str, dict] = {}
        self.ids: dict[str, str] = {}
        self.tables: list[tuple[str, dict[str, dict]]] = []

    def sync(self) -> None:
        tasks.cluster_sync.apply(args=[str(self.cluster.pk)])

    def _post(self, path: str, body: dict) -> dict:
        response = self.api.post(path, body, format="json")
        assert response.status_code in (200, 201, 202), (path, response.status_code, response.json())
        return response.json()

    def org(self) -> None:
        cluster = str(self.cluster.pk)
        self.pool_ids = {name: str(self._post("/api/v1/node-pools", {
            "name": name, "clusterId": cluster, "labelKey": POOL_LABEL, "labelValue": name})["id"])
            for name in POOLS}
        self.department = self._post("/api/v1/org-unit/departments", {
            "name": f"research-{self.suffix}", "clusterId": cluster,
            "resources": _resources(QUOTAS["research"], self.pool_ids)})
        for name in ("nlp", "cv"):
            self.projects[name] = self._post("/api/v1/org-unit/projects", {
                "name": f"{name}-{self.suffix}", "clusterId": cluster, "parentId": self.department["id"],
                "resources": _resources(QUOTAS[name], self.pool_ids)})
        self.sync()
        jupyter = next(t for t in TEMPLATES if t["name"] == "jupyter-notebook")
        template = profile_services.template_create(actor=self.root, name=f"nb-{self.suffix}",
                                                    display_name="Notebook", description="A notebook.")
        version = profile_services.version_create(actor=self.root, template=template, state="active",
                                                  **copy.deepcopy(jupyter["versions"][0]))
        self.profile = profile_services.profile_create(
            actor=self.root, name=f"nb-{self.suffix}", template_version=version, service_type="notebook",
            owner_project=Project.objects.get(pk=self.projects["nlp"]["id"]))

    def _body(self, project: str, name: str, gpus: int, pool: str, seconds: int = 3600) -> dict:
        info = self.projects[project]
        annotations = LONG_RUN if seconds == 3600 else [{"name": "kubesim.paas-studio/run-seconds",
                                                         "value": str(seconds)}]
        return {"name": name, "projectId": info["id"], "clusterId": info["clusterId"],
                "spec": {"image": IMAGE, "compute": {"gpuDevicesRequest": gpus}, "command": "sleep",
                         "args": str(seconds), "annotations": annotations, "nodePools": [pool]}}

    def submit(self, project: str, name: str, gpus: int, pool: str, seconds: int = 3600) -> None:
        self.ids[name] = self._post("/api/v1/workloads/trainings", self._body(project, name, gpus, pool,
                                                                               seconds))["workloadId"]

    def phase(self, name: str) -> str:
        return self.api.get(f"/api/v1/workloads/{self.ids[name]}").json()["phase"]

    def settle(self, wanted: dict[str, str], timeout: float = 60) -> None:
        """Sync rounds until each named workload is in its phase."""
        wait_for(lambda: all(self.phase(n) == p for n, p in wanted.items()), step=self.sync, timeout=timeout,
                 interval=0.3, what=f"phases {wanted}; seen {{n: self.phase(n) for n in wanted}}")
        self.sync()

    # --- what each place shows -----------------------------------------------------------------------------

    def name_of(self, project_id) -> str:
        return next(k for k, v in self.projects.items() if v["id"] == str(project_id))

    def cluster_truth(self) -> dict:
        """What the running pods hold, from the cluster: each running pod's node's pool."""
        core = client.CoreV1Api(self.k8s)
        pool_of = {n.metadata.name: (n.metadata.labels or {}).get(POOL_LABEL, "default")
                   for n in core.list_node().items}
        held = Counter()
        for project, info in self.projects.items():
            for pod in core.list_namespaced_pod(info["namespace"]).items:
                if pod.status.phase == "Running" and not pod.metadata.deletion_timestamp and pod.spec.node_name:
                    gpus = sum(int((c.resources.limits or {}).get("nvidia.com/gpu", 0)) for c in pod.spec.containers)
                    held[(project, pool_of[pod.spec.node_name])] += gpus
        return _with_totals({key: (_n(v), None) for key, v in held.items()})

    def org_api(self) -> dict:
        shown = {}
        for project, info in self.projects.items():
            status = self.api.get(f"/api/v1/org-unit/projects/{info['id']}").json()["status"]
            shown[(project, TOTAL)] = _pair(status["quotaStatus"])
            for entry in status["nodePoolQuotaStatuses"]:
                assert entry["nodePoolId"] == self.pool_ids.get(entry["nodePoolName"], entry["nodePoolId"])
                shown[(project, entry["nodePoolName"])] = _pair(entry)
        status = self.api.get(f"/api/v1/org-unit/departments/{self.department['id']}").json()["status"]
        shown[("research", TOTAL)] = _pair(status["quotaStatus"])
        for entry in status["nodePoolQuotaStatuses"]:
            shown[("research", entry["nodePoolName"])] = _pair(entry)
        listed = self.api.get("/api/v1/org-unit/projects", {"filterBy": f"name=@{self.suffix}"}).json()["projects"]
        for item in listed:  # the list answers the same as each project's own
            name = item["name"].split("-")[0]
            assert _pair(item["status"]["quotaStatus"]) == shown[(name, TOTAL)], item["name"]
        return shown

    def org_telemetry(self) -> dict:
        """The projects' telemetry by pool, over the department's projects (its numbers per pool), and the
        departments' telemetry of it."""
        pools = {v: k for k, v in self.pool_ids.items()}
        body = self.api.get("/api/v1/org-unit/projects/telemetry", {
            "telemetryType": "GPU_ALLOCATION", "groupBy": "NodepoolId", "departmentId": self.department["id"],
            "clusterId": str(self.cluster.pk)}).json()
        shown = {("research", pools.get(v["groups"][0]["value"], v["groups"][0]["value"])): (_n(v["value"]), None)
                 for v in body["values"]}
        body = self.api.get("/api/v1/org-unit/departments/telemetry", {
            "telemetryType": "GPU_ALLOCATION", "departmentId": self.department["id"]}).json()
        shown[("research", TOTAL)] = (_n(body["values"][0]["value"]), None)
        return shown

    def workload_telemetry(self) -> dict:
        body = self.api.get("/api/v1/workloads/telemetry", {
            "telemetryType": "GPU_ALLOCATION", "groupBy": "ProjectId,CurrentNodepools",
            "clusterId": str(self.cluster.pk)}).json()
        shown = defaultdict(float)
        for value in body["values"]:
            project, pool = (g["value"] for g in value["groups"])
            shown[(self.name_of(project), pool)] += float(value["value"])
        return _with_totals({k: (_n(v), None) for k, v in shown.items()})

    def node_pools_api(self) -> dict:
        pools = self.api.get("/api/v1/node-pools", {"clusterId": str(self.cluster.pk)}).json()["nodepools"]
        shown = {("cluster", p["name"]): _pair(p["quotaStatus"]) for p in pools if p["name"] in POOLS}
        for name, pool_id in self.pool_ids.items():
            assert _pair(self.api.get(f"/api/v1/node-pools/{pool_id}").json()["quotaStatus"]) == \
                shown[("cluster", name)]
        return shown

    def nodes_telemetry(self) -> dict:
        shown = {}
        by_pool = self.api.get("/api/v1/nodes/telemetry", {
            "telemetryType": "ALLOCATED_GPUS", "groupBy": "Nodepool", "clusterId": str(self.cluster.pk)}).json()
        for value in by_pool["values"]:
            if value["groups"][0]["value"] in POOLS:
                shown[("cluster", value["groups"][0]["value"])] = (_n(value["value"]), None)
        by_node = self.api.get("/api/v1/nodes/telemetry", {
            "telemetryType": "ALLOCATED_GPUS", "groupBy": "Nodepool,Node", "clusterId": str(self.cluster.pk)}).json()
        summed = defaultdict(float)  # the pods on each node, summed by its pool: the same numbers
        for value in by_node["values"]:
            summed[value["groups"][0]["value"]] += float(value["value"])
        for pool in POOLS:
            assert _n(summed[pool]) == shown.get(("cluster", pool), (0.0, None))[0], (pool, summed, shown)
        return shown

    def quota_pages(self) -> dict:
        shown = {}
        for project, info in self.projects.items():
            html = self.page.get(f"/quota/projects/{info['id']}").content.decode()
            for pool, values in _quota_rows(html).items():
                shown[(project, pool)] = values
        html = self.page.get("/quota").content.decode()
        section = html[html.index(f'data-department="research-{self.suffix}"'):]
        for pool, values in _quota_rows(section[: section.index("</table>")]).items():
            shown[("research", pool)] = values
        return shown

    def projects_list(self) -> dict:
        rows = _csv(self.page.get(f"/org/projects/export.csv?search={self.suffix}&columns=name,allocated,requested"))
        assert rows[0] == ["Name", "GPUs allocated", "GPUs requested"], rows[0]
        shown = {(name.split("-")[0], TOTAL): (_n(a), _n(r)) for name, a, r in rows[1:]}
        rows = _csv(self.page.get(f"/org/departments/export.csv?search={self.suffix}"
                                  "&columns=name,allocated,requested"))
        [(_name, allocated, requested)] = rows[1:]  # the one department of the search
        shown[("research", TOTAL)] = (_n(allocated), _n(requested))
        return shown

    def try_it_page(self) -> dict:
        """The Try it page's quota note (a notebook of half a GPU, in the pool the launch would place it in;
        the project's totals where it would not start anywhere)."""
        shown = {}
        for project, info in self.projects.items():
            html = self.page.post(f"/studio/service-profiles/{self.profile.pk}/try", {
                "projectId": info["id"], "name": "try-note"}).content.decode()
            note = re.search(r'data-value="allocated">([0-9.]+)<.*?data-value="requested">([0-9.]+)<'
                             r'(?:.*? in node pool ([\w-]+)\.)?', html, re.S)
            assert note, html[html.find("launch-preview"):][:2000]
            shown[(project, note[3] or TOTAL)] = (_n(note[1]), _n(note[2]))
        return shown

    def try_it(self) -> dict:
        """Try it's quota note as the API's launch preview answers it: one more 1-GPU training in each pool."""
        shown = {}
        for project in self.projects:
            for pool in POOLS:
                answer = self.api.post("/api/v1/workloads/trainings?dryRun=true",
                                       self._body(project, f"try-{pool}", 1, pool), format="json")
                assert answer.status_code == 200, answer.json()
                quota = answer.json()["quota"]
                assert quota["nodePool"] == pool, quota
                shown[(project, pool)] = (_n(quota["allocated"]), _n(quota["used"]))
        return shown

    def gpu_overview(self) -> dict:
        assert self.page.get("/gpus").status_code == 200
        rows = _csv(self.page.get(f"/gpus/{self.cluster.pk}/pools.csv?columns=name,allocated,requested"))
        assert rows[0] == ["Pool", "Allocated", "Requested"], rows[0]
        return {("cluster", name): (_n(a), _n(r)) for name, a, r in rows[1:] if name in POOLS}

    def places(self) -> dict[str, dict]:
        return {"cluster (running pods)": self.cluster_truth(), "projects/departments API": self.org_api(),
                "org-unit telemetry": self.org_telemetry(), "workload telemetry": self.workload_telemetry(),
                "node pools API": self.node_pools_api(), "nodes telemetry": self.nodes_telemetry(),
                "/quota pages": self.quota_pages(), "projects/departments lists": self.projects_list(),
                "Try it (dryRun)": self.try_it(), "Try it page": self.try_it_page(),
                "GPU overview": self.gpu_overview()}

    def compare(self, step: str) -> dict:
        """Every place after a step: each shown number equals the projects/departments API's (the selector's),
        and the API's allocated equals what the cluster's running pods hold."""
        self.sync()
        places = self.places()
        reference = places["projects/departments API"]
        for pool in POOLS:  # the pools' numbers are the department's (it holds every project of the cluster)
            reference[("cluster", pool)] = reference.get(("research", pool), (0.0, 0.0))
        truth = places["cluster (running pods)"]
        problems = []
        for key in set(truth) | {k for k in reference if k[0] != "cluster"}:
            want = truth.get(key, (0.0, None))[0]
            if reference.get(key, (0.0, 0.0))[0] != want:
                problems.append(f"API allocated {key}: {reference.get(key)} but the pods hold {want}")
        for place, shown in places.items():
            for key, (allocated, requested) in shown.items():
                expected = reference.get(key, (0.0, 0.0))
                if allocated != expected[0] or (requested is not None and requested != expected[1]):
                    problems.append(f"{place} {key}: {(allocated, requested)} != API {expected}")
        self.tables.append((step, places))
        assert not problems, "\n".join(problems) + "\n" + self.text()
        return reference

    def text(self) -> str:
        keys = [(unit, pool) for unit in ("nlp", "cv", "research") for pool in (*POOLS, TOTAL)]
        keys += [("cluster", pool) for pool in POOLS]
        head = ["place"] + [f"{u} {p}" for u, p in keys]
        lines = []
        for step, places in self.tables:
            lines.append(f"== {step}  (allocated/requested GPUs; requested '-' where the place shows allocated only; "
                         "'' where it shows nothing)")
            rows = [head]
            for place, shown in places.items():
                rows.append([place] + [_cell(shown.get(k)) for k in keys])
            widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
            lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
            lines.append("")
        return "\n".join(lines)

    def save(self, folder) -> None:
        (folder / "quota-numbers-comparison.txt").write_text(
            "One number everywhere (issue 36): every place that shows a quota number, read after each step of\n"
            "tests/scheduling/test_quota_numbers_kubesim.py on kubesim's KAI Scheduler (two pools of 4 GPUs,\n"
            "department research: pool-a 4/4, pool-b 4/4; nlp: pool-a 2/4, pool-b 2/4; cv: pool-a 2/4, pool-b 2/2,\n"
            "deserved/limit). Written by the test (STUDIO_REFRESH_DOCS=1).\n\n" + self.text())


def _pair(status: dict) -> tuple[float, float]:
    return _n(status["allocated"]["gpu"]), _n(status["requested"]["gpu"])


def _cell(value) -> str:
    if value is None:
        return ""
    allocated, requested = value
    return f"{allocated:g}/{'-' if requested is None else f'{requested:g}'}"


def _with_totals(shown: dict) -> dict:
    totals = defaultdict(float)
    for (unit, _pool), (allocated, _requested) in list(shown.items()):
        totals[unit] += allocated
    for unit, allocated in totals.items():
        shown[(unit, TOTAL)] = (_n(allocated), None)
        for pool in POOLS:
            shown.setdefault((unit, pool), (0.0, None))
    research = {pool: sum(shown.get((u, pool), (0.0, None))[0] for u in ("nlp", "cv")) for pool in POOLS}
    if any(unit in ("nlp", "cv") for unit, _ in shown):
        for pool, value in research.items():
            shown[("research", pool)] = (_n(value), None)
        shown[("research", TOTAL)] = (_n(sum(research.values())), None)
    return shown


def _quota_rows(html: str) -> dict[str, tuple[float, float]]:
    """{pool: (allocated, requested)} of the GPUs cells of a quota table's rows."""
    found = {}
    for pool, row in re.findall(r'<tr data-pool="([^"]+)">(.*?)</tr>', html, re.S):
        cell = row[row.index('data-resource="GPUs"'):]
        values = dict(re.findall(r'data-value="(allocated|requested)">([0-9.]+)<', cell[: cell.index("</td>")]))
        if values:
            found[pool] = (_n(values["allocated"]), _n(values["requested"]))
    return found


def _csv(response) -> list[list[str]]:
    assert response.status_code == 200
    return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))


def test_every_place_shows_the_same_numbers_at_each_step(worker, start_kubesim):
    sim = start_kubesim(nodes=2, gpus_per_node=4, node_pools={"pool-a": 1, "pool-b": 1}, kai=True,
                        run_seconds=3600, pull_seconds=0.1, tick=0.02)
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    scenario = Comparison(sim, root)
    try:
        scenario.org()
        scenario.compare("0. nothing submitted")

        # 1. submit: nlp 2 GPUs in pool-a and 1 in pool-b, cv 2 in pool-a; each runs within its deserved share
        scenario.submit("nlp", "nlp-a", 2, "pool-a")
        scenario.submit("nlp", "nlp-b", 1, "pool-b")
        scenario.submit("cv", "cv-a", 2, "pool-a")
        scenario.settle({"nlp-a": "Running", "nlp-b": "Running", "cv-a": "Running"})
        numbers = scenario.compare("1. submitted and running: nlp-a 2 (pool-a), nlp-b 1 (pool-b), cv-a 2 (pool-a)")
        assert numbers[("nlp", "pool-a")] == (2.0, 2.0) and numbers[("cv", "pool-a")] == (2.0, 2.0)
        assert numbers[("research", TOTAL)] == (5.0, 5.0)

        # 2. wait: pool-a is full (4 of 4); cv's next 2 GPUs there wait in its queue (requested, not allocated)
        scenario.submit("cv", "cv-a2", 2, "pool-a")
        scenario.settle({"cv-a2": "Pending"})
        numbers = scenario.compare("2. cv-a2 (2 GPUs, pool-a) waits: pool-a is full")
        assert numbers[("cv", "pool-a")] == (2.0, 4.0) and numbers[("research", "pool-a")] == (4.0, 6.0)

        # 3. finish: a short training in pool-b runs and completes; then nlp-a is deleted and cv-a2 starts
        scenario.submit("nlp", "nlp-short", 1, "pool-b", seconds=2)
        scenario.settle({"nlp-short": "Completed"})
        numbers = scenario.compare("3. nlp-short (1 GPU, pool-b) ran and completed: it counts nowhere")
        assert numbers[("nlp", "pool-b")] == (1.0, 1.0)
        assert scenario.api.delete(f"/api/v1/workloads/trainings/{scenario.ids['nlp-a']}").status_code == 204
        scenario.settle({"cv-a2": "Running"})
        numbers = scenario.compare("4. nlp-a deleted: cv-a2 runs in the GPUs it freed")
        assert numbers[("cv", "pool-a")] == (4.0, 4.0) and numbers[("nlp", "pool-a")] == (0.0, 0.0)
    finally:
        scenario.save(docs_output.folder())
        scenario.k8s.close()
