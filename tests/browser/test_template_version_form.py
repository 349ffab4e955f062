"""A template version's typed spec beyond the container: an inference's exposed and related URLs, image pull
secrets, node pools, pod affinity, required node affinity, serving port, serving configuration and autoscaling,
an environment variable's secret and compute's extended resources,
generated from the inference spec's serializer. An admin fills them (adding rows in the page), sees a bad value
on its field, fixes it, saves, and the API answers what was typed; at 1440 and 390 px, light and dark, axe-clean,
no sideways scroll."""

import pytest
from playwright.sync_api import expect

from profiles import services
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _axe_and_width(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == []
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []


@pytest.mark.parametrize("width,dark", [(1440, False), (390, False), (1440, True), (390, True)])
def test_an_admin_types_an_inferences_urls_placement_and_serving(open_session, org, width, dark):
    template = services.template_create(actor=org.users.platform_admin, name="server", description="Serves.")
    session = open_session("root", width=width)
    page = session.page
    page.goto(f"/studio/environment-templates/{template.pk}")
    if dark:
        page.get_by_role("button", name="Dark mode").click()
        expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    page.get_by_label("Version", exact=True).fill("1.0.0")
    with page.expect_navigation():  # the inference spec's fields
        page.get_by_label("Workload kind").select_option("inference")
    expect(page.get_by_label("Spec template (JSON)")).to_have_count(0)
    page.get_by_label("Image", exact=True).fill("vllm/vllm-openai:v0.6")
    page.get_by_label("Node pools", exact=True).fill("pool-a, pool-b")
    affinity = page.locator("#podAffinity-fields")
    affinity.get_by_label("Type", exact=True).select_option("Preferred")
    affinity.get_by_label("Key", exact=True).fill("topology.kubernetes.io/zone")
    serving = page.locator("#servingPort-fields")
    serving.get_by_label("Container", exact=True).fill("8000")
    serving.get_by_label("Protocol", exact=True).select_option("http")
    serving.get_by_label("Authorization type", exact=True).select_option("authorizedUsers")
    serving.get_by_label("Authorized users", exact=True).fill("ann, bob")
    page.locator("#servingConfiguration-fields").get_by_label("Request timeout seconds").fill("600")
    scaling = page.locator("#autoscaling-fields")
    scaling.get_by_label("Min replicas", exact=True).fill("0")
    scaling.get_by_label("Max replicas", exact=True).fill("4")
    scaling.get_by_label("Metric", exact=True).fill("concurrency")  # Knative's, or any Prometheus metric's name
    scaling.get_by_label("Metric threshold", exact=True).fill("8")
    page.evaluate("window.stillThisPage = true")
    page.get_by_label("Exposed URL 1 container").fill("99999")  # not a port: named on its cell
    page.get_by_label("Exposed URL 1 authorization type").select_option("authorizedGroups")
    page.get_by_label("Exposed URL 1 authorized groups").fill("ml, ops")
    page.get_by_role("button", name="Add an exposed URL row").click()  # in the page, nothing saved
    page.get_by_label("Exposed URL 2 container").fill("8080")
    page.get_by_label("Exposed URL 2 tool type").fill("jupyter")
    page.get_by_label("Related URL 1 url").fill("https://docs.example/model")
    page.get_by_label("Related URL 1 type").fill("documentation")
    page.get_by_label("Image pull secret 1 name").fill("registry-creds")
    page.get_by_label("Environment variable 1 name").fill("HF_TOKEN")  # a secret's key: columns of their own
    page.get_by_label("Environment variable 1 secret name").fill("hf")
    page.get_by_label("Environment variable 1 secret key").fill("token")
    page.get_by_label("Extended resource 1 resource").fill("example.com/fpga")  # a list inside compute
    page.get_by_label("Extended resource 1 quantity").fill("1")
    page.get_by_label("Node affinity expression 1 term").fill("1")
    page.get_by_label("Node affinity expression 1 key").fill("gpu.example/model")
    page.get_by_label("Node affinity expression 1 operator").select_option("In")
    page.get_by_label("Node affinity expression 1 values").fill("h100, h200")
    page.get_by_role("button", name="Add a node affinity expression").click()
    page.get_by_label("Node affinity expression 2 term").fill("2")
    page.get_by_label("Node affinity expression 2 key").fill("gpu.example/spare")
    page.get_by_label("Node affinity expression 2 operator").select_option("Exists")
    page.get_by_role("button", name="Add a node affinity expression").click()
    page.get_by_label("Node affinity expression 3 key").fill("junk")
    page.get_by_role("button", name="Remove node affinity expression 3").click()
    assert page.evaluate("window.stillThisPage") is True  # rows added and removed without a reload
    page.get_by_role("button", name="Add version").click()
    cell = page.get_by_label("Exposed URL 1 container")
    expect(cell).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#exposedurls-0-container-err")).to_be_visible()
    expect(page.get_by_label("Exposed URL 1 authorized groups")).to_have_value("ml, ops")  # what was typed stays
    expect(page.get_by_label("Node affinity expression 3 key")).to_have_count(0)
    _axe_and_width(page, width)
    if not dark:
        session.screenshot(f"template-version-serving-errors-{width}")
    cell.fill("8000")
    page.get_by_role("button", name="Add version").click()
    expect(page.get_by_text("Added version 1.0.0 (draft).")).to_be_visible()
    answer = page.request.get(f"{session.base_url}/api/v1/environment-templates/{template.pk}/versions/1.0.0")
    assert answer.status == 200
    assert answer.json()["specTemplate"] == {
        "image": "vllm/vllm-openai:v0.6", "nodePools": ["pool-a", "pool-b"],
        "podAffinity": {"type": "Preferred", "key": "topology.kubernetes.io/zone"},
        "servingPort": {"container": 8000, "protocol": "http", "authorizationType": "authorizedUsers",
                        "authorizedUsers": ["ann", "bob"]},
        "servingConfiguration": {"requestTimeoutSeconds": 600},
        "autoscaling": {"minReplicas": 0, "maxReplicas": 4, "metric": "concurrency", "metricThreshold": 8},
        "exposedUrls": [{"container": 8000, "authorizationType": "authorizedGroups", "authorizedGroups": ["ml", "ops"]},
                        {"container": 8080, "toolType": "jupyter"}],
        "relatedUrls": [{"url": "https://docs.example/model", "type": "documentation"}],
        "imagePullSecrets": [{"name": "registry-creds"}],
        "environmentVariables": [{"name": "HF_TOKEN", "secret": {"name": "hf", "key": "token"}}],
        "compute": {"extendedResources": [{"resource": "example.com/fpga", "quantity": "1"}]},
        "nodeAffinityRequired": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "gpu.example/model", "operator": "In", "values": ["h100", "h200"]}]},
            {"matchExpressions": [{"key": "gpu.example/spare", "operator": "Exists"}]}]}}
    if not dark:
        _axe_and_width(page, width)
        session.screenshot(f"template-version-serving-{width}")
