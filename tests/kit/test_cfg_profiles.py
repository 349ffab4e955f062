"""`/cfg/profiles[/{profile}]`: platform admins create, update and delete; reads follow sharing."""

import pytest

from kit.models import ApplicationProfile
from studio.models import AuditEvent
from tests.kit.conftest import VALIDATION, error, errors, fields_of

pytestmark = pytest.mark.django_db

FULL = {
    "id": "l40s-nlb",
    "name": "L40S behind an NLB",
    "description": "One L40S, TLS in the pod.",
    "supportedApplications": [{"name": "usd-viewer", "versions": ["1.0.0", "1.1.0"]}, {"name": "*", "versions": ["*"]}],
    "compute": {"cpuCoreRequest": 4, "cpuCoreLimit": 8, "cpuMemoryRequest": "16Gi", "cpuMemoryLimit": "32Gi",
                "gpuDevicesRequest": 1},
    "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "runtimeClassName": "nvidia",
    "authorization": False,
    "loadBalancing": {"serviceType": "NodePort",
                      "annotations": {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"}},
    "encryption": {"mode": "pod", "tlsSecret": "stream-tls"},
    "environmentVariables": [{"name": "OMNI_LOG_LEVEL", "value": "info"}],
    "ports": [{"name": "signaling", "port": 49100, "protocol": "TCP"}, {"name": "media", "port": 1024, "protocol": "UDP"}],
    "idleTimeoutSeconds": 900,
    "overCapacity": "refuse",
}
PROFILE_KEYS = {"id", "name", "description", "supportedApplications", "projectId", "sharing", "compute",
                "nodeSelector", "tolerations", "runtimeClassName", "authorization", "loadBalancing", "encryption",
                "environmentVariables", "ports", "idleTimeoutSeconds", "overCapacity", "revision", "createdAt",
                "updatedAt"}


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


def test_admin_creates_a_profile_with_every_setting(admin, org, kit):
    response = admin.post("/cfg/profiles", {**FULL, "projectId": org.a.id,
                                            "sharing": {"mode": "selected", "projectIds": [org.b.id]}}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert set(body) == PROFILE_KEYS
    assert {k: body[k] for k in FULL} == FULL
    assert body["projectId"] == org.a.id and body["sharing"] == {"mode": "selected", "projectIds": [org.b.id]}
    assert body["revision"] == 1
    assert admin.get("/cfg/profiles/l40s-nlb").json() == body
    row = ApplicationProfile.objects.get(slug="l40s-nlb")
    assert (row.service_type, row.encryption, row.tls_secret, row.authorization) == ("NodePort", "pod", "stream-tls", False)


def test_a_minimal_profile_gets_kit_defaults(admin, kit):
    body = admin.post("/cfg/profiles", {"id": "small", "name": "Small", "supportedApplications": []},
                      format="json").json()
    assert body["loadBalancing"] == {"serviceType": "LoadBalancer", "annotations": {}}
    assert body["encryption"] == {"mode": "none"}
    assert body["authorization"] is True
    assert body["ports"] == [{"name": "signaling", "port": 49100, "protocol": "TCP"},
                             {"name": "media", "port": 47998, "protocol": "UDP"}]  # Kit's WebRTC media is UDP
    assert body["sharing"] == {"mode": "none", "projectIds": []} and body["projectId"] is None
    assert (body["idleTimeoutSeconds"], body["overCapacity"]) == (None, "queue")


def test_a_port_without_a_protocol_is_udp_for_media_and_tcp_otherwise(admin, kit):
    ports = [{"name": "signaling", "port": 49100}, {"name": "media", "port": 47998}, {"name": "extra", "port": 8011}]
    body = admin.post("/cfg/profiles", {"id": "p", "name": "P", "supportedApplications": [], "ports": ports},
                      format="json").json()
    assert [p["protocol"] for p in body["ports"]] == ["TCP", "UDP", "TCP"]


def test_every_problem_of_a_bad_profile_is_named(admin, kit):
    bad = {
        "id": "Bad Id",
        "supportedApplications": [{"name": "Not An App", "versions": ["1.0", "*"]}, {"name": "*", "versions": []}],
        "compute": {"cpuMemoryRequest": "1 Gi", "cpuCoreRequest": 4, "cpuCoreLimit": 2},
        "tolerations": [{"operator": "Sometimes"}],
        "nodeSelector": {"bad key!": "x"},
        "loadBalancing": {"serviceType": "Ingress"},
        "encryption": {"mode": "pod"},
        "ports": [{"name": "signaling", "port": 49100}, {"name": "signaling", "port": 70000}],
        "colour": "blue",
    }
    body = error(admin.post("/cfg/profiles", bad, format="json"), 422, VALIDATION)
    assert fields_of(body) >= {
        "id", "name", "supportedApplications[0].name", "supportedApplications[1].versions",
        "supportedApplications[0].versions[0]", "compute.cpuMemoryRequest", "compute.cpuCoreLimit",
        "tolerations[0].operator", "nodeSelector.bad key!", "loadBalancing.serviceType", "encryption.tlsSecret",
        "ports[1].port", "colour",
    }, body["errors"]
    assert not ApplicationProfile.objects.filter(slug__in=["Bad Id", "bad-id"]).exists()


@pytest.mark.parametrize("encryption,field", [
    ({"mode": "none", "tlsSecret": "x"}, "encryption.tlsSecret"),
    ({"mode": "loadBalancer", "tlsSecret": "x"}, "encryption.tlsSecret"),
    ({"mode": "tls"}, "encryption.mode"),
])
def test_encryption_rules(admin, kit, encryption, field):
    body = {"id": "enc", "name": "Enc", "supportedApplications": [], "encryption": encryption}
    assert fields_of(error(admin.post("/cfg/profiles", body, format="json"), 422, VALIDATION)) == {field}


def test_duplicate_ports_and_unknown_projects_are_422(admin, kit):
    ports = [{"name": "a", "port": 1}, {"name": "b", "port": 1}]
    body = {"id": "dup", "name": "Dup", "supportedApplications": [], "ports": ports}
    assert fields_of(error(admin.post("/cfg/profiles", body, format="json"), 422, VALIDATION)) == {"ports"}
    body = {"id": "dup", "name": "Dup", "supportedApplications": [], "projectId": 999}
    assert fields_of(error(admin.post("/cfg/profiles", body, format="json"), 422, VALIDATION)) == {"projectId"}
    body = {"id": "dup", "name": "Dup", "supportedApplications": [], "sharing": {"mode": "selected", "projectIds": [998]}}
    assert fields_of(error(admin.post("/cfg/profiles", body, format="json"), 422, VALIDATION)) == {"projectIds"}
    assert not ApplicationProfile.objects.filter(slug="dup").exists()


def test_a_second_profile_with_the_same_id_is_409(admin, kit):
    response = admin.post("/cfg/profiles", {"id": "default", "name": "X", "supportedApplications": []}, format="json")
    assert response.status_code == 409
    assert response.json()["detail"] == "An application profile with id 'default' already exists."


def test_update_changes_only_what_is_given_and_bumps_the_revision(admin, org, kit):
    response = admin.put("/cfg/profiles/high-mem", {"id": "high-mem", "compute": {"cpuMemoryRequest": "128Gi"},
                                                    "loadBalancing": {"serviceType": "ClusterIP"}}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["compute"] == {"cpuMemoryRequest": "128Gi"}
    assert body["loadBalancing"] == {"serviceType": "ClusterIP", "annotations": {}}
    assert body["name"] == "High memory profile" and body["revision"] == 2
    assert body["supportedApplications"] == [{"name": "usd-viewer", "versions": ["1.0.0"]}]
    patched = admin.patch("/cfg/profiles/high-mem", {"description": "Bigger."}, format="json").json()
    assert patched["description"] == "Bigger." and patched["revision"] == 3
    assert AuditEvent.objects.filter(object_type="kit.applicationprofile", action="update").count() == 2


def test_the_profile_id_is_immutable(admin, kit):
    body = error(admin.put("/cfg/profiles/default", {"id": "renamed"}, format="json"), 422, VALIDATION)
    assert fields_of(body) == {"id"}
    assert ApplicationProfile.objects.filter(slug="default").exists()


def test_a_null_project_id_removes_the_owner_and_an_absent_one_keeps_it(admin, org, kit):
    assert admin.get("/cfg/profiles/a-private").json()["projectId"] == org.a.id
    kept = admin.put("/cfg/profiles/a-private", {"description": "still A's"}, format="json")
    assert kept.status_code == 200 and kept.json()["projectId"] == org.a.id
    cleared = admin.patch("/cfg/profiles/a-private", {"projectId": None}, format="json")
    assert cleared.status_code == 200 and cleared.json()["projectId"] is None
    assert ApplicationProfile.objects.get(slug="a-private").owner_project is None
    body = error(admin.put("/cfg/profiles/a-private", {"projectId": 0}, format="json"), 422, VALIDATION)
    assert fields_of(body) == {"projectId"}


def test_sharing_decides_who_reads_it(admin, client_for, org, kit):
    other = client_for(org.users.other)  # project B
    error(other.get("/cfg/profiles/high-mem"), 404, errors.PROFILE_NOT_FOUND)
    assert "high-mem" not in [p["id"] for p in other.get("/cfg/profiles").json()["items"]]

    shared = admin.put("/cfg/profiles/high-mem", {"sharing": {"mode": "selected", "projectIds": [org.b.id]}},
                       format="json")
    assert shared.json()["sharing"] == {"mode": "selected", "projectIds": [org.b.id]}
    assert other.get("/cfg/profiles/high-mem").status_code == 200
    assert other.get("/cfg/apps/usd-viewer/versions/1.0.0/profiles/high-mem").status_code == 200


def test_profile_list_shape_and_visibility(client_for, org, kit):
    body = client_for(org.users.member).get("/cfg/profiles").json()
    assert list(body) == ["count", "limit", "offset", "items"]
    assert [p["id"] for p in body["items"]] == ["a-private", "default", "high-mem"]
    assert all(set(p) == PROFILE_KEYS for p in body["items"])
    assert [p["id"] for p in client_for(org.users.other).get("/cfg/profiles").json()["items"]] == [
        "composer-only", "default"]
    assert client_for(org.users.platform_admin).get("/cfg/profiles").json()["count"] == 4
    assert client_for(org.users.member).get("/cfg/profiles?search=memory").json()["count"] == 1
    error(client_for(kit.loner).get("/cfg/profiles"), 403, errors.RESOURCE_FORBIDDEN)
    error(client_for(kit.loner).get("/cfg/profiles/default"), 403, errors.PROFILE_FORBIDDEN)


def test_profile_list_queries_are_bounded(client_for, org, kit, django_assert_max_num_queries):
    from tests.factories import ApplicationProfileFactory

    for n in range(15):
        ApplicationProfileFactory(slug=f"more{n}", owner_project=org.a, sharing_mode="selected", shared_with=[org.b])
    member = client_for(org.users.member)
    with django_assert_max_num_queries(8):
        assert member.get("/cfg/profiles").json()["count"] == 18


@pytest.mark.parametrize("role", ["admin", "member", "viewer"])
def test_profile_writes_are_for_platform_admins(client_for, org, kit, role):
    api = client_for(getattr(org.users, role))
    error(api.post("/cfg/profiles", {"id": "mine", "name": "Mine", "supportedApplications": []}, format="json"),
          403, errors.RESOURCE_FORBIDDEN)
    error(api.put("/cfg/profiles/high-mem", {"name": "Mine"}, format="json"), 403, errors.PROFILE_FORBIDDEN)
    error(api.delete("/cfg/profiles/high-mem"), 403, errors.PROFILE_FORBIDDEN)
    # a profile the caller cannot see is a 404 before any role check
    error(api.put("/cfg/profiles/composer-only", {"name": "Mine"}, format="json"), 404, errors.PROFILE_NOT_FOUND)
    error(api.delete("/cfg/profiles/composer-only"), 404, errors.PROFILE_NOT_FOUND)
    assert ApplicationProfile.objects.get(slug="high-mem").name == "High memory profile"


def test_admin_deletes_a_profile(admin, kit):
    assert admin.delete("/cfg/profiles/high-mem").status_code == 204
    error(admin.get("/cfg/profiles/high-mem"), 404, errors.PROFILE_NOT_FOUND)
    error(admin.delete("/cfg/profiles/high-mem"), 404, errors.PROFILE_NOT_FOUND)
