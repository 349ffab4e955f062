"""The asset pages (assets/views.py) over HTTP: a list per family with scope and usage, the typed forms that
create, change and delete through the API's services (every problem at once, at its field), credentials'
secrets never rendered back, and the API's access rules deciding what is offered and what is refused."""

import re

import pytest

from assets.models import Asset, AssetUse

pytestmark = pytest.mark.django_db


@pytest.fixture
def page_for(client):
    def login(user):
        client.force_login(user)
        return client

    return login


def test_each_family_lists_its_assets_as_cards_and_as_the_table(page_for, make_asset, org):
    make_asset("environment", "pytorch")
    make_asset("compute", "half-gpu", scope="tenant", user=org.users.platform_admin)
    make_asset("datasource/nfs", "datasets")
    make_asset("credentials/docker-registry", "registry")
    client = page_for(org.users.admin)
    cards = client.get("/assets/environments").content.decode()
    assert 'data-asset="pytorch"' in cards and "Project alpha" in cards and "Not in use" in cards
    assert "nvcr.io/nvidia/pytorch:24.01-py3" in cards
    table = client.get("/assets/compute-resources?view=table").content.decode()
    assert 'data-table="assets-compute-resources"' in table and "half-gpu" in table and "Tenant" in table
    assert "1 × 0.5 GPU · 1 CPU · 1Gi" in table
    assert "datasets" in client.get("/assets/data-sources").content.decode()
    assert "registry" in client.get("/assets/credentials").content.decode()
    home = client.get("/").content.decode()
    for href in ("/assets/environments", "/assets/compute-resources", "/assets/data-sources", "/assets/credentials",
                 "/workloads/new"):
        assert f'href="{href}"' in home  # in the side menu
    assert client.get("/assets/no-such-family").status_code == 404


def test_the_table_filters_searches_and_exports_through_one_filterset(page_for, make_asset, org):
    make_asset("datasource/nfs", "train-2")
    make_asset("datasource/nfs", "train-10")
    make_asset("datasource/git", "code")
    client = page_for(org.users.admin)
    text = client.get("/assets/data-sources?view=table&filterBy=kind==nfs&sortBy=name").content.decode()
    assert text.index("train-2") < text.index("train-10") and ">code<" not in text
    csv = b"".join(client.get("/assets/data-sources/export.csv?search=code").streaming_content).decode()
    assert csv.splitlines()[0].startswith("Name,Kind,Scope") and "code" in csv and "train" not in csv
    bad = client.get("/assets/data-sources?view=table&filterBy=nosuch==1").content.decode()
    assert "is not a field to filter by" in bad


def test_a_list_costs_the_same_queries_for_3_and_30_assets(page_for, make_asset, org, django_assert_num_queries):
    for i in range(3):
        make_asset("environment", f"env-{i}")
    client = page_for(org.users.admin)
    for size in (3, 30):
        for i in range(3, size):
            make_asset("environment", f"env-{i}")
        for view in ("cards", "table"):
            client.get(f"/assets/environments?view={view}")  # the session's first read of the page
            with django_assert_num_queries(QUERIES[view]):
                assert client.get(f"/assets/environments?view={view}").status_code == 200


# session, user, rules, the page's rows and their uses, totals, the nav; the table also its user's saved views
QUERIES = {"cards": 9, "table": 10}


def test_a_viewer_reads_but_is_offered_no_change_and_is_refused_one(page_for, make_asset, org):
    env = make_asset("environment", "pytorch")
    client = page_for(org.users.viewer)
    text = client.get("/assets/environments").content.decode()
    assert "pytorch" in text and "New environment" not in text and "Delete" not in text
    detail = client.get(f"/assets/items/{env['meta']['id']}").content.decode()
    assert "let you read and use this asset, not change it" in detail and "<form method=\"post\" novalidate" not in detail
    assert client.post(f"/assets/items/{env['meta']['id']}", {"name": "renamed"}).status_code == 403
    assert client.post(f"/assets/items/{env['meta']['id']}/delete").status_code == 403
    assert client.get("/assets/environments/new/environment").status_code == 403
    assert Asset.objects.get(name="pytorch")


def test_another_projects_member_sees_nothing_of_alpha(page_for, make_asset, org):
    env = make_asset("environment", "pytorch")
    client = page_for(org.users.other)
    assert "pytorch" not in client.get("/assets/environments").content.decode()
    assert client.get(f"/assets/items/{env['meta']['id']}").status_code == 404
    assert client.post(f"/assets/items/{env['meta']['id']}/delete").status_code == 404
    scopes = client.get("/assets/environments/new/environment").content.decode()
    assert "Project beta" in scopes and "Project alpha" not in scopes  # only where it may create


def test_an_l1_researcher_is_offered_environments_but_no_credentials_to_create(page_for, org):
    client = page_for(org.users.member)
    assert "New environment" in client.get("/assets/environments").content.decode()
    form = client.get("/assets/credentials/new/password").content.decode()
    # shared credentials are not its to make; a private one in its project is
    assert f'value="project:{org.a.pk}:private"' in form and f'value="project:{org.a.pk}"' not in form


def test_a_bad_form_shows_every_problem_at_once_at_its_field(page_for, org):
    client = page_for(org.users.admin)
    page = client.post("/assets/environments/new/environment", {
        "name": "Bad Name", "spec.runAsUid": "abc", "spec.environmentVariables": "[{not json",
        "spec.imagePullPolicy": "", "spec.probes.readiness.handler.httpGet.port": "70000"})
    text = page.content.decode()
    assert page.status_code == 200 and "novalidate" in text
    errors = re.findall(r'<p class="error" role="alert" id="id_([^"]+)-error">', text)
    for field in ("name", "scope", "spec.image", "spec.runAsUid", "spec.environmentVariables",
                  "spec.probes.readiness.handler.httpGet.port"):
        assert field in errors, (field, errors)
    assert "Must be an integer." in text and "Not valid JSON" in text and "Must be at most 65535." in text
    assert not Asset.objects.exists()


