"""The new-version form of an environment template: its spec template as typed inputs generated from the
workload spec serializer of its kind; what no input shows is kept; problems land on their inputs."""

import re

import pytest
from django.test import Client

from profiles import services
from tests.kit.test_pages import _posted_form

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(org):
    client = Client()
    client.force_login(org.users.platform_admin)
    return client


def test_the_spec_template_is_typed_and_keeps_what_no_input_shows(admin, org, template):
    services.version_create(actor=org.users.platform_admin, template=template, version="1.0.0", state="active",
                            kind="training", spec_template={
                                "image": "python:3.12", "compute": {"gpuDevicesRequest": 1},
                                "storage": {"pvc": [{"claimName": "data", "path": "/data", "existingPvc": True}]}},
                            variables=[], outputs=[])
    url = f"/studio/environment-templates/{template.pk}"
    page = admin.get(url).content.decode()
    assert 'name="specTemplate"' not in page  # the form view: no JSON box for the spec
    fields = _posted_form(page)
    assert fields["spec.image"] == "python:3.12" and fields["compute.gpuDevicesRequest"] == "1"
    # storage as rows (a PVC's claimInfo as columns of its own) and the readiness probe as inputs
    assert fields["storage.pvc-0-claimName"] == "data" and fields["storage.pvc-0-existingPvc"] == "true"
    assert {"storage.pvc-1-claimInfo.size", "storage.nfs-0-server", "storage.git-0-repository",
            "probes.readiness.periodSeconds", "probes.readiness.handler.httpGet.port"} <= set(fields)
    assert "kept as they are" not in page  # nothing of this spec is left to the JSON view
    assert {"spec.backoffLimit", "spec.parallelism", "compute.cpuMemoryRequest"} <= set(fields)
    assert {"security.runAsUid", "ports-0-container", "tolerations-0-key", "labels-0-name"} <= set(fields)
    fields.update({"version": "1.1.0", "spec.command": "python", "spec.backoffLimit": "3",
                   "compute.gpuDevicesRequest": "2", "environmentVariables-0-name": "MODE",
                   "environmentVariables-0-value": "fast", "security.runAsUid": "1000",
                   "ports-0-container": "8888", "ports-0-serviceType": "ClusterIP",
                   "storage.pvc-1-path": "/scratch", "storage.pvc-1-claimInfo.size": "10Gi",
                   "storage.pvc-1-claimInfo.volumeMode": "Filesystem",
                   "storage.nfs-0-server": "nfs.example", "storage.nfs-0-path": "/exports",
                   "storage.nfs-0-mountPath": "/mnt/nfs", "storage.nfs-0-readOnly": "true",
                   "probes.readiness.initialDelaySeconds": "5", "probes.readiness.handler.httpGet.path": "/health",
                   "probes.readiness.handler.httpGet.port": "8080", "probes.readiness.handler.httpGet.host": "localhost",
                   "probes.readiness.handler.httpGet.scheme": "HTTP"})
    saved = admin.post(url, fields)
    assert saved.status_code == 302, re.findall(r'class="error"[^>]*>([^<]*)', saved.content.decode())
    version = template.versions.get(version="1.1.0")
    assert version.spec_template == {
        "image": "python:3.12", "command": "python", "backoffLimit": 3, "compute": {"gpuDevicesRequest": 2},
        "environmentVariables": [{"name": "MODE", "value": "fast"}], "security": {"runAsUid": 1000},
        "ports": [{"container": 8888, "serviceType": "ClusterIP"}],
        "storage": {"pvc": [{"claimName": "data", "path": "/data", "existingPvc": True},
                            {"path": "/scratch", "claimInfo": {"size": "10Gi", "volumeMode": "Filesystem"}}],
                    "nfs": [{"server": "nfs.example", "path": "/exports", "mountPath": "/mnt/nfs", "readOnly": True}]},
        "probes": {"readiness": {"initialDelaySeconds": 5, "handler": {"httpGet": {
            "path": "/health", "port": 8080, "host": "localhost", "scheme": "HTTP"}}}}}


