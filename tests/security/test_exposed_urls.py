"""Exposed URLs' Ingress hosts (security round 3, S06): with EXPOSED_URL_DOMAIN set, a project's URLs are on
`<project>.<domain>` and names under it, and nowhere else — not PaaS Studio's own host, not another project's, not a
host outside the domain; without it, a URL takes no host or path of its own (`/<project>/<workload>/<port>`).
Every kind, on create and on an inference's update; what reaches the cluster is the Ingress."""

import pytest

from workloads import manifests
from workloads.cluster.push import workload_ref
from workloads.models import Workload

pytestmark = pytest.mark.django_db
DOMAIN = "apps.example.com"
KINDS = {"trainings": {}, "workspaces": {}, "inferences": {},
         "distributed": {"distributedFramework": "PyTorch", "numWorkers": 1}}


@pytest.fixture
def member(client_for, org, settings):
    settings.EXPOSED_URL_DOMAIN = DOMAIN
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "studio.example.com", "alpha.apps.example.com"]
    return client_for(org.users.member)


def create(api, org, path, url, name="w"):
    spec = {"image": "python:3.11", **KINDS[path], "exposedUrls": [{"container": 8080, "url": url}]}
    return api.post(f"/api/v1/workloads/{path}", {"name": name, "projectId": org.a.id,
                                                  "clusterId": str(org.cluster.id), "spec": spec}, format="json")


def ingress_of(workload_id) -> dict:
    workload = Workload.objects.get(pk=workload_id)
    objects = manifests.build_manifests(workload_ref(workload), workload.spec, knative=False)
    return next(o for o in objects if o["kind"] == "Ingress")


REFUSED = {
    "the portal's login": "https://studio.example.com/login",
    "the portal, as a path on any host": "/login",
    "another project's host": "https://beta.apps.example.com/",
    "a name under another project's host": "https://evil.beta.apps.example.com/",
    "the domain itself": "https://apps.example.com/",
    "a host outside the domain": "https://example.org/",
    "a look-alike": "https://alpha.apps.example.com.evil.org/",
    "a wildcard": "https://*.alpha.apps.example.com/",
    "a port": "https://lab.alpha.apps.example.com:8443/",
    "credentials": "https://user:pw@lab.alpha.apps.example.com/",
    "no scheme": "lab.alpha.apps.example.com/x",
    "another scheme": "ftp://lab.alpha.apps.example.com/",
    "the project's host that the portal answers on": "https://alpha.apps.example.com/x",
}


@pytest.mark.parametrize("path", KINDS)
@pytest.mark.parametrize("url", REFUSED.values(), ids=REFUSED.keys())
def test_a_url_off_the_projects_subdomain_is_refused(member, org, path, url):
    answer = create(member, org, path, url)
    assert answer.status_code == 400, answer.content
    assert [e["field"] for e in answer.json()["errors"]] == ["spec.exposedUrls[0].url"], answer.json()
    assert not Workload.objects.exists()


def test_the_projects_own_names_reach_the_ingress(member, org, settings):
    settings.ALLOWED_HOSTS = ["testserver", "studio.example.com"]  # the portal is not on alpha's host here
    made = create(member, org, "workspaces", "https://lab.alpha.apps.example.com/notebook")
    assert made.status_code == 200, made.json()
    rule = ingress_of(made.json()["workloadId"])["spec"]["rules"][0]
    assert rule["host"] == "lab.alpha.apps.example.com" and rule["http"]["paths"][0]["path"] == "/notebook"
    plain = create(member, org, "workspaces", "/notebook", name="w2")  # a path: on the project's host
    assert plain.status_code == 200, plain.json()
    assert ingress_of(plain.json()["workloadId"])["spec"]["rules"][0]["host"] == "alpha.apps.example.com"


def test_a_url_left_out_is_on_the_projects_host(member, org):
    spec = {"image": "python:3.11", "exposedUrls": [{"container": 8080}]}
    made = member.post("/api/v1/workloads/workspaces", {"name": "w", "projectId": org.a.id,
                                                         "clusterId": str(org.cluster.id), "spec": spec}, format="json")
    rule = ingress_of(made.json()["workloadId"])["spec"]["rules"][0]
    assert rule["host"] == "alpha.apps.example.com" and rule["http"]["paths"][0]["path"] == "/alpha/w/8080"


def test_without_a_domain_a_url_takes_no_host_or_path_of_its_own(client_for, org, settings):
    settings.EXPOSED_URL_DOMAIN = ""
    member = client_for(org.users.member)
    for url in ("/login", "https://lab.example.com/"):
        answer = create(member, org, "workspaces", url)
        assert answer.status_code == 400 and "EXPOSED_URL_DOMAIN" in answer.json()["errors"][0]["message"]
    spec = {"image": "python:3.11", "exposedUrls": [{"container": 8080}]}
    made = member.post("/api/v1/workloads/workspaces", {"name": "w", "projectId": org.a.id,
                                                         "clusterId": str(org.cluster.id), "spec": spec}, format="json")
    rule = ingress_of(made.json()["workloadId"])["spec"]["rules"][0]
    assert "host" not in rule and rule["http"]["paths"][0]["path"] == "/alpha/w/8080"


def test_an_inference_update_cannot_move_its_url_to_another_host(member, org):
    made = member.post("/api/v1/workloads/inferences", {"name": "serve", "projectId": org.a.id,
                                                         "clusterId": str(org.cluster.id),
                                                         "spec": {"image": "python:3.11"}}, format="json")
    answer = member.patch(f"/api/v1/workloads/inferences/{made.json()['workloadId']}", {"spec": {"exposedUrls": [
        {"container": 8080, "url": "https://studio.example.com/login"}]}}, format="json")
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "spec.exposedUrls[0].url"
