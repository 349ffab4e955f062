"""sharing: one mechanism for every shareable kind; "what may project P see" in one query."""

import pytest
from django.core.exceptions import ValidationError

from profiles.models import EnvironmentTemplate, ServiceProfile
from sharing.services import sharing_set
from tests.factories import (
    EnvironmentTemplateFactory,
    MembershipFactory,
    ServiceProfileFactory,
    TemplateVersionFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows(org, project_c):
    version = TemplateVersionFactory()
    return {
        "owned-by-a": ServiceProfileFactory(template_version=version, owner_project=org.a),
        "all": ServiceProfileFactory(template_version=version, owner_project=org.b, sharing_mode="all"),
        "selected-a-c": ServiceProfileFactory(template_version=version, sharing_mode="selected",
                                              shared_with=[org.a, project_c]),
        "selected-b": ServiceProfileFactory(template_version=version, sharing_mode="selected", shared_with=[org.b]),
        "none": ServiceProfileFactory(template_version=version, owner_project=org.b),
        # `selected` rows left over from an earlier mode count only while the mode is selected
        "stale": ServiceProfileFactory(template_version=version, sharing_mode="none", shared_with=[org.a]),
    }


def names(queryset, rows):
    by_pk = {row.pk: name for name, row in rows.items()}
    return sorted(by_pk[pk] for pk in queryset.values_list("pk", flat=True))


def test_for_project_in_one_query(org, project_c, rows, django_assert_num_queries):
    with django_assert_num_queries(1):
        assert names(ServiceProfile.objects.for_project(org.a), rows) == ["all", "owned-by-a", "selected-a-c"]
    assert names(ServiceProfile.objects.for_project(org.b.pk), rows) == ["all", "none", "selected-b"]
    assert names(ServiceProfile.objects.for_project(project_c), rows) == ["all", "selected-a-c"]
    assert names(ServiceProfile.objects.for_projects([org.a.pk, org.b.pk]), rows) == [
        "all", "none", "owned-by-a", "selected-a-c", "selected-b"]


def test_visible_to_is_what_any_of_the_users_projects_may_see(org, rows):
    MembershipFactory(user=org.users.other, project=org.a, role="viewer")
    assert names(ServiceProfile.objects.visible_to(org.users.member), rows) == ["all", "owned-by-a", "selected-a-c"]
    assert len(names(ServiceProfile.objects.visible_to(org.users.other), rows)) == 5
    assert len(names(ServiceProfile.objects.visible_to(org.users.platform_admin), rows)) == 6


def test_the_same_mechanism_serves_templates(org):
    shared = EnvironmentTemplateFactory(sharing_mode="selected")
    shared.shared_with.set([org.b])
    EnvironmentTemplateFactory(owner_project=org.a)
    assert list(EnvironmentTemplate.objects.for_project(org.b)) == [shared]


def test_sharing_set_names_every_unknown_project_and_refuses_ids_without_selected(org):
    row = ServiceProfileFactory(template_version=TemplateVersionFactory())
    with pytest.raises(ValidationError) as raised:
        sharing_set(actor=org.users.platform_admin, obj=row, mode="selected", project_ids=[org.a.pk, 998, 999])
    assert raised.value.message_dict == {"projectIds": ["No such projects: 998, 999."]}
    with pytest.raises(ValidationError):
        sharing_set(actor=org.users.platform_admin, obj=row, mode="all", project_ids=[org.a.pk])
    sharing_set(actor=org.users.platform_admin, obj=row, mode="selected", project_ids=[org.b.pk, org.a.pk, org.a.pk])
    assert row.sharing() == {"mode": "selected", "projectIds": sorted([org.a.pk, org.b.pk])}


def test_selected_with_no_project_is_refused_by_the_service_and_both_apis(org, client_for):
    """'Selected projects' and none chosen would share with nobody while saying otherwise: a 400 naming projectIds."""
    row = ServiceProfileFactory(template_version=TemplateVersionFactory(), owner_project=org.a)
    with pytest.raises(ValidationError) as raised:
        sharing_set(actor=org.users.platform_admin, obj=row, mode="selected", project_ids=[])
    assert list(raised.value.message_dict) == ["projectIds"]
    api = client_for(org.users.platform_admin)
    response = api.put(f"/api/v1/service-profiles/{row.pk}/sharing", {"mode": "selected", "projectIds": []},
                       format="json")
    assert response.status_code == 400, response.content
    assert "projectIds" in response.content.decode() and "at least one project" in response.content.decode()
    response = api.post("/cfg/profiles", {"id": "kit-p", "name": "P", "supportedApplications": [
        {"name": "*", "versions": ["*"]}], "sharing": {"mode": "selected"}}, format="json")
    assert response.status_code == 422, response.content  # Kit's status for a request that does not validate
    assert "at least one project" in response.content.decode()
    row.refresh_from_db()
    assert row.sharing() == {"mode": "none", "projectIds": []}