def test_each_spec_problem_is_on_its_input_all_in_one_save(admin, org, template):
    """One save names every problem: a placeholder's and a wrong type's (the type was named only once the
    placeholder was fixed, a second round), and with the version left out, the spec's problems as well."""
    url = f"/studio/environment-templates/{template.pk}"
    fields = _posted_form(admin.get(url).content.decode())
    fields.update({"version": "1.0.0", "kind": "training", "spec.image": "python:3.12",
                   "spec.backoffLimit": "many", "compute.cpuCoreRequest": "{{ nosuch }}"})
    page = admin.post(url, fields).content.decode()
    assert re.search(r'name="compute\.cpuCoreRequest"[^>]*aria-invalid="true"', page)
    assert "Unknown placeholder {{ nosuch }}" in page and 'value="many"' in page  # what was typed stays
    assert re.search(r'name="spec\.backoffLimit"[^>]*aria-invalid="true"', page)
    fields.update({"version": "", "compute.cpuCoreRequest": "2"})
    page = admin.post(url, fields).content.decode()
    assert re.search(r'name="version"[^>]*aria-invalid="true"', page)
    assert re.search(r'name="spec\.backoffLimit"[^>]*aria-invalid="true"', page)
    assert not template.versions.exists()
    fields.update({"version": "1.0.0", "spec.backoffLimit": "3"})
    assert admin.post(url, fields).status_code == 302
    assert template.versions.get().spec_template["backoffLimit"] == 3


def test_another_kind_re_renders_that_kinds_spec_fields_and_saves_nothing(admin, org, template):
    url = f"/studio/environment-templates/{template.pk}"
    fields = _posted_form(admin.get(url).content.decode())
    assert "spec.numWorkers" not in fields and 'data-refresh-with="refresh-kind"' in admin.get(url).content.decode()
    fields.update({"version": "2.0.0", "kind": "distributed", "spec.image": "python:3.12", "switch": "table"})
    page = admin.post(url, fields).content.decode()
    assert 'name="spec.numWorkers"' in page and 'name="spec.distributedFramework"' in page
    assert 'value="python:3.12"' in page and not template.versions.exists()


def test_a_storage_rows_and_a_probes_problems_are_on_their_cells(admin, org, template):
    url = f"/studio/environment-templates/{template.pk}"
    fields = _posted_form(admin.get(url).content.decode())
    fields.update({"version": "1.0.0", "kind": "training", "spec.image": "python:3.12",
                   "storage.pvc-0-path": "/scratch", "storage.pvc-0-claimInfo.size": "lots",
                   "storage.hostPath-0-path": "relative", "storage.hostPath-0-mountPath": "/mnt/host",
                   "probes.readiness.periodSeconds": "0", "probes.readiness.handler.httpGet.path": "/health",
                   "probes.readiness.handler.httpGet.port": "8080", "probes.readiness.handler.httpGet.host": "x",
                   "probes.readiness.handler.httpGet.scheme": "HTTP"})
    page = admin.post(url, fields).content.decode()
    for name in ("storage.pvc-0-claimInfo.size", "storage.hostPath-0-path", "probes.readiness.periodSeconds"):
        assert re.search(rf'name="{re.escape(name)}"[^>]*aria-invalid="true"', page), name
    assert 'value="lots"' in page and not template.versions.exists()  # what was typed stays


def test_the_json_view_without_a_version_names_the_rest_too_never_a_500(admin, org, template):
    url = f"/studio/environment-templates/{template.pk}"
    body = {"editor": "json", "version": "", "kind": "training", "state": "draft",
            "specTemplate": '{"image": "python:3.12", "args": "{{ nosuch }}", "completions": "many"}',
            "variables": '[{"name": ["x"], "type": {"a": 1}}]', "outputs": "[]"}
    page = admin.post(url, body)
    text = page.content.decode()
    assert page.status_code == 200 and not template.versions.exists()
    assert "variables[0].name" in text or "Not a valid string." in text  # the serializer's, with the version's
    body["variables"] = "[]"
    text = admin.post(url, body).content.decode()
    assert "args: Unknown placeholder {{ nosuch }}" in text and "completions: Must be an integer." in text


