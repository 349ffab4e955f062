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
              {"name": "port-47998", "port": 47998, "nodePort": 32433}],
}


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
    assert list(body) == ["id", "status", "routes"]
    assert body["status"] == {"condition": "starting", "message": "Session is starting (Creating)", "status": False}
    assert body["routes"] == {}
    assert response["Location"] == f"/streaming/stream/{body['id']}"

    session = Workload.objects.get(pk=body["id"])
    assert (session.kind, session.source, session.project, session.created_by) == (
        "stream", "stream", org.a, org.users.member)
    assert re.fullmatch(r"usd-viewer-[a-z]{5}", session.name)
    assert session.spec["image"] == "nvcr.io/nvidia/omniverse/usd-viewer:1.1.0"  # the newest release
    assert session.spec["args"] == ["--/app/auto_load_usd=omniverse://host/stage.usd"]
    assert session.spec["ports"][0] == {"container": 49100, "serviceType": "LoadBalancer", "name": "signaling"}
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


def test_project_is_the_callers_only_project_or_the_given_one(client_for, org, kit):
    admin_of_a = client_for(org.users.admin)
    assert launched(admin_of_a).project == org.a
    MembershipFactory(user=org.users.admin, project=org.b, role=Level.MEMBER)
    body = error(launch(admin_of_a), 400, VALIDATION)
    assert fields_of(body) == {"projectId"} and "several projects" in body["details"]
    assert launched(admin_of_a, projectId=org.b.id).project == org.b


def test_no_project_or_a_foreign_one_is_400_naming_project_id(client_for, member, org, kit):
    body = error(launch(client_for(kit.loner)), 400, VALIDATION)
    assert fields_of(body) == {"projectId"} and "no project" in body["details"]
    assert fields_of(error(launch(member, projectId=org.b.id), 400, VALIDATION)) == {"projectId"}


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
def test_bad_launch_bodies_are_400_naming_each_field(member, kit, body, fields):
    response = member.post("/streaming/stream", {"id": "usd-viewer", "profile": "default", **body}, format="json")
    assert fields_of(error(response, 400, VALIDATION)) == fields


def test_gpu_quota_applies_to_sessions(member, org, kit):
    ApplicationProfile.objects.filter(slug="default").update(compute={"gpuDevicesRequest": 8})
    body = error(launch(member), 400, VALIDATION)
    assert fields_of(body) == {"spec.compute"}


def test_list_shape_and_each_caller_sees_its_projects_sessions(client_for, member, org, kit):
    mine = launched(member)
    theirs = launched(client_for(org.users.other), id="composer", profile="composer-only")
    body = member.get("/streaming/stream").json()
    assert list(body) == ["offset", "limit", "count", "items"]
    assert (body["offset"], body["limit"], body["count"]) == (0, 50, 1)
    assert [s["id"] for s in body["items"]] == [str(mine.pk)]
    assert set(body["items"][0]) == {"id", "status", "routes"}
    assert [s["id"] for s in client_for(org.users.viewer).get("/streaming/stream").json()["items"]] == [str(mine.pk)]
    everything = client_for(org.users.platform_admin).get("/streaming/stream").json()
    assert {s["id"] for s in everything["items"]} == {str(mine.pk), str(theirs.pk)}
    assert member.get("/streaming/stream?limit=0").status_code == 400


def test_a_running_session_answers_its_routes(member, kit):
    session = launched(member)
    Workload.objects.filter(pk=session.pk).update(actual_phase="Running", endpoints=RUNNING_ENDPOINTS)
    body = member.get(f"/streaming/stream/{session.pk}").json()
    assert body == {
        "id": str(session.pk),
        "status": {"condition": "ready", "message": "Session is active", "status": True},
        "routes": {"25.124.78.14": [
            {"description": "signaling", "destination_port": 49100, "protocol": "TCP", "source_port": 49100},
            {"description": "media", "destination_port": 47998, "protocol": "TCP", "source_port": 47998},
        ]},
    }
    assert member.get("/streaming/stream").json()["items"] == [body]


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
def test_a_bad_delete_body_is_400(member, kit, body, fields):
    assert fields_of(error(member.delete("/streaming/stream", body, format="json"), 400, VALIDATION)) == fields


def test_deleting_a_version_or_profile_in_use_leaves_the_session_running(client_for, member, org, kit):
    session = launched(member, version="1.0.0", profile="high-mem")
    admin = client_for(org.users.platform_admin)
    assert admin.delete("/cfg/apps/usd-viewer/versions", {"version": "1.0.0"}, format="json").status_code == 204
    assert admin.delete("/cfg/profiles/high-mem").status_code == 204
    session.refresh_from_db()
    assert session.deleted_at is None and session.desired_phase == "Running"
    assert session.spec["image"].endswith(":1.0.0") and session.spec["compute"] == {"cpuMemoryRequest": "64Gi"}
    assert member.get(f"/streaming/stream/{session.pk}").status_code == 200


def test_list_queries_are_bounded(member, kit, django_assert_max_num_queries):
    for _ in range(5):
        launched(member)
    with django_assert_max_num_queries(6):
        assert member.get("/streaming/stream").json()["count"] == 5
