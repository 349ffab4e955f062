"""runapy (Run:ai's Python SDK) against a running PaaS Studio (`make run`): an access key, the app-token login
runapy does, the example bodies as published (workloads/api/seed_examples.py) (with the demo project's cluster id), and every operation of the
Workloads, Trainings, Workspaces, Inferences, Distributed, Pods and Events tags, each printed with its status
code.

    .venv/bin/python -m scripts.runapy_demo --url http://127.0.0.1:8000 --password "$DEMO_ADMIN_PASSWORD"

It changes the demo: a project policy that allows the example training's hostPath, three workloads (deleted at the end)."""
import argparse
import copy
import json
import time
import urllib.request
from datetime import UTC, datetime, timedelta

from runai.api_client import ApiClient
from runai.configuration import Configuration
from runai.exceptions import ApiException
from runai.runai_client import RunaiClient

from workloads.api.seed_examples import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--url", default="http://127.0.0.1:8000")
parser.add_argument("--username", default="admin")
parser.add_argument("--password", required=True)
parser.add_argument("--project", default="demo")
options = parser.parse_args()
BASE = options.url.rstrip("/")


def call(method, path, body=None, token=None):
    req = urllib.request.Request(BASE + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json",
                                          **({"Authorization": f"Bearer {token}"} if token else {})})
    with urllib.request.urlopen(req) as r:
        return json.load(r)


admin = call("POST", "/api/v1/token", {"grantType": "password", "username": options.username,
                                       "password": options.password})
key = call("POST", "/api/v1/access-keys", {"name": "runapy-demo"}, admin["accessToken"])
project = call("GET", f"/api/v1/org-unit/projects?filterBy=name=={options.project}", token=admin["accessToken"])
project = (project.get("projects") or project)[0] if isinstance(project, dict) else project[0]
pid, cid = str(project["id"]), str(project.get("clusterId"))
print("project", pid, "cluster", cid)

client = RunaiClient(ApiClient(Configuration(client_id=key["clientId"], client_secret=key["clientSecret"],
                                             runai_base_url=BASE, retry_enabled=False)))
print("OK  app_token login (runapy ApiClient._make_token_request)")
w = client.workloads
results = []


def step(name, fn):
    try:
        r = fn()
        results.append((name, r.status_code, "ok"))
        print(f"OK  {name}: {r.status_code}")
        return r.data
    except ApiException as e:
        results.append((name, e.status, e.body[:200]))
        print(f"ERR {name}: {e.status} {e.body[:300]}")


def seed(body):
    body = copy.deepcopy(body)
    body.update(projectId=pid, clusterId=cid)  # the examples name project 1 and their own cluster 71f69d83-...
    return body


for policy_type in ("trainings", "workspaces"):  # the example training mounts a hostPath: a platform admin allows it
    call("PUT", f"/api/v2/policy/{policy_type}", {"meta": {"name": "demo-host-paths", "scope": "project",
         "projectId": int(pid)}, "policy": {"rules": {"storage": {"hostPath": {"instances": {"canAdd": True}}}}}},
         admin["accessToken"])
train = step("create training (seed 003 as published)", lambda: w.trainings.create_training1(seed(TRAINING_REQUEST)))
inf = step("create inference (seed 001 as published)", lambda: w.inferences.create_inference1(seed(INFERENCE_REQUEST)))
ws = step("create workspace (seed 003's body)", lambda: w.workspaces.create_workspace1(seed(WORKSPACE_REQUEST)))
ids = {k: v["workloadId"] for k, v in (("training", train), ("inference", inf), ("workspace", ws)) if v}


def wait(wid, wanted, timeout=90):
    end = time.time() + timeout
    phase = None
    while time.time() < end:
        phase = w.workloads.get_workload(wid).data["phase"]
        if phase in wanted:
            return phase
        time.sleep(3)
    return phase


for kind, wid in ids.items():
    print(f"    {kind} reached", wait(wid, ("Running", "Completed") if kind != "training" else ("Running",)))
