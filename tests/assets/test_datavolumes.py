"""Run:ai's data volumes through the API: create, read, list (Originated, UsableInProject), count, name
availability, patch, share and unshare, delete; each answer checked against Run:ai's 2.18 and latest schemas;
bad input a 400 naming each problem; another project's member a 404 until the data volume is shared with it,
and a 403 when it tries to change what it may only use."""

import pytest

from assets.models import DataVolume
from tests.runai_spec import assert_matches_spec

pytestmark = pytest.mark.django_db
BASE = "/api/v1/datavolumes"


def create(api, org, name="results", **fields):
    response = api.post(BASE, {"name": name, "projectId": str(org.a.pk), "originPvcName": "train-out", **fields},
                        format="json")
    assert response.status_code == 201, response.json()
    assert_matches_spec(response, "post", BASE)
    return response.json()


def test_a_project_admin_makes_a_data_volume_and_reads_it_back(client_for, org):
    api = client_for(org.users.admin)
    made = create(api, org, description="Results of experiment X")
    assert (made["name"], made["projectId"], made["projectName"], made["originPvcName"]) == (
        "results", str(org.a.pk), "alpha", "train-out")
    assert made["clusterId"] == str(org.cluster.pk) and made["departmentId"] == str(org.department.pk)
    assert made["status"]["phase"] == "Creating" and made["sharedScopes"] == []
    assert made["status"]["datavolumePvcName"] == f"data-volume-{made['id']}"
    got = api.get(f"{BASE}/{made['id']}")
    assert_matches_spec(got, "get", f"{BASE}/{{datavolumeId}}")
    assert got.json()["id"] == made["id"] and got.json()["description"] == "Results of experiment X"

    listed = api.get(BASE, {"requestType": "Originated"})
    assert_matches_spec(listed, "get", BASE)
    assert [d["id"] for d in listed.json()["datavolumes"]] == [made["id"]]
    counted = api.get(f"{BASE}/count", {"requestType": "Originated"})
    assert_matches_spec(counted, "get", f"{BASE}/count", ("latest",))
    assert counted.json() == {"count": 1}

    patched = api.patch(f"{BASE}/{made['id']}", {"description": "Kept."}, format="json")
    assert patched.status_code == 200, patched.json()
    assert_matches_spec(patched, "patch", f"{BASE}/{{datavolumeId}}")
    assert patched.json()["description"] == "Kept."

    deleted = api.delete(f"{BASE}/{made['id']}")
    assert deleted.status_code == 202 and deleted.json() == {"code": 202, "message": "Request has been accepted."}
    assert DataVolume.objects.get(pk=made["id"]).phase == "Deleting"  # the task removes it from the cluster


def test_names_are_unique_on_a_cluster_and_their_availability_is_answered(client_for, org):
    api = client_for(org.users.admin)
    create(api, org)
    free = api.get(f"{BASE}/name-availability", {"dataName": "other", "clusterId": str(org.cluster.pk)})
    assert free.status_code == 204
    taken = api.get(f"{BASE}/name-availability", {"dataName": "results", "clusterId": str(org.cluster.pk)})
    assert taken.status_code == 409 and taken.json()["code"] == 409
    again = api.post(BASE, {"name": "results", "projectId": str(org.a.pk), "originPvcName": "x"}, format="json")
    assert again.status_code == 409 and "results" in again.json()["message"]
    bad = api.get(f"{BASE}/name-availability", {"clusterId": "nope"})
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"dataName", "clusterId"}


