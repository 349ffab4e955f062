import pytest

from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def projects(org):
    for name in ["gamma", "delta", "epsilon"]:
        ProjectFactory(name=name, department=org.department, cluster=org.cluster)
    return org


def names(response):
    assert response.status_code == 200, response.json()
    return [p["name"] for p in response.json()["projects"]]


@pytest.mark.parametrize(
    "query,expected",
    [
        ("", ["alpha", "beta", "delta", "epsilon", "gamma"]),
        ("?sortBy=name&sortOrder=desc", ["gamma", "epsilon", "delta", "beta", "alpha"]),
        ("?filterBy=name==beta", ["beta"]),
        ("?filterBy=name!=beta", ["alpha", "delta", "epsilon", "gamma"]),
        ("?filterBy=name=@lt", ["delta"]),
        ("?filterBy=name!@a", ["epsilon"]),
        ("?filterBy=name=^e", ["epsilon"]),
        ("?filterBy=name=$a&filterBy=name!=beta", ["alpha", "delta", "gamma"]),
        ("?filterBy=name>=delta&filterBy=name<=gamma", ["delta", "epsilon", "gamma"]),
        ("?search=ALP", ["alpha"]),
        ("?limit=2", ["alpha", "beta"]),
        ("?limit=2&offset=4", ["gamma"]),
    ],
)
def test_list_conventions(client_for, projects, query, expected):
    assert names(client_for(projects.users.platform_admin).get("/api/v1/org-unit/projects" + query)) == expected


def test_next_offset(client_for, projects):
    api = client_for(projects.users.platform_admin)
    assert api.get("/api/v1/org-unit/projects?limit=2").json()["next"] == 2
    # Run:ai types `next` as an integer: its lists leave it out on the last page
    assert "next" not in api.get("/api/v1/org-unit/projects?limit=2&offset=4").json()


@pytest.mark.parametrize(
    "query,field",
    [
        ("?limit=0", "limit"),
        ("?limit=501", "limit"),
        ("?limit=x", "limit"),
        ("?offset=-1", "offset"),
        ("?sortBy=password", "sortBy"),
        ("?sortOrder=up", "sortOrder"),
        ("?filterBy=secret==1", "filterBy"),
        ("?filterBy=name", "filterBy"),
        ("?filterBy=createdAt>=yesterday", "filterBy"),
    ],
)
def test_bad_list_parameters_are_400_naming_the_parameter(client_for, projects, query, field):
    response = client_for(projects.users.platform_admin).get("/api/v1/org-unit/projects" + query)
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == [field]
