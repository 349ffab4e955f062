"""The catalog and who sees what: a matrix of three projects × the three sharing modes × {catalog, GET
profile, launch}; the catalog's shape, filters and flat query count."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from profiles.inputs import effective_inputs
from profiles.models import ServiceProfile
from studio.models import AccessRule
from tests.factories import ServiceProfileFactory
from workloads.models import Workload

pytestmark = pytest.mark.django_db

SHARINGS = {
    "none": lambda org, c: {"mode": "none"},
    "all": lambda org, c: {"mode": "all"},
    "selected-b": lambda org, c: {"mode": "selected", "projectIds": [org.b.id]},
}
# Project A owns the profile; B and C are the others. Who may see it, by sharing mode.
VISIBLE = {
    ("none", "a"): True, ("none", "b"): False, ("none", "c"): False,
    ("all", "a"): True, ("all", "b"): True, ("all", "c"): True,
    ("selected-b", "a"): True, ("selected-b", "b"): True, ("selected-b", "c"): False,
}


def member_of(org, project_key, project_c):
    """(project, a member of it and of no other project)."""
    if project_key == "a":
        return org.a, org.users.member
    if project_key == "b":
        return org.b, org.users.other
    return project_c, AccessRule.objects.get(project=project_c).user


@pytest.mark.parametrize("mode,project_key", sorted(VISIBLE), ids=[f"{m}-{p}" for m, p in sorted(VISIBLE)])
def test_visibility_matrix(client_for, org, project_c, make_profile, mode, project_key):
    profile = make_profile(sharing=SHARINGS[mode](org, project_c))
    project, user = member_of(org, project_key, project_c)
    api = client_for(user)
    visible = VISIBLE[(mode, project_key)]

    catalog = api.get(f"/api/v1/catalog?projectId={project.id}")
    assert catalog.status_code == 200
    assert [p["id"] for p in catalog.json()["profiles"]] == ([profile.id] if visible else [])
    assert api.get(f"/api/v1/catalog/{profile.id}?projectId={project.id}").status_code == (200 if visible else 404)
    assert api.get(f"/api/v1/service-profiles/{profile.id}").status_code == (200 if visible else 404)
    listed = [p["id"] for p in api.get("/api/v1/service-profiles").json()["serviceProfiles"]]
    assert listed == ([profile.id] if visible else [])

    launch = api.post(f"/api/v1/service-profiles/{profile.id}/launch",
                      {"projectId": project.id, "name": "run", "inputs": {"command": "python"}}, format="json")
    assert launch.status_code == (201 if visible else 404), launch.json()
    assert Workload.objects.filter(project=project).count() == (1 if visible else 0)


@pytest.mark.parametrize("mode", sorted(SHARINGS))
def test_a_profile_launches_only_into_the_projects_it_is_shared_with(client_for, org, project_c, make_profile, mode):
    """Even a platform admin, who sees every profile, launches it only where it is shared."""
    profile = make_profile(sharing=SHARINGS[mode](org, project_c))
    admin = client_for(org.users.platform_admin)
    for key in ("a", "b", "c"):
        project, _ = member_of(org, key, project_c)
        response = admin.post(f"/api/v1/service-profiles/{profile.id}/launch",
                              {"projectId": project.id, "name": f"run-{key}", "inputs": {"command": "python"}},
                              format="json")
        assert response.status_code == (201 if VISIBLE[(mode, key)] else 404), (key, response.json())


def test_viewers_browse_the_catalog_but_may_not_launch(client_for, org, profile):
    viewer = client_for(org.users.viewer)
    assert [p["name"] for p in viewer.get(f"/api/v1/catalog?projectId={org.a.id}").json()["profiles"]] == ["trainer-job"]
    response = viewer.post(f"/api/v1/service-profiles/{profile.id}/launch",
                           {"projectId": org.a.id, "name": "run", "inputs": {"command": "python"}}, format="json")
    assert response.status_code == 403 and response.json() == {"code": 403, "message": "Viewers may not launch workloads."}


def test_the_catalog_of_a_project_the_caller_is_not_in_is_404(client_for, org, profile):
    other = client_for(org.users.other)
    response = other.get(f"/api/v1/catalog?projectId={org.a.id}")
    assert response.status_code == 404 and response.json()["code"] == 404
    assert other.get("/api/v1/catalog?projectId=999").status_code == 404
    missing = other.get("/api/v1/catalog")
    assert missing.status_code == 400 and missing.json()["errors"][0]["field"] == "projectId"
    assert other.get("/api/v1/catalog?projectId=abc").status_code == 400


def test_catalog_entries_hold_what_an_end_user_needs(client_for, org, make_profile):
    make_profile(
        readme="## Use\n<iframe src=x></iframe>", icon_url="https://example.com/i.png",
        inputs=[{"name": "image", "override": "not-allowed"}, {"name": "epochs", "default": 5},
                {"name": "gpus", "visible": False}, {"name": "mode", "override": "restricted", "allowedValues": ["slow"],
                                                     "default": "slow"}],
        outputs=[{"name": "key", "visible": False}, {"name": "url", "label": "Open it"}])
    entry = client_for(org.users.member).get(f"/api/v1/catalog?projectId={org.a.id}").json()["profiles"][0]
    assert set(entry) == {"id", "name", "displayName", "description", "serviceType", "kind", "iconUrl", "readmeHtml",
                          "revision", "inputs", "outputs"}
    assert entry["readmeHtml"].strip() == "<h2>Use</h2>" and entry["iconUrl"] == "https://example.com/i.png"
    inputs = {i["name"]: i for i in entry["inputs"]}
    assert list(inputs) == ["image", "command", "epochs", "memory", "mode", "api_key"]  # gpus is hidden
    assert inputs["epochs"] == {"name": "epochs", "type": "integer", "description": "", "default": 5,
                                "override": "allowed", "allowedValues": None, "required": False, "min": 1,
                                "max": 100, "pattern": None, "options": None}
    assert inputs["image"]["override"] == "not-allowed" and inputs["image"]["default"] == "python:3.11"
    assert inputs["command"]["required"] and inputs["mode"]["allowedValues"] == ["slow"]
    assert inputs["api_key"]["type"] == "secret" and inputs["api_key"]["default"] is None
    assert entry["outputs"] == [{"name": "url", "label": "Open it"}, {"name": "address", "label": "Address"},
                                {"name": "epochs", "label": "Epochs"}]


def test_catalog_filters_by_service_type_and_search(client_for, org, make_profile):
    make_profile("notebook", display_name="Jupyter", service_type="notebook")
    make_profile("llm", display_name="Chat server", service_type="inference", sharing={"mode": "all"})
    api = client_for(org.users.member)

    def names(query):
        return [p["name"] for p in api.get(f"/api/v1/catalog?projectId={org.a.id}&{query}").json()["profiles"]]

    assert names("") == ["llm", "notebook"]
    assert names("serviceType=inference") == ["llm"]
    assert names("search=jupy") == ["notebook"]
    assert names("filterBy=serviceType==notebook") == ["notebook"]
    assert names("limit=1") == ["llm"]
    assert names("sortBy=name&sortOrder=desc") == ["notebook", "llm"]


def test_a_disabled_version_takes_its_profiles_out_of_the_catalog(client_for, org, profile):
    profile.template_version.state = "disabled"
    profile.template_version.save()
    api = client_for(org.users.member)
    assert api.get(f"/api/v1/catalog?projectId={org.a.id}").json()["profiles"] == []
    response = api.post(f"/api/v1/service-profiles/{profile.id}/launch",
                        {"projectId": org.a.id, "name": "run", "inputs": {"command": "python"}}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "environmentTemplateVersion"


def test_a_deleted_profile_leaves_every_catalog(client_for, org, project_c, make_profile):
    profile = make_profile(sharing={"mode": "all"})
    admin = client_for(org.users.platform_admin)
    assert admin.delete(f"/api/v1/service-profiles/{profile.id}").status_code == 204
    for project in (org.a, org.b, project_c):
        assert admin.get(f"/api/v1/catalog?projectId={project.id}").json()["profiles"] == []
    assert not ServiceProfile.objects.exists()


def test_the_catalog_query_count_is_the_same_for_1_and_200_profiles(client_for, org, version, django_assert_num_queries):
    api = client_for(org.users.member)
    ServiceProfileFactory(template_version=version, owner_project=org.a)
    with CaptureQueriesContext(connection) as one:
        assert len(api.get(f"/api/v1/catalog?projectId={org.a.id}").json()["profiles"]) == 1
    for i in range(199):  # every way in: owned, shared with all, shared with the project among others
        ways = [{"owner_project": org.a}, {"sharing_mode": "all"},
                {"sharing_mode": "selected", "shared_with": [org.a, org.b]}]
        ServiceProfileFactory(template_version=version, **ways[i % 3])
    ServiceProfileFactory.create_batch(5, template_version=version, owner_project=org.b)  # not A's
    with django_assert_num_queries(len(one.captured_queries)):
        assert len(api.get(f"/api/v1/catalog?projectId={org.a.id}&limit=500").json()["profiles"]) == 200


def test_the_catalog_reads_the_shown_columns_and_each_template_version_once(client_for, org, version):
    api = client_for(org.users.member)
    ServiceProfileFactory.create_batch(100, template_version=version, owner_project=org.a)
    with CaptureQueriesContext(connection) as page:
        assert len(api.get(f"/api/v1/catalog?projectId={org.a.id}&limit=100").json()["profiles"]) == 100
    profile_reads = [q["sql"] for q in page if 'FROM "profiles_serviceprofile"' in q["sql"] and "COUNT(" not in q["sql"]]
    version_reads = [q["sql"] for q in page if 'FROM "profiles_templateversion"' in q["sql"]]
    assert len(profile_reads) == 1 and len(version_reads) == 1
    for unshown in ("extra_config", "annotations", "labels", "readme", "spec_template"):
        assert f'."{unshown}"' not in profile_reads[0]
    assert "spec_template" not in version_reads[0]


def test_a_catalog_entry_is_what_its_declared_fields_render(client_for, org, make_profile):
    """The entry is written out by hand for speed; it stays what DRF's declared fields (the OpenAPI schema's
    shape) render from the same profile, key for key and in the same order."""
    from rest_framework import serializers

    from profiles import selectors
    from profiles.serializers import CatalogEntrySerializer

    make_profile(icon_url="https://example.com/i.png", display_name="Trainer",
                 inputs=[{"name": "gpus", "visible": False}, {"name": "epochs", "default": 5, "required": True}],
                 outputs=[{"name": "url", "label": ""}])
    make_profile("second")
    answered = client_for(org.users.member).get(f"/api/v1/catalog?projectId={org.a.id}").json()["profiles"]
    declared = CatalogEntrySerializer()
    declared.get_inputs = lambda profile: [
        {k: v for k, v in item.items() if k != "visible"}
        for item in effective_inputs(profile.template_version.variables, profile.inputs) if item["visible"]]
    expected = [serializers.Serializer.to_representation(declared, p)
                for p in selectors.catalog_entries_for(org.a).order_by("name")]
    assert [list(e.items()) for e in sorted(answered, key=lambda e: e["name"])] == [list(e.items()) for e in expected]


def test_a_catalog_read_again_answers_the_same_and_shows_a_changed_profile_at_once(client_for, org, make_profile):
    """A page's decoded inputs and outputs are kept per process (profiles.selectors._shown_json) and shared between
    pages: what one page shows must not change what the next shows, and a changed profile is read again."""
    from profiles import services

    first = make_profile(inputs=[{"name": "epochs", "default": 5}, {"name": "gpus", "visible": False}],
                         outputs=[{"name": "url", "label": "Open it"}])
    make_profile("second", inputs=[{"name": "epochs", "default": 5}, {"name": "gpus", "visible": False}])
    client = client_for(org.users.member)
    url = f"/api/v1/catalog?projectId={org.a.id}"
    before = client.get(url).json()
    assert client.get(url).json() == before
    services.profile_update(actor=org.users.platform_admin, profile=first,
                            inputs=[{"name": "epochs", "default": 7}], outputs=[{"name": "url", "label": "Go"}])
    after = {e["name"]: e for e in client.get(url).json()["profiles"]}
    shown = {i["name"]: i for i in after["trainer-job"]["inputs"]}
    assert shown["epochs"]["default"] == 7 and "gpus" in shown  # no longer hidden
    assert after["trainer-job"]["outputs"][0] == {"name": "url", "label": "Go"}
    assert after["second"] == next(e for e in before["profiles"] if e["name"] == "second")
