"""runapy (Run:ai's Python SDK) submits a training over its project's quota on a cluster that schedules with KAI
Scheduler (`make run`'s simulated one does), and watches it wait, run on lent GPUs, be reclaimed by the project whose
quota they are, and run again by itself (docs/scheduling.md).

    .venv/bin/python -m scripts.runapy_over_quota --url http://127.0.0.1:8000 --password "$DEMO_ADMIN_PASSWORD"

It makes a department and two projects on the demo project's cluster: A deserves one node's GPUs, B the rest, each
may use them all. B fills the cluster within its quota but one node, A takes that node, and A's second training,
over A's quota, waits; B gives back a node and A's training runs on it; B takes it back and A's training is
reclaimed; B's work ends and A's training runs again. It removes what it made at the end. The cluster's GPUs must be
free, and the sync (beat) running, as under `make run`."""

from __future__ import annotations

import argparse
import json
import time
import urllib.request
import uuid

LONG = [{"name": "kubesim.paas-studio/run-seconds", "value": "3600"}]  # make run's trainings end after a minute


class Watch:
    """Prints every change of phase or pending reason of the workloads it follows."""

    def __init__(self, client, say=print, step=None, timeout: float = 180.0):
        self.client, self.say, self.step, self.timeout = client, say, step, timeout
        self.started, self.seen, self.lines = time.monotonic(), {}, []

    def log(self, text: str) -> None:
        line = f"{time.monotonic() - self.started:7.1f}s  {text}"
        self.lines.append(line)
        self.say(line)

    def look(self, ids: dict) -> dict:
        found = {}
        for name, wid in ids.items():
            w = self.client.workloads.workloads.get_workload(wid).data
            reason = w.get("pendingReason") or {}
            said = reason.get("type") or ""
            by = (reason.get("reclaimedBy") or reason.get("preemptedBy") or {}).get("project")
            said += f" by project {by}" if by else ""
            said += f" ({reason['waitingFor']['type']} now)" if reason.get("waitingFor") else ""
            state = (w["phase"], said)
            if self.seen.get(name) != state:
                self.seen[name] = state
                self.log(f"{name:<10} {w['phase']:<12} {said}")
            found[name] = w
        return found

    def until(self, ids: dict, predicate, what: str) -> dict:
        deadline = time.monotonic() + self.timeout
        while True:
            if self.step:
                self.step()
            found = self.look(ids)
            if predicate(found):
                return found
            if time.monotonic() > deadline:
                raise SystemExit(f"gave up waiting for {what}")
            time.sleep(1.0)


