"""The real API server's verdict on deploy/paas-studio: every object passes a server-side dry run
(`dryRun=All`: admission, validation and defaulting, nothing stored), in the namespace the folder makes."""

from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException
from kubernetes.dynamic.exceptions import DynamicApiError

from tests.deploy.manifests import rendered

NAMESPACE = "paas-studio"


def test_every_object_passes_a_server_side_dry_run(real_admin):
    docs = rendered()
    resources = dynamic.DynamicClient(real_admin).resources
    core = client.CoreV1Api(real_admin)
    namespace = next(doc for doc in docs if doc["kind"] == "Namespace")
    try:
        core.read_namespace(NAMESPACE)
    except ApiException as missing:
        assert missing.status == 404
        core.create_namespace(namespace)  # for real: namespaced objects' dry runs need it to exist
    verdicts = {}
    for doc in docs:
        if doc["kind"] == "Namespace":
            continue
        api = resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
        try:
            created = api.create(body=doc, namespace=NAMESPACE, query_params=[("dryRun", "All")])
            verdicts[(doc["kind"], doc["metadata"]["name"])] = created.metadata.uid is not None
        except DynamicApiError as refused:
            verdicts[(doc["kind"], doc["metadata"]["name"])] = f"{refused.status} {refused.body}"
    assert verdicts and all(v is True for v in verdicts.values()), verdicts
    # The same dry run refuses what the server would refuse (so a pass above is the server's verdict).
    web = next(doc for doc in docs if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "paas-studio-web")
    broken = {**web, "spec": {**web["spec"], "replicas": -1}}
    try:
        resources.get(api_version="apps/v1", kind="Deployment").create(
            body=broken, namespace=NAMESPACE, query_params=[("dryRun", "All")])
        raise AssertionError("a Deployment with replicas -1 passed the dry run")
    except DynamicApiError as refused:
        assert refused.status == 422 and "spec.replicas" in str(refused.body)
    # Nothing but the namespace was stored.
    assert client.AppsV1Api(real_admin).list_namespaced_deployment(NAMESPACE).items == []
    assert client.BatchV1Api(real_admin).list_namespaced_job(NAMESPACE).items == []
