"""Portal pages of Kit App Streaming through Django's test client: status, content, visibility."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from kit.matching import is_version
from workloads.models import Workload

pytestmark = pytest.mark.django_db


def browser(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page(client, name, *args, status=200) -> str:
    response = client.get(reverse(name, args=args))
    assert response.status_code == status
    return response.content.decode()


@pytest.mark.parametrize("name,args", [("kit-apps", ()), ("kit-app", ("usd-viewer",)), ("kit-profiles", ()),
                                       ("kit-profile", ("default",)), ("kit-sessions", ())])
def test_pages_need_a_login(kit, name, args):
    response = Client().get(reverse(name, args=args))
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


def test_apps_list_and_search(org, kit):
    client = browser(org.users.member)
    html = page(client, "kit-apps")
    assert "USD Viewer" in html and "USD Composer" in html and reverse("kit-app", args=["usd-viewer"]) in html
    assert "1.1.0" in html  # the newest version of usd-viewer
    html = client.get(reverse("kit-apps") + "?search=composer").content.decode()
    assert "USD Composer" in html and "USD Viewer" not in html


def test_app_detail_lists_versions_newest_first_and_visible_profiles(org, kit):
    html = page(browser(org.users.member), "kit-app", "usd-viewer")
    cells = [c for c in re.findall(r"<td>([^ <]+)", html) if is_version(c)]
    assert cells == ["1.1.0", "1.1.0-rc.1", "1.0.0"]
    assert "nvcr.io/nvidia/omniverse/usd-viewer:1.1.0" in html
    assert "High memory profile" in html and "composer-only" not in html
    assert "composer-only" in page(browser(org.users.other), "kit-app", "composer")
    page(browser(org.users.member), "kit-app", "nope", status=404)


def test_profiles_follow_sharing(org, kit):
    html = page(browser(org.users.member), "kit-profiles")
    assert "high-mem" in html and "composer-only" not in html
    html = page(browser(org.users.other), "kit-profiles")
    assert "composer-only" in html and "high-mem" not in html
    page(browser(org.users.other), "kit-profile", "high-mem", status=404)
    assert "No application profiles" in page(browser(kit.loner), "kit-profiles")


def test_profile_detail_shows_the_deployment(org, kit):
    kit.profiles.high_mem.node_selector = {"nvidia.com/gpu.product": "NVIDIA-L40S"}
    kit.profiles.high_mem.encryption, kit.profiles.high_mem.tls_secret = "pod", "stream-tls"
    kit.profiles.high_mem.save()
    html = page(browser(org.users.member), "kit-profile", "high-mem")
    for text in ("High memory profile", "cpuMemoryRequest: 64Gi", "nvidia.com/gpu.product=NVIDIA-L40S", "stream-tls",
                 "LoadBalancer", "signaling: 49100", "usd-viewer"):
        assert text in html, text


def test_sessions_page_shows_status_and_routes(client_for, org, kit):
    api = client_for(org.users.member)
    first = api.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json").json()["id"]
    second = api.post("/streaming/stream", {"id": "composer", "profile": "default"}, format="json").json()["id"]
    Workload.objects.filter(pk=first).update(actual_phase="Running", endpoints={
        "serviceAddress": "25.124.78.14", "serviceType": "LoadBalancer",
        "ports": [{"name": "port-49100", "port": 49100, "nodePort": 32452}]})
    html = page(browser(org.users.member), "kit-sessions")
    assert first in html and second in html
    assert 'data-phase="Running">Running</span>' in html and "Session is active" in html
    assert "25.124.78.14:49100</code> signaling" in html
    assert 'data-phase="Creating">Creating</span>' in html
    assert first not in page(browser(org.users.other), "kit-sessions")


def test_a_member_starts_and_stops_a_session_from_the_page(org, kit):
    client = browser(org.users.member)
    html = page(client, "kit-sessions")
    assert 'hx-trigger="every 2s' in html and 'name="profile"' in html
    done = client.post(reverse("kit-sessions"), {"application": "usd-viewer", "profile": "high-mem", "version": ""},
                       follow=True).content.decode()
    assert "Not started" in done and "toast-error" in done  # high-mem serves usd-viewer 1.0.0 only
    done = client.post(reverse("kit-sessions"), {"application": "usd-viewer", "profile": "high-mem",
                                                 "version": "1.0.0"}, follow=True).content.decode()
    assert "Requested a usd-viewer stream in alpha" in done
    session = Workload.objects.get(kind="stream", project=org.a)
    assert session.launch_inputs["version"] == "1.0.0"
    assert "How to connect" in done and 'action="' + reverse("kit-session-stop", args=[session.pk]) + '"' in done
    rows = client.get(reverse("kit-sessions"), HTTP_HX_REQUEST="true").content.decode()
    assert str(session.pk) in rows and "<html" not in rows
    browser(org.users.viewer).post(reverse("kit-session-stop", args=[session.pk]))
    assert Workload.objects.get(pk=session.pk).desired_phase != "Deleted"  # a viewer cannot stop it
    client.post(reverse("kit-session-stop", args=[session.pk]))
    assert Workload.objects.get(pk=session.pk).desired_phase == "Deleted"


def test_sessions_page_is_paged_and_its_refresh_keeps_the_page(client_for, org, kit):
    """25 sessions a page, newest first, with Previous/Next; the 2-second refresh re-reads the page shown."""
    api = client_for(org.users.member)
    ids = [api.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json").json()["id"]
           for _ in range(27)]
    client = browser(org.users.member)
    first = page(client, "kit-sessions")
    shown = set(re.findall(r'data-row="([0-9a-f-]+)"', first))
    assert len(shown) == 25 and shown <= set(ids) and "offset=25" in first and "Showing <span>1</span>" in first
    assert f'hx-get="{reverse("kit-sessions")}"' in first
    second = client.get(reverse("kit-sessions") + "?offset=25").content.decode()
    rest = set(re.findall(r'data-row="([0-9a-f-]+)"', second))
    assert rest == set(ids) - shown and len(rest) == 2
    assert f'hx-get="{reverse("kit-sessions")}?offset=25"' in second  # the refresh stays on page 2
    refreshed = client.get(reverse("kit-sessions") + "?offset=25", HTTP_HX_REQUEST="true").content.decode()
    assert set(re.findall(r'data-row="([0-9a-f-]+)"', refreshed)) == rest and "<html" not in refreshed


def _posted_form(html: str) -> dict:
    """What the browser would post: every input, select (its chosen option) and textarea of the page's form."""
    from html import unescape

    fields = {}
    for tag in re.findall(r"<input[^>]*>", html):
        name, value = re.search(r'name="([^"]+)"', tag), re.search(r'value="([^"]*)"', tag)
        if name and "type=\"checkbox\"" not in tag and "type=\"submit\"" not in tag:
            fields[unescape(name.group(1))] = unescape(value.group(1)) if value else ""
    for name, body in re.findall(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', html, re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', body)
        fields.setdefault(unescape(name), unescape(chosen.group(1)) if chosen else "")
    for name, body in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', html, re.S):
        fields[unescape(name)] = unescape(body).lstrip("\n")
    fields.pop("csrfmiddlewaretoken", None)
    return {k: v for k, v in fields.items() if "__i__" not in k}


