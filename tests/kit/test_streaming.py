"""`/streaming/stream`: launch (202), list, get, end; the session as a workload of kind stream."""

import re

import pytest

from kit.models import ApplicationProfile
from studio.models import Level
from tests.factories import ApplicationFactory, MembershipFactory
from tests.kit.conftest import VALIDATION, error, errors, fields_of
from workloads.models import Workload

pytestmark = pytest.mark.django_db

RUNNING_ENDPOINTS = {
    "url": "", "serviceAddress": "25.124.78.14", "serviceType": "LoadBalancer",
    "ports": [{"name": "port-49100", "port": 49100, "nodePort": 32452},
              {"name": "port-47998-udp", "port": 47998, "nodePort": 32433, "protocol": "UDP"}],
}
KIT_KEYS = ["id", "status", "routes"]
STUDIO_KEYS = ["projectId", "projectName", "projectChosenBy", "application", "version", "profile", "workloadId",
               "queuePosition", "idleTimeoutSeconds"]


@pytest.fixture
def member(client_for, org):
    return client_for(org.users.member)


def launch(api, **body):
    return api.post("/streaming/stream", {"id": "usd-viewer", "profile": "default", **body}, format="json")


def launched(api, **body) -> Workload:
    response = launch(api, **body)
    assert response.status_code == 202, response.json()
    return Workload.objects.get(pk=response.json()["id"])


def test_launch_is_202_with_a_starting_session(member, org, kit):
    response = launch(member, arguments={"/app/auto_load_usd": "omniverse://host/stage.usd"})
    assert response.status_code == 202, response.json()
    body = response.json()
    assert list(body) == KIT_KEYS + STUDIO_KEYS  # Kit's keys first, then PaaS Studio's own
    assert body["status"] == {"condition": "starting", "message": "Session is starting (Creating)", "status": False}
    assert body["routes"] == {}
    assert (body["projectId"], body["projectName"], body["projectChosenBy"]) == (org.a.pk, "alpha", "profile")
    assert (body["application"], body["version"], body["profile"]) == ("usd-viewer", "1.1.0", "default")
    assert body["workloadId"] == body["id"] and body["queuePosition"] is None
    assert response["Location"] == f"/streaming/stream/{body['id']}"

    session = Workload.objects.get(pk=body["id"])
    assert (session.kind, session.source, session.project, session.created_by) == (
        "stream", "stream", org.a, org.users.member)
    assert re.fullmatch(r"usd-viewer-[a-z]{5}", session.name)
    assert session.spec["image"] == "nvcr.io/nvidia/omniverse/usd-viewer:1.1.0"  # the newest release
    assert session.spec["args"] == ["--/app/auto_load_usd=omniverse://host/stage.usd"]
    assert session.spec["ports"] == [
        {"container": 49100, "serviceType": "LoadBalancer", "name": "signaling", "protocol": "TCP"},
        {"container": 47998, "serviceType": "LoadBalancer", "name": "media", "protocol": "UDP"}]
    assert (session.profile_id, session.profile_name, session.profile_revision) == (
        kit.profiles.default.pk, "default", 1)
    assert session.launch_inputs == {"application": "usd-viewer", "version": "1.1.0", "profile": "default",
                                     "arguments": {"/app/auto_load_usd": "omniverse://host/stage.usd"}}
    assert session.events.filter(reason="Submitted").exists()


@pytest.mark.parametrize("version,image_tag", [
    (None, "1.1.0"), ("latest", "1.1.0"), ("1.0.0", "1.0.0"), ("1.1.0-rc.1", "1.1.0-rc.1"),
])
def test_version_defaults_to_the_newest_and_can_be_named(member, kit, version, image_tag):
    body = {} if version is None else {"version": version}
    assert launched(member, **body).spec["image"].endswith(f":{image_tag}")


def test_the_profile_settings_reach_the_spec(member, kit):
    session = launched(member, profile="high-mem", version="1.0.0")
    assert session.spec["compute"] == {"cpuMemoryRequest": "64Gi"}
    assert session.spec["serviceAnnotations"]["paas-studio/stream-authorization"] == "required"


def chosen(response) -> tuple:
    body = response.json()
    assert response.status_code == 202, body
    return body["projectId"], body["projectChosenBy"]


def test_project_is_the_given_one_else_the_profiles_own_else_the_callers_only_one(client_for, org, kit):
    """Without projectId: the profile's own project where the caller may launch there, else the caller's only
    project where they may launch, else a 422 naming the projects to choose from; and the answer says which."""
    other = client_for(org.users.other)  # a member of B only
    assert chosen(launch(other)) == (org.b.pk, "onlyProject")  # `default` is A's: B is other's only project
    MembershipFactory(user=org.users.other, project=org.a, role=Level.MEMBER)
    assert chosen(launch(other)) == (org.a.pk, "profile")  # now other may launch in the profile's own project
    assert chosen(launch(other, id="composer", profile="composer-only")) == (org.b.pk, "profile")
    assert chosen(launch(other, projectId=org.b.pk)) == (org.b.pk, "request")
    unowned = ApplicationProfile.objects.filter(slug="default")
    unowned.update(owner_project=None)  # no project of its own: other is in two projects, so a 422 names them
    body = error(launch(other), 422, VALIDATION)
    assert fields_of(body) == {"projectId"} and "alpha (" in body["details"] and "beta (" in body["details"]