def run(client, cluster_id: str, *, gpus: int, per_node: int, say=print, step=None, timeout: float = 180.0) -> dict:
    """The walk above with a runapy client of a platform admin; answers {"lines", "reclaimedBy", "watched"}."""
    suffix = uuid.uuid4().hex[:4]
    org = client.organizations
    pool = {"nodePool": {"name": "default"}}
    dept = org.departments.create_department({"name": f"kai-demo-{suffix}", "clusterId": cluster_id}).data
    projects = {}
    for letter, deserved in (("a", per_node), ("b", gpus - per_node)):
        body = {"name": f"kai-{letter}-{suffix}", "clusterId": cluster_id, "parentId": str(dept["id"]),
                "resources": [{**pool, "gpu": {"deserved": deserved, "limit": gpus, "overQuotaWeight": 1}}]}
        projects[letter] = org.projects.create_project(body).data
    trainings = client.workloads.trainings
    ids: dict = {}
    watch = Watch(client, say=say, step=step, timeout=timeout)

    def submit(letter: str, name: str) -> None:
        body = {"name": name, "projectId": str(projects[letter]["id"]), "clusterId": cluster_id,
                "spec": {"image": "busybox:1.36", "command": "sleep", "args": "3600", "annotations": LONG,
                         "compute": {"gpuDevicesRequest": per_node}}}
        ids[name] = trainings.create_training1(body).data["workloadId"]
        watch.log(f"submitted {name} ({per_node} GPUs) in project {projects[letter]['name']}")

    def running(*names):
        return lambda found: all(found[n]["phase"] == "Running" for n in names)

    try:
        b_names = [f"b-{i}" for i in range(gpus // per_node - 1)]
        for name in b_names:
            submit("b", name)
        watch.until(ids, running(*b_names), "B's trainings to run")
        submit("a", "a-1")
        watch.until(ids, running("a-1"), "A's first training (within its quota) to run")
        submit("a", "a-over")
        said = ("Scheduling", "Creating", None)  # not yet what the scheduler says
        watch.until(ids, lambda f: f["a-over"]["phase"] == "Pending"
                    and (f["a-over"].get("pendingReason") or {}).get("type") not in said,
                    "A's training over its quota to wait, and the scheduler to say why")
        watch.log(f"a-over waits: {watch.seen['a-over'][1]}")
        trainings.delete_training(ids.pop(b_names[-1]))
        watch.log(f"B deleted {b_names[-1]}: a node is idle")
        watch.until(ids, running("a-over"), "A's training over quota to run on the lent GPUs")
        submit("b", "b-back")
        found = watch.until(ids, lambda f: any((f[n].get("pendingReason") or {}).get("type") == "Reclaimed"
                                               for n in ("a-1", "a-over")), "one of A's trainings to be reclaimed")
        watched = next(n for n in ("a-over", "a-1") if (found[n].get("pendingReason") or {}).get("type") == "Reclaimed")
        reclaimed_by = found[watched]["pendingReason"]["reclaimedBy"].get("project")
        watch.log(f"{watched} reclaimed by project {reclaimed_by}: {found[watched]['pendingReason']['message']}")
        for name in [*b_names[:-1], "b-back"]:
            trainings.delete_training(ids.pop(name))
        watch.log("B's work ended (its trainings deleted)")
        watch.until(ids, running("a-1", "a-over"), "A's trainings to run again by themselves")
        return {"lines": watch.lines, "reclaimedBy": reclaimed_by, "watched": watched}
    finally:
        for wid in ids.values():
            trainings.delete_training(wid)
        for project in projects.values():
            _quietly(lambda p=project: org.projects.delete_project(str(p["id"])))
        _quietly(lambda: org.departments.delete_department(str(dept["id"])))


def _quietly(call) -> None:
    try:
        call()
    except Exception:  # noqa: BLE001 - cleanup: a project whose workloads are still going is left behind
        pass


def main() -> None:
    from runai.api_client import ApiClient
    from runai.configuration import Configuration
    from runai.runai_client import RunaiClient

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", default="admin")
    parser.add_argument("--password", required=True)
    parser.add_argument("--project", default="demo", help="its cluster is the one used")
    parser.add_argument("--gpus", type=int, default=48, help="the cluster's GPUs (make run: 6 nodes of 8)")
    parser.add_argument("--gpus-per-node", type=int, default=8)
    options = parser.parse_args()
    base = options.url.rstrip("/")

    def call(method, path, body=None, token=None):
        request = urllib.request.Request(base + path, method=method, data=json.dumps(body).encode() if body else None,
                                         headers={"Content-Type": "application/json",
                                                  **({"Authorization": f"Bearer {token}"} if token else {})})
        with urllib.request.urlopen(request) as answer:
            return json.load(answer)

    token = call("POST", "/api/v1/token", {"grantType": "password", "username": options.username,
                                           "password": options.password})["accessToken"]
    key = call("POST", "/api/v1/access-keys", {"name": "runapy-over-quota"}, token)
    projects = call("GET", f"/api/v1/org-unit/projects?filterBy=name=={options.project}", token=token)
    cluster_id = str(((projects.get("projects") if isinstance(projects, dict) else projects) or [{}])[0]["clusterId"])
    client = RunaiClient(ApiClient(Configuration(client_id=key["clientId"], client_secret=key["clientSecret"],
                                                 runai_base_url=base, retry_enabled=False)))
    result = run(client, cluster_id, gpus=options.gpus, per_node=options.gpus_per_node)
    print(f"done: {result['watched']} waited, ran over quota, was reclaimed by {result['reclaimedBy']}, ran again")


if __name__ == "__main__":
    main()