def test_the_profile_form_has_typed_inputs_from_the_serializers_and_keeps_what_it_does_not_show(org, kit):
    """Compute as one input per field of the API's Compute, tolerations and ports as rows; an environment
    variable from a secret (no column for it) is kept when the profile is saved from the form."""
    profile = kit.profiles.high_mem
    profile.environment = [{"name": "TOKEN", "secret": {"name": "stream-token", "key": "token"}}]
    profile.tolerations = [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
    profile.save()
    admin = browser(org.users.platform_admin)
    html = page(admin, "kit-profile-edit", "high-mem")
    assert 'name="compute"' not in html and "Compute (JSON)" not in html
    fields = _posted_form(html)
    assert fields["compute.cpuMemoryRequest"] == "64Gi" and fields["tolerations-0-key"] == "gpu"
    assert fields["tolerations-0-effect"] == "NoSchedule" and fields["tolerations-rows"] == "2"
    assert '<option value="migProfile">' in html  # the serializer's choices
    fields.update({"compute.gpuDevicesRequest": "2", "compute.cpuCoreRequest": "1.5", "tolerations-1-key": "zone",
                   "tolerations-1-value": "eu", "tolerations-1-operator": "Equal", "ports-0-name": "signaling",
                   "ports-0-port": "49200", "nodeSelector-0-label": "nvidia.com/gpu.product",
                   "nodeSelector-0-value": "L40S"})
    saved = admin.post(reverse("kit-profile-edit", args=["high-mem"]), fields)
    assert saved.status_code == 302, saved.content.decode()[-3000:]
    profile.refresh_from_db()
    assert profile.compute == {"cpuMemoryRequest": "64Gi", "gpuDevicesRequest": 2, "cpuCoreRequest": 1.5}
    assert profile.tolerations == [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
                                   {"key": "zone", "operator": "Equal", "value": "eu"}]
    assert profile.ports[0] == {"name": "signaling", "port": 49200}
    assert profile.node_selector == {"nvidia.com/gpu.product": "L40S"}
    assert profile.environment == [{"name": "TOKEN", "secret": {"name": "stream-token", "key": "token"}}]
    # every problem at once, each on its cell
    fields = _posted_form(page(admin, "kit-profile-edit", "high-mem"))
    fields.update({"compute.gpuDevicesRequest": "two", "ports-0-port": "70000", "tolerations-1-key": ""})
    bad = admin.post(reverse("kit-profile-edit", args=["high-mem"]), fields).content.decode()
    for name in ("compute.gpuDevicesRequest", "ports-0-port", "tolerations-1-key"):
        assert re.search(rf'name="{re.escape(name)}"[^>]*aria-invalid="true"', bad), name


def test_kit_lists_are_tables_with_an_export_of_what_the_user_sees(org, kit):
    import csv
    import io

    from tests.kit.conftest import ApplicationFactory

    for app_id in ("viewer-10", "viewer-2"):
        ApplicationFactory(id=app_id, name=app_id.upper())
    member = browser(org.users.member)
    html = member.get(reverse("kit-apps") + "?sortBy=id&search=viewer-").content.decode()
    assert re.findall(r'<td data-col="id" data-label="Id"><a href="[^"]+">([^<]+)</a>', html) == ["viewer-2", "viewer-10"]
    assert 'data-testid="total-count">2 applications' in html

    def rows(client, url):
        response = client.get(url)
        return list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))

    assert rows(member, reverse("kit-apps-export") + "?search=usd-viewer")[1][:2] == ["usd-viewer", "USD Viewer"]
    ids = [row[0] for row in rows(member, reverse("kit-profiles-export"))[1:]]
    assert "default" in ids and "composer-only" not in ids  # B's unshared profile: not to A's member
    assert [row[0] for row in rows(browser(org.users.other), reverse("kit-profiles-export"))[1:]] == [
        "composer-only", "default"]