def test_a_platform_admin_in_no_project_gets_the_profiles_own_project(client_for, org, kit):
    """The issue's case: platform admins may launch everywhere, so {id, version, profile} used to be a 400."""
    admin = client_for(org.users.platform_admin)
    assert chosen(launch(admin, version="1.1.0")) == (org.a.pk, "profile")


@pytest.mark.parametrize("form", ["number", "string"])
def test_project_id_is_taken_as_any_answer_hands_it_out(member, org, kit, form):
    """`"id": "1"` from /api/v1/org-unit/projects and `"projectId": 1` from /cfg/profiles: both accepted."""
    given = org.a.pk if form == "number" else str(org.a.pk)
    assert chosen(launch(member, projectId=given)) == (org.a.pk, "request")


def test_no_project_or_a_foreign_one_is_422_naming_project_id(client_for, member, org, kit):
    body = error(launch(client_for(kit.loner)), 422, VALIDATION)
    assert fields_of(body) == {"projectId"} and "no project" in body["details"]
    assert fields_of(error(launch(member, projectId=org.b.id), 422, VALIDATION)) == {"projectId"}


def test_a_viewer_may_not_launch(client_for, org, kit):
    error(launch(client_for(org.users.viewer)), 403, errors.LAUNCH_FORBIDDEN)
    assert not Workload.objects.exists()


@pytest.mark.parametrize("body,message", [
    ({"profile": "composer-only", "id": "composer"}, errors.PROFILE_NOT_FOUND),  # B's, not shared with A
    ({"profile": "high-mem", "version": "1.1.0"}, errors.PROFILE_NOT_FOUND),  # does not serve that version
    ({"profile": "high-mem"}, errors.PROFILE_NOT_FOUND),  # nor the newest
    ({"profile": "nope"}, errors.PROFILE_NOT_FOUND),
    ({"id": "nope"}, errors.APPLICATION_NOT_FOUND),
    ({"version": "9.9.9"}, errors.VERSION_NOT_FOUND),
])
def test_what_cannot_be_launched_is_404(member, kit, body, message):
    error(launch(member, **body), 404, message)
    assert not Workload.objects.exists()


def test_an_unshared_profile_is_404_even_for_a_platform_admin_launching_into_another_project(client_for, org, kit):
    admin = client_for(org.users.platform_admin)
    error(launch(admin, projectId=org.a.id, id="composer", profile="composer-only"), 404, errors.PROFILE_NOT_FOUND)
    assert launched(admin, projectId=org.b.id, id="composer", profile="composer-only").project == org.b


def test_an_app_without_versions_has_no_newest(member, kit):
    ApplicationFactory(id="empty")
    error(launch(member, id="empty"), 404, errors.VERSION_NOT_FOUND)


@pytest.mark.parametrize("body,fields", [
    ({"version": "1.0"}, {"version"}),
    ({"arguments": {"nested": {"a": 1}}}, {"arguments.nested"}),
    ({"arguments": {"bad key": "x"}}, {"arguments.bad key"}),
    ({"arguments": "--x"}, {"arguments"}),
    ({"colour": "red", "profile": None}, {"colour", "profile"}),
])
def test_bad_launch_bodies_are_422_naming_each_field(member, kit, body, fields):
    response = member.post("/streaming/stream", {"id": "usd-viewer", "profile": "default", **body}, format="json")
    assert fields_of(error(response, 422, VALIDATION)) == fields


def test_gpu_quota_applies_to_sessions(member, org, kit):
    ApplicationProfile.objects.filter(slug="default").update(compute={"gpuDevicesRequest": 8})
    body = error(launch(member), 422, VALIDATION)
    assert fields_of(body) == {"spec.compute"}


def test_list_shape_and_each_caller_sees_its_projects_sessions(client_for, member, org, kit):
    mine = launched(member)
    theirs = launched(client_for(org.users.other), id="composer", profile="composer-only")
    body = member.get("/streaming/stream").json()
    assert list(body) == ["offset", "limit", "count", "items"]
    assert (body["offset"], body["limit"], body["count"]) == (0, 50, 1)
    assert [s["id"] for s in body["items"]] == [str(mine.pk)]
    assert list(body["items"][0]) == KIT_KEYS + STUDIO_KEYS
    assert [s["id"] for s in client_for(org.users.viewer).get("/streaming/stream").json()["items"]] == [str(mine.pk)]
    everything = client_for(org.users.platform_admin).get("/streaming/stream").json()
    assert {s["id"] for s in everything["items"]} == {str(mine.pk), str(theirs.pk)}
    assert member.get("/streaming/stream?limit=0").status_code == 422