def test_create_edit_and_delete_through_the_services(page_for, org):
    client = page_for(org.users.admin)
    created = client.post("/assets/data-sources/new/pvc", {
        "name": "scratch", "scope": f"project:{org.a.pk}", "spec.path": "/scratch",
        "spec.claimInfo.size": "5Gi", "spec.claimInfo.accessModes.readWriteOnce": "true"})
    assert created.status_code == 302 and created["Location"] == "/assets/data-sources"
    asset = Asset.objects.get(name="scratch")
    assert asset.spec == {"path": "/scratch", "claimInfo": {"size": "5Gi", "accessModes": {"readWriteOnce": True}}}
    edit = client.get(f"/assets/items/{asset.pk}").content.decode()
    assert 'name="spec.path"' in edit and 'name="spec.claimInfo.size"' not in edit  # a PVC changes its path only
    assert client.post(f"/assets/items/{asset.pk}", {"name": "scratch", "spec.path": "/new"}).status_code == 302
    asset.refresh_from_db()
    assert asset.spec["path"] == "/new" and asset.update_count == 1
    taken = client.post("/assets/data-sources/new/pvc", {"name": "scratch", "scope": f"project:{org.a.pk}",
                                                         "spec.path": "/x", "spec.claimInfo.size": "1Gi"})
    assert "already exists in this scope" in taken.content.decode()
    AssetUse.objects.create(asset=asset, consumer="training", consumer_id="w1", consumer_name="train-1")
    refused = client.post(f"/assets/items/{asset.pk}/delete", follow=True).content.decode()
    assert "is in use by training train-1" in refused and "Used by" in refused
    AssetUse.objects.all().delete()
    assert client.post(f"/assets/items/{asset.pk}/delete").status_code == 302
    assert not Asset.objects.filter(pk=asset.pk).exists()


def test_a_credentials_secret_is_write_only(page_for, org):
    client = page_for(org.users.admin)
    bad = client.post("/assets/credentials/new/docker-registry".replace("docker-registry", "dockerRegistry"), {
        "name": "Registry!", "scope": f"project:{org.a.pk}", "spec.user": "puller",
        "spec.password": "s3cr3t-registry", "spec.url": ""}).content.decode()
    assert "s3cr3t-registry" not in bad and 'type="password"' in bad and "puller" in bad
    assert 'id="id_spec.url-error"' in bad and 'id="id_name-error"' in bad
    good = client.post("/assets/credentials/new/dockerRegistry", {
        "name": "registry", "scope": f"project:{org.a.pk}", "spec.user": "puller",
        "spec.password": "s3cr3t-registry", "spec.url": "https://registry.example.com"})
    assert good.status_code == 302
    asset = Asset.objects.get(name="registry")
    assert "s3cr3t-registry" in asset.secret and "password" not in asset.spec
    for url in ("/assets/credentials", "/assets/credentials?view=table", f"/assets/items/{asset.pk}",
                "/assets/credentials/export.csv"):
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        assert b"s3cr3t-registry" not in body
    pairs = client.post("/assets/credentials/new/genericSecret", {
        "name": "tokens", "scope": f"project:{org.a.pk}", "spec.keyValuePairs": "TOKEN=s3cr3t-token\nbroken line"})
    text = pairs.content.decode()
    assert "Line 2: write KEY=value." in text and "s3cr3t-token" not in text and not Asset.objects.filter(
        name="tokens").exists()


def test_bulk_delete_names_each_refusal(page_for, make_asset, org):
    kept = make_asset("environment", "kept")
    gone = make_asset("environment", "gone")
    AssetUse.objects.create(asset_id=kept["meta"]["id"], consumer="workspace", consumer_id="w", consumer_name="nb")
    client = page_for(org.users.admin)
    page = client.post("/assets/environments/bulk", {"action": "delete", "ids": [kept["meta"]["id"],
                                                                                  gone["meta"]["id"]]}, follow=True)
    text = page.content.decode()
    assert "Deleted 1 asset: gone." in text and "Refused — kept" in text and "in use by workspace nb" in text
    assert list(Asset.objects.values_list("name", flat=True)) == ["kept"]


def test_the_catalog_shows_compute_resources_as_skus(page_for, make_asset, org):
    make_asset("compute", "a100-half", scope="tenant", user=org.users.platform_admin)
    make_asset("compute", "beta-only", project=org.b, user=org.users.platform_admin)
    text = page_for(org.users.member).get("/catalog").content.decode()
    assert 'data-sku="a100-half"' in text and "1 × 0.5 GPU" in text and "1 CPU" in text and "1Gi memory" in text
    assert "beta-only" not in text
    assert "/workloads/new?compute=" in text


def test_a_member_keeps_a_private_credential_that_others_do_not_see(page_for, org):
    client = page_for(org.users.member)
    made = client.post("/assets/credentials/new/password", {
        "name": "my-git", "scope": f"project:{org.a.pk}:private", "spec.user": "bob", "spec.password": "s3cr3t-pw"})
    assert made.status_code == 302
    asset = Asset.objects.get(name="my-git")
    assert asset.private and asset.created_by == org.users.member
    assert "my-git" in client.get("/assets/credentials").content.decode()
    admin = page_for(org.users.admin)
    assert "my-git" not in admin.get("/assets/credentials").content.decode()
    assert admin.get(f"/assets/items/{asset.pk}").status_code == 404
