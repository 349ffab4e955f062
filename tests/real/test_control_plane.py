"""The harness itself: a real API server of the release scripts/kube/stack/versions.env names, with TLS, token auth
and RBAC, its controllers, and etcd compaction that expires continue tokens (what the product's restart-on-410 path
needs to meet)."""

import ssl
import urllib.error
import urllib.request

import pytest
from kubernetes import client

from scripts.realkube import versions
from tests.workloads.cluster_support import wait_for


def test_the_server_is_the_pinned_kube_apiserver_over_tls(real_apiserver):
    info = real_apiserver.get("/version")
    assert info["gitVersion"] == versions()["kubernetes"]
    assert (int(info["major"]), int(info["minor"])) >= (1, 33)
    with pytest.raises(urllib.error.URLError) as untrusted:  # the throwaway CA is not a public one
        urllib.request.urlopen(real_apiserver.url + "/version", timeout=5)
    assert isinstance(untrusted.value.reason, ssl.SSLCertVerificationError)


def test_an_unknown_token_is_401(real_apiserver):
    with pytest.raises(urllib.error.HTTPError) as refused:
        real_apiserver.get("/api/v1/namespaces", token="not-a-token")
    assert refused.value.code == 401


def test_the_controller_manager_makes_service_accounts_and_fills_token_secrets(real_admin):
    """The service-account controller gives a new namespace its `default` account; the token controller fills a
    Secret of type service-account-token that names one (deploy/rbac.yaml's paas-studio-token is such a Secret:
    since 1.24 no token Secret is made unasked)."""
    core = client.CoreV1Api(real_admin)
    core.create_namespace({"metadata": {"name": "harness"}})
    try:
        account = wait_for(lambda: next(iter(core.list_namespaced_service_account("harness").items), None),
                           what="the default ServiceAccount (the service-account controller)")
        assert account.metadata.name == "default"
        core.create_namespaced_secret("harness", {
            "metadata": {"name": "default-token", "annotations": {"kubernetes.io/service-account.name": "default"}},
            "type": "kubernetes.io/service-account-token"})
        wait_for(lambda: (core.read_namespaced_secret("default-token", "harness").data or {}).get("token"),
                 what="its token (the token controller)")
    finally:
        core.delete_namespace("harness")


def test_compaction_expires_a_continue_token_with_410_and_a_fresh_one(real_apiserver, real_admin):
    core = client.CoreV1Api(real_admin)
    core.create_namespace({"metadata": {"name": "paging"}})
    try:
        for i in range(3):
            core.create_namespaced_config_map("paging", {"metadata": {"name": f"c{i}"}})
        page = core.list_namespaced_config_map("paging", limit=1)
        assert page.metadata._continue
        core.create_namespaced_config_map("paging", {"metadata": {"name": "later"}})  # a revision to compact to
        real_apiserver.compact()
        with pytest.raises(client.ApiException) as expired:
            core.list_namespaced_config_map("paging", limit=1, _continue=page.metadata._continue)
        assert expired.value.status == 410
        assert '"reason":"Expired"' in expired.value.body and '"continue":"' in expired.value.body
    finally:
        core.delete_namespace("paging")
