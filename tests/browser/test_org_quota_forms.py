"""The portal edits what the API edits (issue 36): a department admin fills a project's per-node-pool quotas, a
platform admin a department's and a cluster's node pools; what the services refuse is shown on the page; the stored
values are read back through the API. Screenshots at 1440 and 390 px for docs/portal.md."""

import pytest
from playwright.sync_api import expect

from studio.models import AccessRule, NodePool, Role
from tests.browser.test_layout import AXE, AXE_RUN
from tests.conftest import bearer_client
from tests.factories import UserFactory, seed_node_pools

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def quota_org(org):
    seed_node_pools(org.cluster)
    pools = {p.name: p for p in NodePool.objects.filter(cluster=org.cluster)}
    org.department.cluster = org.cluster
    org.department.node_pool_resources = [{"nodePool": {"id": str(pools["default"].pk), "name": "default"},
                                           "gpu": {"deserved": 4}}]
    org.department.save()
    org.b.node_pool_resources = [{"nodePool": {"id": str(pools["default"].pk), "name": "default"},
                                  "gpu": {"deserved": 1}}]
    org.b.save()
    head = UserFactory(username="heidi")
    AccessRule.objects.create(subject_type="user", subject_id="heidi", user=head,
                              role=Role.objects.get(name="Department administrator"), scope_type="department",
                              scope_id=str(org.department.pk), department=org.department)
    org.pools = pools
    return org


def pool_row(page, pool):
    return page.locator(f"fieldset[data-pool='{pool}']")


def check_page(page, width):
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    wide = page.evaluate("""(w) => [...document.querySelectorAll('*')].filter(e => e.getBoundingClientRect().right > w + 1)
        .slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""", width)
    assert page.evaluate("document.documentElement.scrollWidth") <= width, wide


@pytest.mark.parametrize("width", [1440, 390])
def test_a_department_admin_fills_a_projects_quota_per_node_pool(open_session, quota_org, width):
    session = open_session("heidi", width=width)
    page = session.page
    if width > 900:  # a department role brings Departments and Projects into the side menu
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Projects").click()
    else:
        page.goto("/org/projects")
    page.get_by_role("link", name="Edit alpha").click()
    default = pool_row(page, "default")
    expect(default.get_by_test_id("share")).to_contain_text("3 left")  # 4 for research, 1 given to beta
    default.get_by_label("GPUs deserved in default").fill("5")
    page.get_by_role("button", name="Save quotas").click()
    error = pool_row(page, "default").get_by_role("alert")
    expect(error).to_contain_text("Department research deserves 4 GPUs in node pool default")
    expect(pool_row(page, "default").get_by_label("GPUs deserved in default")).to_have_attribute(
        "aria-invalid", "true")

    default = pool_row(page, "default")
    default.get_by_label("GPUs deserved in default").fill("2")
    default.get_by_label("GPUs limit in default").fill("4")
    default.get_by_label("GPUs over-quota weight in default").fill("2")
    default.get_by_label("CPU (cores) deserved in default").fill("8")
    default.get_by_label("Memory deserved in default").fill("32")
    default.get_by_label("Memory units in default").select_option("GB")
    pool_row(page, "my-node-pool-a").get_by_label("GPUs deserved in my-node-pool-a").fill("1")
    page.get_by_role("button", name="Save quotas").click()
    expect(page.get_by_role("status").filter(has_text="Saved the quotas of project alpha")).to_be_visible()

    api = bearer_client(quota_org.users.platform_admin)
    resources = api.get(f"/api/v1/org-unit/projects/{quota_org.a.pk}").json()["resources"]
    assert resources == [
        {"nodePool": {"id": str(quota_org.pools["default"].pk), "name": "default"},
         "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 2},
         "cpu": {"deserved": 8000, "limit": None, "overQuotaWeight": None},
         "memory": {"deserved": 32, "limit": None, "overQuotaWeight": None, "units": "GB"}},
        {"nodePool": {"id": str(quota_org.pools["my-node-pool-a"].pk), "name": "my-node-pool-a"},
         "gpu": {"deserved": 1, "limit": None, "overQuotaWeight": None}}]
    expect(pool_row(page, "default").get_by_label("CPU (cores) deserved in default")).to_have_value("8")
    check_page(page, width)
    session.screenshot(f"project-quota-form-{width}")