def test_an_inferences_urls_secrets_node_placement_and_serving_are_typed_and_saved(admin, org, template):
    """Exposed and related URLs, image pull secrets and the node affinity's match expressions as rows, node
    pools and an exposed URL's authorized users as comma-separated inputs, the pod affinity, serving port,
    serving configuration and autoscaling as inputs: generated from the inference spec's serializer."""
    url = f"/studio/environment-templates/{template.pk}"
    fields = _posted_form(admin.get(url).content.decode())
    fields.update({"version": "3.0.0", "kind": "inference", "switch": "table"})
    page = admin.post(url, fields).content.decode()
    fields = _posted_form(page)
    assert 'name="specTemplate"' not in page
    assert {"spec.nodePools", "podAffinity.type", "servingPort.authorizedUsers", "autoscaling.maxReplicas",
            "servingConfiguration.requestTimeoutSeconds", "exposedUrls-0-authorizedGroups", "relatedUrls-0-url",
            "imagePullSecrets-0-name", "nodeAffinityRequired.nodeSelectorTerms-0-__group__",
            "nodeAffinityRequired.nodeSelectorTerms-0-values", "environmentVariables-0-secret.name",
            "tolerations-0-name", "compute.extendedResources-0-quantity"} <= set(fields)
    fields.pop("switch", None)
    fields.update({"spec.image": "vllm/vllm-openai:v0.6", "spec.nodePools": "pool-a, pool-b",
                   "podAffinity.type": "Preferred", "podAffinity.key": "topology.kubernetes.io/zone",
                   "servingPort.container": "8000", "servingPort.protocol": "http",
                   "servingPort.authorizationType": "authorizedUsers", "servingPort.authorizedUsers": "ann, bob",
                   "servingConfiguration.requestTimeoutSeconds": "600",
                   "autoscaling.minReplicas": "0", "autoscaling.maxReplicas": "4", "autoscaling.metric": "concurrency",
                   "autoscaling.metricThreshold": "8", "exposedUrls-0-container": "8000",
                   "exposedUrls-0-authorizationType": "authorizedGroups", "exposedUrls-0-authorizedGroups": "ml, ops",
                   "relatedUrls-0-url": "https://docs.example/model", "relatedUrls-0-type": "documentation",
                   "imagePullSecrets-0-name": "registry-creds",
                   "environmentVariables-0-name": "HF_TOKEN", "environmentVariables-0-secret.name": "hf",
                   "environmentVariables-0-secret.key": "token", "ports-0-container": "8000",
                   "ports-0-name": "http", "compute.extendedResources-0-resource": "example.com/fpga",
                   "compute.extendedResources-0-quantity": "1",
                   "nodeAffinityRequired.nodeSelectorTerms-rows": "3",
                   "nodeAffinityRequired.nodeSelectorTerms-0-__group__": "1",
                   "nodeAffinityRequired.nodeSelectorTerms-0-key": "gpu.example/model",
                   "nodeAffinityRequired.nodeSelectorTerms-0-operator": "In",
                   "nodeAffinityRequired.nodeSelectorTerms-0-values": "h100, h200",
                   "nodeAffinityRequired.nodeSelectorTerms-1-__group__": "2",
                   "nodeAffinityRequired.nodeSelectorTerms-1-key": "gpu.example/spare",
                   "nodeAffinityRequired.nodeSelectorTerms-1-operator": "Exists",
                   "nodeAffinityRequired.nodeSelectorTerms-2-__group__": "1",
                   "nodeAffinityRequired.nodeSelectorTerms-2-key": "gpu.example/memory",
                   "nodeAffinityRequired.nodeSelectorTerms-2-operator": "Gt",
                   "nodeAffinityRequired.nodeSelectorTerms-2-values": "40000"})
    saved = admin.post(url, fields)
    assert saved.status_code == 302, re.findall(r'class="error"[^>]*>([^<]*)', saved.content.decode())
    spec = template.versions.get(version="3.0.0").spec_template
    assert spec == {
        "image": "vllm/vllm-openai:v0.6", "nodePools": ["pool-a", "pool-b"],
        "podAffinity": {"type": "Preferred", "key": "topology.kubernetes.io/zone"},
        "servingPort": {"container": 8000, "protocol": "http", "authorizationType": "authorizedUsers",
                        "authorizedUsers": ["ann", "bob"]},
        "servingConfiguration": {"requestTimeoutSeconds": 600},
        "autoscaling": {"minReplicas": 0, "maxReplicas": 4, "metric": "concurrency", "metricThreshold": 8},
        "exposedUrls": [{"container": 8000, "authorizationType": "authorizedGroups", "authorizedGroups": ["ml", "ops"]}],
        "relatedUrls": [{"url": "https://docs.example/model", "type": "documentation"}],
        "imagePullSecrets": [{"name": "registry-creds"}],
        "environmentVariables": [{"name": "HF_TOKEN", "secret": {"name": "hf", "key": "token"}}],
        "ports": [{"container": 8000, "name": "http"}],
        "compute": {"extendedResources": [{"resource": "example.com/fpga", "quantity": "1"}]},
        "nodeAffinityRequired": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu.example/model", "operator": "In", "values": ["h100", "h200"]},
                                  {"key": "gpu.example/memory", "operator": "Gt", "values": ["40000"]}]},
            {"matchExpressions": [{"key": "gpu.example/spare", "operator": "Exists"}]}]}}
    # shown again as saved: the rows and the comma-separated inputs
    template.versions.filter(version="3.0.0").update(state="active")
    shown = _posted_form(admin.get(url).content.decode())
    assert shown["spec.nodePools"] == "pool-a, pool-b" and shown["exposedUrls-0-authorizedGroups"] == "ml, ops"
    assert shown["nodeAffinityRequired.nodeSelectorTerms-1-__group__"] == "1"
    assert shown["nodeAffinityRequired.nodeSelectorTerms-2-key"] == "gpu.example/spare"
    assert shown["nodeAffinityRequired.nodeSelectorTerms-2-__group__"] == "2"
    assert shown["environmentVariables-0-secret.key"] == "token" and not shown.get("environmentVariables-0-__rest__")
    assert shown["compute.extendedResources-0-resource"] == "example.com/fpga" and "compute.__rest__" not in shown


def test_a_bad_exposed_url_autoscaling_or_match_expression_is_on_its_input(admin, org, template):
    url = f"/studio/environment-templates/{template.pk}"
    fields = _posted_form(admin.get(url).content.decode())
    fields.update({"version": "3.0.0", "kind": "inference", "switch": "table"})
    fields = _posted_form(admin.post(url, fields).content.decode())
    fields.pop("switch", None)
    fields.update({"spec.image": "vllm/vllm-openai:v0.6", "exposedUrls-0-container": "99999",
                   "autoscaling.minReplicas": "2", "autoscaling.maxReplicas": "1",
                   "nodeAffinityRequired.nodeSelectorTerms-0-__group__": "1",
                   "nodeAffinityRequired.nodeSelectorTerms-0-key": "gpu.example/model",
                   "nodeAffinityRequired.nodeSelectorTerms-0-operator": "Near"})
    page = admin.post(url, fields).content.decode()
    for name in ("exposedUrls-0-container", "autoscaling.maxReplicas",
                 "nodeAffinityRequired.nodeSelectorTerms-0-operator"):
        assert re.search(rf'name="{re.escape(name)}"[^>]*aria-invalid="true"', page), name
    assert not template.versions.filter(version="3.0.0").exists()
