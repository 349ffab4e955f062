"""Client URLs: a project-scoped, expiring, revocable base URL that a Kit client without a token header takes as
its app and stream server; CORS on the Kit APIs, with preflights answered before authentication."""

import io
import logging
import logging.config
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from kit.models import ClientUrl, StreamSession
from studio.logs import logging_config
from studio.models import AccessRule
from tests.kit.conftest import VALIDATION, error, errors, fields_of
from workloads.models import Workload

pytestmark = pytest.mark.django_db
ORIGIN = "http://viewer.example:5173"


def make(api, project, **body) -> dict:
    response = api.post("/api/v1/kit/client-urls", {"projectId": project.pk, "name": "viewer", **body}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def base_of(created: dict) -> str:
    """The path part of the URL, as a client appends `/cfg/apps` to it."""
    return created["url"].split("testserver", 1)[1]


@pytest.fixture
def member(client_for, org):
    return client_for(org.users.member)


def test_a_client_url_is_made_once_and_listed_without_its_token(member, org, kit):
    created = make(member, org.a)
    assert created["url"].startswith("http://testserver/kit-client/kcu_") and not created["url"].endswith("/")
    assert (created["projectId"], created["projectName"], created["active"]) == (org.a.pk, "alpha", True)
    token = created["url"].rsplit("/", 1)[1]
    listed = member.get("/api/v1/kit/client-urls").json()
    assert listed["count"] == 1 and "url" not in listed["items"][0] and token not in str(listed)
    assert member.get(f"/api/v1/kit/client-urls/{created['id']}").json()["hint"] == token[:8]
    assert token not in str(ClientUrl.objects.values())  # only its digest is kept


def test_a_client_url_reaches_the_kit_apis_without_a_header(anon, member, org, kit):
    base = base_of(make(member, org.a))
    apps = anon.get(f"{base}/cfg/apps")
    assert apps.status_code == 200 and [a["id"] for a in apps.json()["items"]] == ["composer", "usd-viewer"]
    assert [v["version"] for v in anon.get(f"{base}/cfg/apps/usd-viewer/versions").json()["items"]][0] == "1.1.0"
    profiles = anon.get(f"{base}/cfg/apps/usd-viewer/versions/1.0.0/profiles").json()
    assert [p["id"] for p in profiles["items"]] == ["a-private", "default", "high-mem"]  # those alpha may use
    assert anon.get(f"{base}/streaming/stream").json()["count"] == 0
    created = anon.post(f"{base}/streaming/stream", {"id": "usd-viewer", "version": "1.0.0", "profile": "high-mem"},
                        format="json")
    assert created.status_code == 202, created.json()
    body = created.json()
    assert (body["projectId"], body["projectChosenBy"]) == (org.a.pk, "clientUrl")
    assert created["Location"] == f"{base}/streaming/stream/{body['id']}"
    session = Workload.objects.get(pk=body["id"])
    assert (session.project, session.created_by) == (org.a, org.users.member)  # as the URL's maker
    assert anon.get(f"{base}/streaming/stream/{body['id']}").status_code == 202
    assert anon.delete(f"{base}/streaming/stream", {"id": body["id"]}, format="json").status_code == 204
    assert Workload.objects.get(pk=body["id"]).desired_phase == "Deleted"


def test_a_client_url_reaches_nothing_else(anon, member, client_for, org, kit):
    base = base_of(make(member, org.a))
    error(anon.post(f"{base}/cfg/apps", {"id": "x", "name": "X"}, format="json"), 403, errors.CLIENT_URL_READS_ONLY)
    error(anon.delete(f"{base}/cfg/profiles/default"), 403, errors.CLIENT_URL_READS_ONLY)
    assert anon.get(f"{base}/api/v1/org-unit/projects").status_code == 404
    assert anon.get(f"{base}/cfg/profiles/composer-only").status_code == 404  # beta's, unshared
    error(anon.post(f"{base}/streaming/stream", {"id": "composer", "profile": "composer-only"}, format="json"), 404,
          errors.PROFILE_NOT_FOUND)
    body = error(anon.post(f"{base}/streaming/stream", {"id": "usd-viewer", "profile": "default",
                                                        "projectId": org.b.pk}, format="json"), 422, VALIDATION)
    assert fields_of(body) == {"projectId"} and "alpha" in body["details"]
    # Sessions the maker started elsewhere are not the client URL's
    other = client_for(org.users.member).post("/streaming/stream", {"id": "usd-viewer", "profile": "default"},
                                              format="json").json()["id"]
    assert anon.get(f"{base}/streaming/stream").json()["count"] == 0
    error(anon.get(f"{base}/streaming/stream/{other}"), 404, errors.SESSION_NOT_FOUND)


def test_an_expired_revoked_or_unknown_client_url_is_401(anon, member, client_for, org, kit):
    created = make(member, org.a)
    base = base_of(created)
    assert anon.get(f"{base}/cfg/apps").status_code == 200
    ClientUrl.objects.filter(pk=created["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert anon.get(f"{base}/cfg/apps").status_code == 401
    second = make(member, org.a)
    assert client_for(org.users.other).delete(f"/api/v1/kit/client-urls/{second['id']}").status_code == 404
    assert client_for(org.users.viewer).delete(f"/api/v1/kit/client-urls/{second['id']}").status_code == 404
    assert client_for(org.users.admin).delete(f"/api/v1/kit/client-urls/{second['id']}").status_code == 204
    response = anon.get(f"{base_of(second)}/streaming/stream")
    assert response.status_code == 401 and response.json()["detail"].startswith("This client URL is not valid")
    assert anon.get("/kit-client/kcu_nope/cfg/apps").status_code == 401
    assert member.get(f"/api/v1/kit/client-urls/{second['id']}").json()["active"] is False


def test_a_client_url_stops_when_its_maker_may_no_longer_launch(anon, member, org, kit):
    base = base_of(make(member, org.a))
    AccessRule.objects.filter(user=org.users.member, project=org.a).delete()  # no longer in alpha
    response = anon.get(f"{base}/cfg/apps")
    assert response.status_code == 401 and "may no longer launch streams in project alpha" in response.json()["detail"]


@pytest.mark.parametrize("body,field", [
    ({"projectId": "x"}, "projectId"), ({"expiresInSeconds": 10}, "expiresInSeconds"),
    ({"expiresInSeconds": 91 * 86400}, "expiresInSeconds"), ({"name": ""}, "name"),
])
def test_bad_client_url_requests_name_the_field(member, org, kit, body, field):
    response = member.post("/api/v1/kit/client-urls", {"projectId": org.a.pk, "name": "v", **body}, format="json")
    assert response.status_code == 400 and {e["field"] for e in response.json()["errors"]} == {field}


def test_a_viewer_may_not_make_one_and_a_stranger_gets_404(client_for, org, kit):
    viewer = client_for(org.users.viewer).post("/api/v1/kit/client-urls", {"projectId": org.a.pk, "name": "v"},
                                               format="json")
    assert viewer.status_code == 403
    stranger = client_for(org.users.other).post("/api/v1/kit/client-urls", {"projectId": org.a.pk, "name": "v"},
                                                format="json")
    assert stranger.status_code == 400 and stranger.json()["errors"][0]["field"] == "projectId"


def test_the_token_never_reaches_the_log(member, anon, org, kit, settings):
    """Neither the request lines (studio.request, DEBUG) nor runserver's own (django.server: its errors) nor Django's
    error lines."""
    token = make(member, org.a)["url"].rsplit("/", 1)[1]
    out = io.StringIO()
    logging.config.dictConfig(logging_config(level="DEBUG", fmt="json"))
    try:
        for name in ("", "django.server"):
            for handler in logging.getLogger(name).handlers:
                handler.setStream(out)
        anon.get(f"/kit-client/{token}/cfg/apps")
        anon.get(f"/kit-client/{token}/nothing-here")
        logging.getLogger("django.server").error('"GET /kit-client/%s/cfg/nope HTTP/1.1" 500 0', token)
        logging.getLogger("django.request").error("Not Found: /kit-client/%s/cfg/nope", token)
    finally:
        logging.config.dictConfig(settings.LOGGING)
    text = out.getvalue()
    assert text.count("kcu_[redacted]") >= 4 and token not in text and token[4:20] not in text, text


@override_settings(CORS_ALLOWED_ORIGINS=[ORIGIN])
def test_preflights_are_answered_without_credentials_and_answers_carry_cors(anon, member, org, kit):
    base = base_of(make(member, org.a))
    for path in ("/cfg/apps", "/streaming/stream", f"{base}/cfg/apps", f"{base}/streaming/stream"):
        preflight = anon.options(path, HTTP_ORIGIN=ORIGIN, HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST",
                                 HTTP_ACCESS_CONTROL_REQUEST_HEADERS="content-type")
        assert preflight.status_code == 200, (path, preflight.status_code)
        assert preflight["Access-Control-Allow-Origin"] == ORIGIN
        assert "content-type" in preflight["Access-Control-Allow-Headers"]
        assert "DELETE" in preflight["Access-Control-Allow-Methods"]
    answer = anon.get(f"{base}/cfg/apps", HTTP_ORIGIN=ORIGIN)
    assert answer.status_code == 200 and answer["Access-Control-Allow-Origin"] == ORIGIN
    assert "Access-Control-Allow-Credentials" not in answer
    refused = anon.get("/cfg/apps", HTTP_ORIGIN=ORIGIN)  # no credentials: a 401 the browser can read
    assert refused.status_code == 401 and refused["Access-Control-Allow-Origin"] == ORIGIN
    other = anon.options("/cfg/apps", HTTP_ORIGIN="http://elsewhere.example",
                         HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET")
    assert "Access-Control-Allow-Origin" not in other
    api = anon.options("/api/v1/org-unit/projects", HTTP_ORIGIN=ORIGIN, HTTP_ACCESS_CONTROL_REQUEST_METHOD="GET")
    assert "Access-Control-Allow-Origin" not in api  # CORS is for the Kit APIs only


def test_session_rows_keep_the_client_url(anon, member, org, kit):
    created = make(member, org.a)
    body = anon.post(f"{base_of(created)}/streaming/stream", {"id": "usd-viewer", "profile": "default"},
                     format="json").json()
    assert str(StreamSession.objects.get(pk=body["id"]).client_url_id) == created["id"]
