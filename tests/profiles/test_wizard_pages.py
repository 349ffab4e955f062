"""The profile wizard's pages: Try it on the last step saves what that step chose (and leaves a draft a draft);
the first step proposes the service type of the chosen template version's kind."""

import pytest

from profiles import services
from profiles.models import ServiceProfile

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client, org):
    client.force_login(org.users.platform_admin)
    return client


def test_try_it_on_the_sharing_step_keeps_the_choice_and_opens_the_preview(admin, org, make_profile):
    draft = make_profile("half-done", draft_step="sharing")
    page = admin.get(f"/studio/service-profiles/{draft.pk}/edit/sharing")
    assert b'name="then" value="try"' in page.content  # Try it submits the step, it is not a plain link

    answer = admin.post(f"/studio/service-profiles/{draft.pk}/edit/sharing",
                        {"mode": "selected", "projectIds": [str(org.b.pk)], "then": "try"})
    assert answer.status_code == 302
    assert answer.url == f"/studio/service-profiles/{draft.pk}/try"
    draft.refresh_from_db()
    assert draft.sharing_mode == "selected"
    assert list(draft.shared_with.values_list("pk", flat=True)) == [org.b.pk]
    assert draft.is_draft  # trying is not finishing


def test_the_service_type_follows_the_version_kind_when_none_is_chosen(admin, org, template, version):
    workspace = services.version_create(actor=org.users.platform_admin, template=template, version="2.0.0",
                                        state="active", kind="workspace", spec_template={"image": "jupyter"},
                                        variables=[], outputs=[])
    options = admin.get("/studio/service-profiles/version-options", {"environmentTemplate": template.name})
    assert b'data-kind="workspace"' in options.content and b'data-kind="training"' in options.content

    for name, chosen, expected in (("notebook-one", workspace.version, "notebook"), ("trainer-one", "1.0.0", "jobs")):
        answer = admin.post("/studio/service-profiles/new", {
            "name": name, "environmentTemplate": template.name, "environmentTemplateVersion": chosen,
            "serviceType": "", "projectId": "", "displayName": "", "description": ""})
        assert answer.status_code == 302, [line for line in answer.content.decode().splitlines() if "error" in line]
        assert ServiceProfile.objects.get(name=name).service_type == expected
    # a type the admin chose stays hers
    admin.post("/studio/service-profiles/new", {"name": "custom-one", "environmentTemplate": template.name,
                                                "environmentTemplateVersion": workspace.version,
                                                "serviceType": "custom", "projectId": "", "displayName": "", "description": ""})
    assert ServiceProfile.objects.get(name="custom-one").service_type == "custom"