def test_sessions_are_a_table_exported_and_stopped_together(client_for, org, kit):
    import csv
    import io

    api = client_for(org.users.member)
    ids = [api.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json").json()["id"]
           for _ in range(2)]
    Workload.objects.filter(pk=ids[0]).update(actual_phase="Running", endpoints={
        "serviceAddress": "25.124.78.14", "serviceType": "LoadBalancer",
        "ports": [{"name": "port-49100", "port": 49100}]})
    client = browser(org.users.member)
    response = client.get(reverse("kit-sessions-export") + "?columns=session,status,routes")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0] == ["Session", "Status", "Routes"]
    assert {row[0]: row[1] for row in rows[1:]}[ids[0]] == "Running"
    assert "25.124.78.14:49100 signaling" in {row[0]: row[2] for row in rows[1:]}[ids[0]]
    theirs = browser(org.users.other).get(reverse("kit-sessions-export"))
    assert not set(ids) & {row[0] for row in csv.reader(io.StringIO(b"".join(theirs.streaming_content).decode()))}
    browser(org.users.viewer).post(reverse("kit-sessions-bulk"), {"action": "stop", "ids": ids})
    assert not Workload.objects.filter(pk__in=ids, desired_phase="Deleted").exists()  # a viewer stops nothing
    done = client.post(reverse("kit-sessions-bulk"), {"action": "stop", "ids": ids}, follow=True).content.decode()
    assert Workload.objects.filter(pk__in=ids, desired_phase="Deleted").count() == 2 and "Stopped 2 streams" in done