def test_a_running_session_answers_its_routes(member, kit):
    session = launched(member)
    Workload.objects.filter(pk=session.pk).update(actual_phase="Running", endpoints=RUNNING_ENDPOINTS)
    response = member.get(f"/streaming/stream/{session.pk}")
    assert response.status_code == 200  # ready: Kit clients stop polling at the first 200
    body = response.json()
    assert {key: body[key] for key in KIT_KEYS} == {
        "id": str(session.pk),
        "status": {"condition": "ready", "message": "Session is active", "status": True},
        "routes": {"25.124.78.14": {"routes": [
            {"description": "signaling", "destination_port": 49100, "protocol": "TCP", "source_port": 49100},
            {"description": "media", "destination_port": 47998, "protocol": "UDP", "source_port": 47998},
        ]}},
    }
    assert member.get("/streaming/stream").json()["items"] == [body]


@pytest.mark.parametrize("phase,endpoints,code", [
    ("Creating", {}, 202), ("Pending", {}, 202), ("Initializing", {}, 202),
    ("Running", {}, 202),  # running, but its Service has no address yet: no route to give
    ("Running", RUNNING_ENDPOINTS, 200), ("Degraded", RUNNING_ENDPOINTS, 202), ("Unknown", RUNNING_ENDPOINTS, 202),
    ("Failed", {}, 200),  # it never will be ready: the answer says why
])
def test_get_answers_202_until_the_session_is_ready(member, kit, phase, endpoints, code):
    session = launched(member)
    Workload.objects.filter(pk=session.pk).update(actual_phase=phase, endpoints=endpoints)
    response = member.get(f"/streaming/stream/{session.pk}")
    assert response.status_code == code, response.json()
    assert bool(response.json()["routes"]) is (code == 200 and phase == "Running")


def test_another_projects_session_is_404(client_for, org, kit):
    session = launched(client_for(org.users.other), id="composer", profile="composer-only")
    member = client_for(org.users.member)
    error(member.get(f"/streaming/stream/{session.pk}"), 404, errors.SESSION_NOT_FOUND)
    error(member.delete("/streaming/stream", {"id": str(session.pk)}, format="json"), 404, errors.SESSION_NOT_FOUND)
    error(member.get("/streaming/stream/not-a-uuid"), 404, errors.SESSION_NOT_FOUND)


def test_delete_by_body_ends_the_session(member, kit):
    session = launched(member)
    assert member.delete("/streaming/stream", {"id": str(session.pk)}, format="json").status_code == 204
    session.refresh_from_db()
    assert (session.desired_phase, session.actual_phase) == ("Deleted", "Deleting") and session.deleted_at
    error(member.get(f"/streaming/stream/{session.pk}"), 404, errors.SESSION_NOT_FOUND)
    assert member.get("/streaming/stream").json()["count"] == 0


def test_delete_by_path_ends_the_session(member, kit):
    session = launched(member)
    assert member.delete(f"/streaming/stream/{session.pk}").status_code == 204
    error(member.delete(f"/streaming/stream/{session.pk}"), 404, errors.SESSION_NOT_FOUND)


def test_a_viewer_may_not_end_a_session(client_for, member, org, kit):
    session = launched(member)
    error(client_for(org.users.viewer).delete(f"/streaming/stream/{session.pk}"), 403, errors.SESSION_FORBIDDEN)
    assert Workload.objects.get(pk=session.pk).deleted_at is None


@pytest.mark.parametrize("body,fields", [({}, {"id"}), ({"id": "abc"}, {"id"}), ({"id": 5}, {"id"})])
def test_a_bad_delete_body_is_422(member, kit, body, fields):
    assert fields_of(error(member.delete("/streaming/stream", body, format="json"), 422, VALIDATION)) == fields


def test_deleting_a_version_or_profile_in_use_leaves_the_session_running(client_for, member, org, kit):
    session = launched(member, version="1.0.0", profile="high-mem")
    admin = client_for(org.users.platform_admin)
    assert admin.delete("/cfg/apps/usd-viewer/versions", {"version": "1.0.0"}, format="json").status_code == 204
    assert admin.delete("/cfg/profiles/high-mem").status_code == 204
    session.refresh_from_db()
    assert session.deleted_at is None and session.desired_phase == "Running"
    assert session.spec["image"].endswith(":1.0.0") and session.spec["compute"] == {"cpuMemoryRequest": "64Gi"}
    assert member.get(f"/streaming/stream/{session.pk}").status_code == 202  # still there, still starting


def test_list_queries_are_bounded(member, kit, django_assert_max_num_queries):
    for _ in range(5):
        launched(member)
    with django_assert_max_num_queries(6):
        assert member.get("/streaming/stream").json()["count"] == 5