@pytest.mark.parametrize("width", [1440, 390])
def test_a_platform_admin_fills_a_departments_quota(open_session, quota_org, width):
    session = open_session("root", width=width)
    page = session.page
    page.goto("/org/departments")
    page.get_by_role("link", name="Edit research").click()
    default = pool_row(page, "default")
    expect(default.locator("[data-given]")).to_have_text("1")  # beta deserves 1 there
    default.get_by_label("GPUs deserved in default").fill("0.5")
    page.get_by_role("button", name="Save quotas").click()
    expect(pool_row(page, "default").get_by_role("alert")).to_contain_text(
        "Department research's projects deserve 1 GPU in node pool default: lower theirs first.")
    default = pool_row(page, "default")
    default.get_by_label("GPUs deserved in default").fill("6")
    default.get_by_label("GPUs limit in default").fill("8")
    default.get_by_label("Memory deserved in default").fill("65536")
    default.get_by_label("Memory units in default").select_option("Mib")
    pool_row(page, "my-node-pool-b").get_by_label("GPUs deserved in my-node-pool-b").fill("2")
    page.get_by_role("button", name="Save quotas").click()
    expect(page.get_by_role("status").filter(has_text="Saved the quotas of department research")).to_be_visible()

    api = bearer_client(quota_org.users.platform_admin)
    resources = api.get(f"/api/v1/org-unit/departments/{quota_org.department.pk}").json()["resources"]
    assert resources == [
        {"nodePool": {"id": str(quota_org.pools["default"].pk), "name": "default"},
         "gpu": {"deserved": 6, "limit": 8, "overQuotaWeight": None},
         "memory": {"deserved": 65536, "limit": None, "overQuotaWeight": None, "units": "Mib"}},
        {"nodePool": {"id": str(quota_org.pools["my-node-pool-b"].pk), "name": "my-node-pool-b"},
         "gpu": {"deserved": 2, "limit": None, "overQuotaWeight": None}}]
    check_page(page, width)
    session.screenshot(f"department-quota-form-{width}")


@pytest.mark.parametrize("width", [1440, 390])
def test_node_pools_created_edited_and_a_refused_deletion_named(open_session, quota_org, width):
    session = open_session("root", width=width)
    page = session.page
    page.goto(f"/org/clusters/{quota_org.cluster.pk}/edit")
    page.get_by_role("link", name="Node pools").click()
    page.get_by_label("Name").fill("a100")
    page.get_by_label("Node label key").fill("gpu-type")
    page.get_by_label("Node label value").fill("a100")
    page.get_by_label("GPU network acceleration detection").select_option("Use")
    page.get_by_role("button", name="Create node pool").click()
    expect(page.get_by_role("status").filter(has_text="Created node pool a100")).to_be_visible()
    page.get_by_role("link", name="Edit a100").click()
    page.get_by_label("Node label value").fill("A100-80GB")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="Saved node pool a100")).to_be_visible()
    api = bearer_client(quota_org.users.platform_admin)
    pool = NodePool.objects.get(cluster=quota_org.cluster, name="a100")
    answer = api.get(f"/api/v1/node-pools/{pool.pk}").json()
    assert (answer["labelKey"], answer["labelValue"], answer["gpuNetworkAccelerationDetection"]) == (
        "gpu-type", "A100-80GB", "Use")

    # alpha's quota names the pool: the delete is refused, and the page says who holds quota there
    assert api.patch(f"/api/v1/org-unit/projects/{quota_org.a.pk}/resources",
                     [{"nodePool": {"id": str(pool.pk)}, "gpu": {"deserved": 1}}], format="json").status_code == 200
    page.get_by_role("button", name="Delete my-node-pool-a").click()
    session.confirm("Delete my-node-pool-a", says="Its nodes join the default pool")
    expect(page.get_by_role("status").filter(has_text="Deleted node pool my-node-pool-a")).to_be_visible()
    page.get_by_role("button", name="Delete a100").click()
    session.confirm("Delete a100")
    refused = page.get_by_role("alert").filter(has_text="Node pool a100 holds quotas of project alpha")
    expect(refused).to_be_visible()
    expect(page.locator("tr[data-pool=a100]")).to_be_visible()
    assert api.get(f"/api/v1/node-pools/{pool.pk}").status_code == 200
    check_page(page, width)
    session.screenshot(f"node-pool-delete-refused-{width}")
