"""`manage.py system_profiles`: idempotent, and each system profile launches from the API as shipped."""

import copy
from io import StringIO

import pytest
from django.core.management import call_command

from profiles import system
from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion
from studio.models import AuditEvent
from tests.factories import MembershipFactory, ProjectFactory
from workloads.models import Workload

pytestmark = pytest.mark.django_db
NAMES = ["jupyter-notebook", "llm-inference-server", "pytorch-distributed", "pytorch-training"]
NAME_OF = {"pytorch-distributed": "demo-ddp"}  # the others: demo-<serviceType>


def install() -> str:
    out = StringIO()
    call_command("system_profiles", stdout=out, stderr=out)
    return out.getvalue()


def state() -> list:
    return [list(EnvironmentTemplate.objects.values_list("name", "system", "sharing_mode")),
            list(TemplateVersion.objects.values_list("template__name", "version", "state", "kind")),
            list(ServiceProfile.objects.values_list("name", "system", "sharing_mode", "revision", "service_type")),
            AuditEvent.objects.count()]


def test_the_command_installs_four_shared_system_profiles_and_a_second_run_changes_nothing(db):
    assert "Created service profile jupyter-notebook." in install()
    first = state()
    assert first[2] == [("jupyter-notebook", True, "all", 1, "notebook"),
                        ("llm-inference-server", True, "all", 1, "inference"),
                        ("pytorch-distributed", True, "all", 1, "jobs"),
                        ("pytorch-training", True, "all", 1, "jobs")]
    assert [row[3] for row in first[1]] == ["workspace", "inference", "training", "distributed"]
    assert install() == ""
    assert state() == first


def test_a_changed_definition_moves_the_profile_to_a_new_revision(db, monkeypatch):
    install()
    profiles = copy.deepcopy(system.PROFILES)
    profiles[2]["description"] = "Now with more GPUs."
    monkeypatch.setattr(system, "PROFILES", profiles)
    import profiles.management.commands.system_profiles as command

    monkeypatch.setattr(command, "PROFILES", profiles)
    assert "Updated service profile pytorch-training to revision 2." in install()
    assert ServiceProfile.objects.get(name="pytorch-training").description == "Now with more GPUs."
    assert ServiceProfile.objects.get(name="jupyter-notebook").revision == 1


def test_system_templates_are_read_only_too(client_for, org):
    install()
    admin = client_for(org.users.platform_admin)
    template = EnvironmentTemplate.objects.get(name="pytorch-training")
    url = f"/api/v1/environment-templates/{template.id}"
    message = "System environment templates are read-only; create a template of your own."
    for response in (admin.patch(url, {"description": "x"}, format="json"), admin.delete(url),
                     admin.post(f"{url}/versions", {}, format="json"),
                     admin.patch(f"{url}/versions/1.0.0", {"state": "disabled"}, format="json"),
                     admin.delete(f"{url}/versions/1.0.0")):
        assert response.status_code == 403 and response.json() == {"code": 403, "message": message}
    assert admin.get(f"{url}/versions/1.0.0").json()["state"] == "active"


def test_a_taken_name_is_skipped_with_a_warning(client_for, org, make_profile):
    make_profile("jupyter-notebook")
    assert "Skipped system service profile jupyter-notebook" in install()
    assert not ServiceProfile.objects.get(name="jupyter-notebook").system


@pytest.fixture
def demo(org):
    """A project sized like `make run`'s demo project, with org's member in it."""
    project = ProjectFactory(name="demo", department=org.department, cluster=org.cluster, gpu_deserved=8, gpu_limit=16)
    MembershipFactory(user=org.users.member, project=project, role="member")
    return project