step("get training", lambda: w.trainings.get_training(ids["training"]))
step("get workspace", lambda: w.workspaces.get_workspace(ids["workspace"]))
step("get inference", lambda: w.inferences.get_inference(ids["inference"]))
step("list workloads filterBy comma list + sortBy", lambda: w.workloads.get_workloads(
    filter_by=["type==training", "nodepool==default"], sort_by="allocatedGPU", sort_order="desc"))
step("count workloads", lambda: w.workloads.count_workloads(filter_by=["phase==Running"]))
step("get workload", lambda: w.workloads.get_workload(ids["training"]))
pods = step("workload pods", lambda: w.pods.get_workload_pods(ids["training"]))
step("workload events", lambda: w.events.get_workload_events(ids["training"], sort_order="asc"))
now = datetime.now(UTC)
step("workload metrics", lambda: w.workloads.get_workload_metrics(ids["training"], ["CPU_USAGE_CORES", "GPU_ALLOCATION"], now - timedelta(minutes=10), now))
if pods and pods["pods"]:
    step("workload pod metrics", lambda: w.pods.get_workload_pod_metrics(ids["training"], pods["pods"][0]["id"], ["CPU_USAGE_CORES"], now - timedelta(minutes=10), now))
ipods = w.pods.get_workload_pods(ids["inference"]).data["pods"]
step("inference metrics", lambda: w.inferences.get_inference_workload_metrics(ids["inference"], ["THROUGHPUT", "CPU_USAGE_CORES"], now - timedelta(minutes=10), now))
if ipods:
    step("inference pod metrics", lambda: w.inferences.get_inference_workload_pod_metrics(ids["inference"], ipods[0]["id"], ["CPU_USAGE_CORES"], now - timedelta(minutes=10), now))
step("all pods (list_pods)", lambda: w.pods.list_pods(filter_by=[f"workloadId=={ids['training']}"]))
step("count all pods", lambda: w.pods.count_pods())
step("workloads telemetry", lambda: w.workloads.get_workloads_telemetry("GPU_ALLOCATION", group_by=["Type"]))
step("workload history", lambda: w.events.get_workload_history(ids["training"]))
dist = step("create distributed (PyTorch, master + 2 workers)", lambda: w.distributed.create_distributed(
    {"name": "runapy-dist", "projectId": pid, "clusterId": cid, "masterSpecSameAsWorker": True,
     "spec": {"image": "python:3.11", "distributedFramework": "PyTorch", "numWorkers": 2}}))
if dist:
    ids["distributed"] = dist["workloadId"]
    print("    distributed reached", wait(ids["distributed"], ("Running", "Completed")))
    step("get distributed", lambda: w.distributed.get_distributed(ids["distributed"]))
    roles = sorted(p["role"] for p in w.pods.get_workload_pods(ids["distributed"]).data["pods"] if p.get("role"))
    print("    distributed pods by role", roles)
step("update inference (PATCH, new revision)", lambda: w.inferences.update_inference_spec(ids["inference"], {"spec": {"image": "python:3.12"}}))
print("    inference after update", wait(ids["inference"], ("Running",)))
step("suspend workspace", lambda: w.workspaces.suspend_workspace(ids["workspace"]))
print("    workspace", wait(ids["workspace"], ("Stopped",)))
step("resume workspace", lambda: w.workspaces.resume_workspace(ids["workspace"]))
print("    workspace", wait(ids["workspace"], ("Running",)))
step("suspend training", lambda: w.trainings.suspend_training(ids["training"]))
step("resume training", lambda: w.trainings.resume_training(ids["training"]))
print("    training reached", wait(ids["training"], ("Completed",), timeout=180))
for kind in ("training", "workspace", "inference"):
    api = getattr(w, kind + "s")
    step(f"delete {kind}", lambda api=api, kind=kind: getattr(api, f"delete_{kind}")(ids[kind]))
if "distributed" in ids:
    step("delete distributed", lambda: w.distributed.delete_distributed(ids["distributed"]))
# A 400 is expected only for the training's suspend/resume once it has completed (KUBESIM_RUN_SECONDS).
failed = [name for name, code, _ in results if code >= 400 and not (code == 400 and name.endswith(" training"))]
print("done:", len(results), "calls;", "unexpected failures:", failed or "none")
