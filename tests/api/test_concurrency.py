"""Optimistic concurrency (issue 8) on service profiles, environment templates, their versions and Kit app
profiles, as on projects: a GET answers an ETag, a write whose If-Match names an older one is a 412 and
changes nothing, and a write answers the ETag that the next If-Match must name."""

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from tests.factories import TemplateVersionFactory


@dataclass
class Kind:
    url: Callable  # world -> URL of one object
    change: Callable  # n -> a PATCH body that sets a readable field to a value unique to n
    read: Callable  # the GET body -> that field's value
    put: Callable | None = None  # world -> a valid PUT body (without the field), where the route has PUT


def _draft_version(world) -> str:
    TemplateVersionFactory(template=world.template, version="2.0.0", state="draft")
    return f"/api/v1/environment-templates/{world.template.pk}/versions/2.0.0"


KINDS = {
    "service profile": Kind(
        url=lambda w: f"/api/v1/service-profiles/{w.profile.pk}",
        change=lambda n: {"description": f"take {n}"}, read=lambda body: body["description"],
        put=lambda w: {"name": w.profile.name, "environmentTemplate": w.profile.template_version.template.name,
                       "environmentTemplateVersion": w.profile.template_version.version, "serviceType": "jobs"}),
    "environment template": Kind(
        url=lambda w: f"/api/v1/environment-templates/{w.template.pk}",
        change=lambda n: {"description": f"take {n}"}, read=lambda body: body["description"],
        put=lambda w: {"name": w.template.name}),
    "template version": Kind(
        url=_draft_version,
        change=lambda n: {"specTemplate": {"image": f"python:3.{n}"}}, read=lambda body: body["specTemplate"]["image"],
        put=lambda w: {"version": "2.0.0", "kind": "training"}),
    "kit app profile": Kind(
        url=lambda w: f"/cfg/profiles/{w.kit_profile.slug}",
        change=lambda n: {"name": f"take {n}"}, read=lambda body: body["name"],
        put=lambda w: {"supportedApplications": [{"name": "*", "versions": ["*"]}]}),
}


@pytest.fixture
def root(client_for, world):
    return client_for(world.org.users.platform_admin)


def _patch(api, url, body, etag):
    return api.patch(url, body, format="json", HTTP_IF_MATCH=etag)


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_a_write_with_the_current_etag_succeeds_and_one_with_a_stale_etag_is_a_412(kind, root, world):
    url = kind.url(world)
    read = root.get(url)
    assert read.status_code == 200 and read["ETag"].startswith('"')

    first = _patch(root, url, kind.change(1), read["ETag"])
    assert first.status_code == 200, first.json()
    assert first["ETag"] != read["ETag"]
    assert root.get(url)["ETag"] == first["ETag"]  # the answer names what the next If-Match must

    stale = _patch(root, url, kind.change(2), read["ETag"])
    assert stale.status_code == 412
    assert stale.json()["code"] == 412 and stale.json()["message"]
    assert kind.read(root.get(url).json()) == kind.read(first.json())  # nothing changed

    assert _patch(root, url, kind.change(3), first["ETag"]).status_code == 200
    assert _patch(root, url, kind.change(4), None).status_code == 200  # without If-Match: last write wins


@pytest.mark.parametrize("kind", [k for k in KINDS.values() if k.put], ids=[n for n, k in KINDS.items() if k.put])
def test_a_put_with_a_stale_etag_is_a_412_and_one_with_the_current_etag_is_not(kind, root, world):
    url = kind.url(world)
    etag = root.get(url)["ETag"]
    assert _patch(root, url, kind.change(1), etag).status_code == 200
    body = {**kind.put(world), **kind.change(2)}
    assert root.put(url, body, format="json", HTTP_IF_MATCH=etag).status_code == 412
    current = root.get(url)["ETag"]
    assert root.put(url, body, format="json", HTTP_IF_MATCH=current).status_code == 200


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS.keys())
def test_a_delete_with_a_stale_etag_is_a_412_and_deletes_nothing(kind, root, world):
    url = kind.url(world)
    etag = root.get(url)["ETag"]
    assert _patch(root, url, kind.change(1), etag).status_code == 200
    assert root.delete(url, HTTP_IF_MATCH=etag).status_code == 412
    assert root.get(url).status_code == 200
    assert root.delete(url, HTTP_IF_MATCH=root.get(url)["ETag"]).status_code == 204


@pytest.mark.parametrize("url", ["/api/v1/environment-templates/{template}", "/api/v1/service-profiles/{profile}"])
def test_sharing_with_other_projects_changes_the_etag_and_honours_if_match(url, root, world):
    """The selected projects live outside the row: the ETag covers them too."""
    url = url.format(template=world.template.pk, profile=world.profile.pk)
    org = world.org
    assert root.put(url + "/sharing", {"mode": "selected", "projectIds": [org.a.pk]}, format="json").status_code == 200
    before = root.get(url)["ETag"]
    both = {"mode": "selected", "projectIds": [org.a.pk, org.b.pk]}
    assert root.put(url + "/sharing", both, format="json", HTTP_IF_MATCH=before).status_code == 200
    after = root.get(url)["ETag"]
    assert after != before
    assert root.put(url + "/sharing", {"mode": "none"}, format="json", HTTP_IF_MATCH=before).status_code == 412


def test_kit_errors_keep_their_detail_on_a_412(root, world):
    url = f"/cfg/profiles/{world.kit_profile.slug}"
    etag = root.get(url)["ETag"]
    assert _patch(root, url, {"name": "renamed"}, etag).status_code == 200
    body = _patch(root, url, {"name": "again"}, etag).json()
    assert body["code"] == 412 and body["detail"] == body["message"]


def test_a_caller_who_may_not_write_gets_403_whatever_the_etag(client_for, world):
    url = f"/api/v1/service-profiles/{world.profile.pk}"
    member = client_for(world.org.users.member)
    assert _patch(member, url, {"description": "x"}, '"stale"').status_code == 403
