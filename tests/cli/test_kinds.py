"""Every kind's submit flags as the server receives them (read back with `describe -o json`), and each kind's
list, suspend and delete; against a live server (nothing is pushed to a cluster here)."""

import pytest

from tests.factories import seed_node_pools

pytestmark = pytest.mark.django_db(transaction=True)


def test_submit_flags_reach_the_spec_of_every_kind(logged_in, org):
    seed_node_pools(org.cluster)
    org.a.gpu_deserved, org.a.gpu_limit = 20, 40
    org.a.save()
    member = logged_in(org.users.member)
    assert member("config", "project", "alpha").code == 0
    created = member("training", "submit", "train", "-i", "python:3.11", "-g", "2", "--cpu-core-request", "0.5",
                     "--cpu-memory-request", "1G", "-e", "A=1", "-e", "B=x=y", "--node-pools", "my-node-pool-a",
                     "--existing-pvc", "claimname=data,path=/data,readonly", "--parallelism", "2",
                     "--completions", "4", "--command", "-o", "json", "--", "python", "-c", "print('hi there')")
    assert created.code == 0, created
    spec = member("training", "describe", "train", "-o", "json").json()["spec"]
    assert spec["command"] == "python" and spec["args"] == "-c 'print('\"'\"'hi there'\"'\"')'"
    assert spec["compute"] == {"gpuDevicesRequest": 2, "cpuCoreRequest": 0.5, "cpuMemoryRequest": "1G"}
    assert spec["environmentVariables"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "x=y"}]
    assert spec["nodePools"] == ["my-node-pool-a"] and (spec["parallelism"], spec["completions"]) == (2, 4)
    assert spec["storage"]["pvc"] == [{"existingPvc": True, "claimName": "data", "path": "/data", "readOnly": True}]
    # Without --command, the words after -- are arguments to the image's entry point.
    assert member("workspace", "submit", "lab", "-i", "jupyter/base-notebook", "--gpu-memory-request", "10G",
                  "--", "--port", "8888").code == 0
    spec = member("workspace", "describe", "lab", "-o", "json").json()["spec"]
    assert "command" not in spec and spec["args"] == "--port 8888"
    assert spec["compute"] == {"gpuDevicesRequest": 1, "gpuRequestType": "memory", "gpuMemoryRequest": "10G"}
    assert member("inference", "submit", "serve", "-i", "vllm/vllm-openai", "--serving-port", "8000",
                  "--gpu-portion-request", "0.25").code == 0
    assert member("inference", "describe", "serve", "-o", "json").json()["spec"]["servingPort"] == {"container": 8000}
    assert member("distributed", "submit", "dist", "-i", "python:3.11", "--workers", "2", "-g", "1").code == 0
    got = member("distributed", "describe", "dist", "-o", "json").json()
    assert (got["spec"]["distributedFramework"], got["spec"]["numWorkers"]) == ("PyTorch", 2)

    for kind, name in (("training", "train"), ("workspace", "lab"), ("inference", "serve"), ("distributed", "dist")):
        assert [r["name"] for r in member(kind, "list", "-o", "json").json()] == [name]
        if kind != "inference":
            assert member(kind, "suspend", name, "-o", "json").json()["code"] == 202
            assert member(kind, "resume", name).code == 0
        assert member(kind, "delete", name).code == 0
        assert member(kind, "list", "-o", "json").json() == []
    assert member("inference", "suspend", "serve").code == 2  # inferences are not suspended: no such command
    # The generated name of --name-prefix, and a workload named by its id.
    prefixed = member("training", "submit", "run", "-i", "python:3.11", "--name-prefix", "-o", "json").json()
    assert prefixed["name"].startswith("run-") and prefixed["name"] != "run"
    assert member("training", "describe", prefixed["workloadId"], "-o", "json").json()["name"] == prefixed["name"]
    assert member("workspace", "describe", prefixed["workloadId"]).code == 3  # a training is no workspace