def test_every_problem_of_a_body_or_a_query_is_named_in_one_400(client_for, org):
    api = client_for(org.users.admin)
    bad = api.post(BASE, {"name": "Not A Name", "projectId": "999999", "originPvcName": "UPPER_case",
                          "shouldDeleteOriginalVolume": "yes", "colour": "red"}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {
        "name", "projectId", "originPvcName", "shouldDeleteOriginalVolume", "colour"}
    empty = api.post(BASE, {}, format="json")
    assert {e["field"] for e in empty.json()["errors"]} == {"name", "projectId", "originPvcName"}
    assert api.post(BASE, ["a"], format="json").status_code == 400

    lists = api.get(BASE, {"requestType": "Everything", "limit": "0", "sortBy": "colour"})
    assert lists.status_code == 400
    assert {e["field"] for e in lists.json()["errors"]} == {"requestType", "limit", "sortBy"}
    usable = api.get(BASE, {"requestType": "UsableInProject"})
    assert {e["field"] for e in usable.json()["errors"]} == {"usableInProjectId"}

    made = create(api, org)
    renamed = api.patch(f"{BASE}/{made['id']}", {"name": "other", "description": "x" * 200}, format="json")
    assert renamed.status_code == 400
    assert {e["field"] for e in renamed.json()["errors"]} == {"name", "description"}
    shares = api.patch(f"{BASE}/{made['id']}/sharedScopes", {"add": [{"scopeType": "tenant", "scopeId": "1"},
                                                                     {"scopeType": "project", "scopeId": "abc"}],
                                                             "remove": "all"}, format="json")
    assert shares.status_code == 400
    assert {e["field"] for e in shares.json()["errors"]} == {"add[0].scopeType", "add[1].scopeId", "remove"}
    assert api.get(f"{BASE}/not-a-uuid").status_code == 404


def test_another_projects_member_sees_a_data_volume_once_it_is_shared_with_its_department(client_for, org):
    admin, other = client_for(org.users.admin), client_for(org.users.other)  # other: a member of beta only
    made = create(api := admin, org)
    url = f"{BASE}/{made['id']}"
    assert other.get(url).status_code == 404
    assert other.get(f"{url}/sharedScopes").status_code == 404
    assert other.delete(url).status_code == 404
    usable = other.get(BASE, {"requestType": "UsableInProject", "usableInProjectId": str(org.b.pk)})
    assert usable.json()["datavolumes"] == []
    # alpha's admin does not see beta: sharing with it directly names no project it knows.
    direct = api.patch(f"{url}/sharedScopes", {"add": [{"scopeType": "project", "scopeId": str(org.b.pk)}]},
                       format="json")
    assert direct.status_code == 400 and direct.json()["errors"][0]["field"] == "add[0].scopeId"

    shared = api.patch(f"{url}/sharedScopes", {"add": [{"scopeType": "department",
                                                        "scopeId": str(org.department.pk)}]}, format="json")
    assert shared.status_code == 200, shared.json()
    assert_matches_spec(shared, "patch", f"{BASE}/{{datavolumeId}}/sharedScopes")
    assert [(s["scopeType"], s["scopeId"], s["scopeName"]) for s in shared.json()] == [
        ("department", str(org.department.pk), "research")]
    seen = other.get(url)
    assert seen.status_code == 200 and seen.json()["sharedScopes"][0]["scopeType"] == "department"
    listed = other.get(BASE, {"requestType": "UsableInProject", "usableInProjectId": str(org.b.pk)})
    assert [d["id"] for d in listed.json()["datavolumes"]] == [made["id"]]
    # ...but only alpha's may change it: beta's member reads and uses it.
    assert other.patch(url, {"description": "mine"}, format="json").status_code == 403
    assert other.delete(url).status_code == 403
    assert other.patch(f"{url}/sharedScopes", {"remove": [{"scopeType": "department",
                                                           "scopeId": str(org.department.pk)}]},
                       format="json").status_code == 403
    assert other.get(BASE, {"requestType": "Originated"}).json()["datavolumes"] == []

    unshared = api.patch(f"{url}/sharedScopes", {"remove": [{"scopeType": "department",
                                                             "scopeId": str(org.department.pk)}]}, format="json")
    assert unshared.status_code == 200 and unshared.json() == []
    got = api.get(f"{url}/sharedScopes")
    assert_matches_spec(got, "get", f"{BASE}/{{datavolumeId}}/sharedScopes")
    assert got.json() == [] and other.get(url).status_code == 404


def test_a_viewer_reads_but_may_not_make_or_delete_data_volumes(client_for, org):
    made = create(client_for(org.users.admin), org)
    viewer = client_for(org.users.viewer)
    assert viewer.get(f"{BASE}/{made['id']}").status_code == 200
    refused = viewer.post(BASE, {"name": "mine", "projectId": str(org.a.pk), "originPvcName": "x"}, format="json")
    assert refused.status_code == 403 and refused.json()["code"] == 403
    assert viewer.delete(f"{BASE}/{made['id']}").status_code == 403
    # A project the caller does not see is named as one that does not exist.
    hidden = client_for(org.users.other).post(BASE, {"name": "mine", "projectId": str(org.a.pk),
                                                     "originPvcName": "x"}, format="json")
    assert hidden.status_code == 400 and hidden.json()["errors"][0]["field"] == "projectId"


def test_the_list_pages_and_costs_a_fixed_number_of_queries(client_for, org, django_assert_max_num_queries):
    api = client_for(org.users.admin)
    for i in range(7):
        create(api, org, name=f"volume-{i}")
    first = api.get(BASE, {"requestType": "Originated", "limit": "5", "sortBy": "name", "sortOrder": "desc"})
    assert [d["name"] for d in first.json()["datavolumes"]] == [f"volume-{i}" for i in (6, 5, 4, 3, 2)]
    assert first.json()["next"] == 5
    rest = api.get(BASE, {"requestType": "Originated", "limit": "5", "offset": "5", "sortBy": "name",
                          "sortOrder": "desc"})
    assert [d["name"] for d in rest.json()["datavolumes"]] == ["volume-1", "volume-0"] and "next" not in rest.json()
    with django_assert_max_num_queries(6):
        assert len(api.get(BASE, {"requestType": "Originated"}).json()["datavolumes"]) == 7
