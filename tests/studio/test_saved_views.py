"""Filter chips and saved views on the lists of the table component, through HTTP: the URL's filters shown as
chips that each drop one filter, a view saved under a name (the user's own, replaced under the same name,
refused with each problem named), listed on its list as a link that reproduces the list for anyone, deleted only
by its owner; the list page's queries do not grow with its rows or views."""

import re
from html import unescape

import pytest

from studio.models import SavedView
from tests.browser.test_workload_pages import make_workload
from tests.factories import DepartmentFactory

pytestmark = pytest.mark.django_db


def chips(html: str) -> dict[str, str]:
    """{chip's words: the URL that removes it}."""
    found = re.findall(r'<span class="badge bg-azure-lt filter-chip" data-chip>(.*?)<a href="([^"]*)"', html)
    return {unescape(label).strip(): unescape(url) for label, url in found}


def names(html: str) -> list[str]:
    return re.findall(r'<a href="/workloads/[0-9a-f-]{36}">([^<]+)</a>', html)


@pytest.fixture
def listed(org):
    make_workload(org, name="train-a")
    make_workload(org, name="train-b", actual_phase="Pending")
    make_workload(org, name="serve-c", kind="inference", actual_phase="Pending")
    return org


def test_each_filter_of_the_url_is_a_chip_that_removes_it_alone(client, listed):
    client.force_login(listed.users.member)
    html = client.get("/workloads?filterBy=phase%3D%3DPending&filterBy=type%3D%3Dtraining&search=train"
                      "&sortBy=name&offset=0").content.decode()
    assert names(html) == ["train-b"]
    found = chips(html)
    assert set(found) == {"Phase is Pending", "Type is training", "Search: train"}
    # removing one chip keeps the others and the order, and starts on the first page
    without_phase = client.get("/workloads" + found["Phase is Pending"]).content.decode()
    assert "filterBy=type%3D%3Dtraining" in found["Phase is Pending"] and "sortBy=name" in found["Phase is Pending"]
    assert "offset" not in found["Phase is Pending"]
    assert sorted(names(without_phase)) == ["train-a", "train-b"]
    assert set(chips(without_phase)) == {"Type is training", "Search: train"}
    # a comma list in one parameter is a chip per filter
    html = client.get("/workloads?filterBy=phase%3D%3DPending,type%3D%3Dinference").content.decode()
    found = chips(html)
    assert set(found) == {"Phase is Pending", "Type is inference"}
    assert sorted(names(client.get("/workloads" + found["Type is inference"]).content.decode())) == ["serve-c", "train-b"]
    # no filter, no chips; blanks of the filter form ("Any type") are none
    assert chips(client.get("/workloads?filterBy=&search=").content.decode()) == {}


def test_a_saved_view_is_listed_as_its_link_and_reproduces_the_list(client, listed):
    client.force_login(listed.users.member)
    query = "filterBy=phase%3D%3DPending&sortBy=name&sortOrder=desc&offset=25"
    response = client.post("/account/views", {"path": "/workloads", "name": "  Waiting   ones ", "query": query})
    assert response.status_code == 302
    view = SavedView.objects.get()
    assert (view.user, view.path, view.name) == (listed.users.member, "/workloads", "Waiting ones")
    assert view.query == "filterBy=phase%3D%3DPending&sortBy=name&sortOrder=desc"  # the page is not part of it
    assert response["Location"] == "/workloads?" + view.query
    page = client.get("/workloads").content.decode()
    assert f'href="/workloads?{view.query.replace("&", "&amp;")}" data-saved-view>Waiting ones</a>' in page
    mine = names(client.get(response["Location"]).content.decode())
    assert mine == ["train-b", "serve-c"]
    # the same name again replaces it
    client.post("/account/views", {"path": "/workloads", "name": "Waiting ones", "query": "filterBy=type%3D%3Dinference"})
    assert list(SavedView.objects.values_list("name", "query")) == [("Waiting ones", "filterBy=type%3D%3Dinference")]
    # the link alone shows a teammate the same list (shareable); the view itself is not theirs
    client.force_login(listed.users.admin)
    assert names(client.get(response["Location"]).content.decode()) == mine
    assert "data-saved-view" not in client.get("/workloads").content.decode()


def test_views_are_kept_per_list(client, org):
    for name in ("dept-2", "dept-10"):
        DepartmentFactory(name=name)
    client.force_login(org.users.platform_admin)
    client.post("/account/views", {"path": "/org/departments", "name": "Depts", "query": "search=dept-"})
    page = client.get("/org/departments").content.decode()
    assert 'data-saved-view>Depts</a>' in page
    assert set(chips(client.get("/org/departments?search=dept-").content.decode())) == {"Search: dept-"}
    assert "data-saved-view" not in client.get("/workloads").content.decode()


@pytest.mark.parametrize(("fields", "problem"), [
    ({"path": "/workloads", "name": "   ", "query": "search=a"}, "name: Give the view a name."),
    ({"path": "/workloads", "name": "x" * 61, "query": ""}, "name: At most 60 characters."),
    ({"path": "https://evil.example/x", "name": "v", "query": ""}, "path: Not a page of this site."),
    ({"path": "/\\evil.example/x", "name": "v", "query": ""}, "path: Not a page of this site."),
    ({"path": "/no/such/page", "name": "v", "query": ""}, "path: Not a page of this site."),
    ({"path": "/workloads", "name": "v", "query": "search=" + "a" * 2100}, "query: The filters are too long"),
])
def test_a_bad_view_is_refused_naming_the_problem(client, org, fields, problem):
    client.force_login(org.users.member)
    response = client.post("/account/views", {**fields, "next": "/workloads?search=a"}, follow=True)
    assert response.status_code == 200
    assert problem in unescape(response.content.decode())
    assert not SavedView.objects.exists()
    back = client.post("/account/views", fields)  # no `next`: back on the list, or home, never another host
    assert back["Location"] in ("/workloads", "/")


def test_only_its_owner_deletes_a_view(client, org):
    view = SavedView.objects.create(user=org.users.member, path="/workloads", name="mine", query="search=a")
    client.force_login(org.users.other)
    assert client.post(f"/account/views/{view.pk}/delete").status_code == 404
    assert client.post("/account/views/999999/delete").status_code == 404
    assert client.get(f"/account/views/{view.pk}/delete").status_code == 405
    client.force_login(org.users.member)
    response = client.post(f"/account/views/{view.pk}/delete", {"next": "/workloads"})
    assert (response.status_code, response["Location"]) == (302, "/workloads")
    assert not SavedView.objects.exists()
    client.logout()
    assert client.post("/account/views", {"path": "/workloads", "name": "v"}).status_code == 302  # to the login
    assert not SavedView.objects.exists()


def test_the_list_page_reads_the_same_queries_for_few_and_many_rows_and_views(client, org, django_assert_num_queries):
    client.force_login(org.users.member)
    path = "/workloads?filterBy=phase%3D%3DRunning&search=t"
    make_workload(org, name="t-0")
    SavedView.objects.create(user=org.users.member, path="/workloads", name="v0", query="search=t")
    client.get(path)  # the session's first read
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as few:
        client.get(path)
    for index in range(1, 25):
        make_workload(org, name=f"t-{index}")
        SavedView.objects.create(user=org.users.member, path="/workloads", name=f"v{index}", query="search=t")
    with django_assert_num_queries(len(few.captured_queries)):
        html = client.get(path).content.decode()
    assert len(names(html)) == 25 and html.count("data-saved-view") == 25
