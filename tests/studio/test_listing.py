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


def _filter_set_classes():
    from studio.listing import StudioFilterSet

    found, pending = [], [StudioFilterSet]
    while pending:
        for subclass in pending.pop().__subclasses__():
            pending.append(subclass)
            if subclass._meta.model is not None:
                found.append(subclass)
    return found


def test_a_plain_list_is_filtered_as_a_filter_set_of_its_parameters_filters_it(rf):
    # A request naming only offset and limit goes through one filter set of no data per class (studio.listing.
    # FilterBackend): for every filter set, the same query as django-filter's own backend builds.
    from django_filters.rest_framework import DjangoFilterBackend
    from rest_framework.request import Request

    from studio.listing import FilterBackend

    classes = _filter_set_classes()
    assert len(classes) >= 10, classes
    own = frozenset({"projectId", "search"})  # a view's own parameter that is also a filter stays a filter
    for query in ("", "?limit=2&offset=1", "?projectId=3&limit=2", "?projectId=3&search=a"):
        request = Request(rf.get("/x" + query))
        for filterset_class in classes:
            view = type("View", (), {"filterset_class": filterset_class, "own_query_params": own})()
            queryset = filterset_class._meta.model._default_manager.all()
            fast = FilterBackend().filter_queryset(request, queryset, view)
            plain = DjangoFilterBackend().filter_queryset(request, queryset, view)
            assert str(fast.query) == str(plain.query), filterset_class.__name__


def test_a_list_naming_any_other_parameter_is_filtered_by_it(client_for, projects):
    admin = client_for(projects.users.platform_admin)
    assert names(admin.get("/api/v1/org-unit/projects?limit=5")) == ["alpha", "beta", "delta", "epsilon", "gamma"]
    assert names(admin.get("/api/v1/org-unit/projects?limit=5&search=ALP")) == ["alpha"]
    assert admin.get("/api/v1/org-unit/projects?limit=5&sortOrder=up").status_code == 400