def test_each_system_profile_launches_from_the_catalog_and_answers_outputs(client_for, org, demo):
    install()
    api = client_for(org.users.member)
    catalog = api.get(f"/api/v1/catalog?projectId={demo.id}").json()["profiles"]
    assert [p["name"] for p in catalog] == NAMES
    assert all(p["readmeHtml"] and p["iconUrl"] and p["outputs"] for p in catalog)

    inputs = {"jupyter-notebook": {}, "llm-inference-server": {"model": "Qwen/Qwen2.5-0.5B-Instruct"},
              "pytorch-training": {"command": "python", "args": "train.py --epochs 1", "gpus": 1},
              "pytorch-distributed": {"args": "--nproc-per-node=2 train.py", "workers": 3, "gpus": 2}}
    launched = {}
    for entry in catalog:
        response = api.post(f"/api/v1/service-profiles/{entry['id']}/launch",
                            {"projectId": demo.id, "name": NAME_OF.get(entry["name"], f"demo-{entry['serviceType']}"),
                             "inputs": inputs[entry["name"]]}, format="json")
        assert response.status_code == 201, (entry["name"], response.json())
        launched[entry["name"]] = Workload.objects.get(pk=response.json()["id"])

    notebook, llm, distributed, training = (launched[name] for name in NAMES)
    assert (notebook.kind, llm.kind, training.kind) == ("workspace", "inference", "training")
    assert distributed.kind == "distributed" and distributed.gpu_request == 8  # (1 master + 3 workers) x 2
    assert (distributed.spec["distributedFramework"], distributed.spec["numWorkers"]) == ("PyTorch", 3)
    assert distributed.spec["command"] == "torchrun" and distributed.spec["args"] == "--nproc-per-node=2 train.py"
    # The LLM server's quota holds its one GPU for each replica it may scale to (max_replicas 3).
    assert notebook.gpu_request == 0.5 and llm.gpu_request == 3 and training.gpu_request == 1
    assert notebook.spec["args"] == "start-notebook.sh --ServerApp.base_url=/demo/demo-notebook/8888"
    assert notebook.spec["environmentVariables"][0]["secret"]["key"] == "generated.token"
    assert llm.spec["autoscaling"] == {"minReplicas": 1, "maxReplicas": 3, "metric": "concurrency",
                                       "metricThreshold": 8}
    assert llm.spec["servingPort"] == {"container": 8000, "protocol": "http"}
    assert [e["name"] for e in llm.spec["environmentVariables"]] == ["VLLM_NO_USAGE_STATS"]  # no HF token given
    assert training.spec["command"] == "python" and training.spec["compute"] == {"gpuDevicesRequest": 1}

    def values(workload):
        body = api.get(f"/api/v1/workloads/{workload.pk}/outputs").json()["outputs"]
        return {o["name"]: o["value"] for o in body}

    token = values(notebook)["token"]
    assert token and values(notebook)["url"] is None
    notebook.endpoints = {"url": "http://studio.local/demo/demo-notebook/8888", "serviceAddress": "nb.studio-demo.svc"}
    notebook.save(update_fields=["endpoints"])
    assert values(notebook) == {"url": "http://studio.local/demo/demo-notebook/8888",
                                "service_address": "nb.studio-demo.svc", "token": token}
    assert values(llm) == {"endpoint": None, "service_address": None, "model": "Qwen/Qwen2.5-0.5B-Instruct"}
    assert values(training) == {"job": "demo/demo-jobs", "command": "python train.py --epochs 1"}
    assert values(distributed) == {"job": "demo/demo-ddp", "workers": "3"}


def test_the_llm_profile_fixes_its_image_and_hides_the_replica_count(client_for, org, demo):
    install()
    llm = ServiceProfile.objects.get(name="llm-inference-server")
    api = client_for(org.users.member)
    url = f"/api/v1/service-profiles/{llm.id}/launch"
    fixed = api.post(url, {"projectId": demo.id, "name": "x", "inputs": {"image": "evil:latest"}}, format="json")
    hidden = api.post(url, {"projectId": demo.id, "name": "x", "inputs": {"max_replicas": 1}}, format="json")
    assert [e["field"] for e in fixed.json()["errors"]] == ["inputs.image"]
    assert [e["field"] for e in hidden.json()["errors"]] == ["inputs.max_replicas"]
    with_token = api.post(url, {"projectId": demo.id, "name": "x", "inputs": {"hf_token": "hf_abc"}}, format="json")
    assert with_token.status_code == 201
    env = Workload.objects.get(pk=with_token.json()["id"]).spec["environmentVariables"]
    assert env[0]["name"] == "HUGGING_FACE_HUB_TOKEN" and env[0]["secret"]["key"] == "hf_token"
