"""workloads.cluster.endpoints: where a workload can be reached, from the objects a sync round saw (table tests)."""

import pytest

from workloads import manifests
from workloads.cluster.endpoints import endpoints_of

REF = manifests.WorkloadRef(id="1234abcd-0000-0000-0000-000000000000", name="app", kind="workspace",
                            project="alpha", namespace="studio-alpha")
NAME = manifests.object_name(REF)


def service(kind="ClusterIP", name=NAME, ports=({"name": "port-8888", "port": 8888},), status=None):
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": REF.namespace},
            "spec": {"type": kind, "clusterIP": "10.96.0.12", "ports": list(ports)}, "status": status or {}}


RUNNING_POD = {"metadata": {"name": "p"}, "status": {"phase": "Running", "hostIP": "172.18.0.3"}}
LB_STATUS = {"loadBalancer": {"ingress": [{"ip": "25.124.78.14"}]}}
INGRESS = {"metadata": {"name": NAME}, "spec": {"rules": [{"host": "app.example.com", "http": {"paths": [
    {"path": "/alpha/app/8888"}]}}]}}


@pytest.mark.parametrize("objects,pods,expected", [
    ({}, [], {}),
    ({manifests.SERVICE: [service()]}, [], {
        "url": f"http://{NAME}.studio-alpha.svc.cluster.local:8888", "serviceAddress": "10.96.0.12",
        "serviceType": "ClusterIP", "ports": [{"name": "port-8888", "port": 8888}]}),
    ({manifests.SERVICE: [service("LoadBalancer", status=LB_STATUS)]}, [], {
        "url": f"http://{NAME}.studio-alpha.svc.cluster.local:8888", "serviceAddress": "25.124.78.14",
        "serviceType": "LoadBalancer", "ports": [{"name": "port-8888", "port": 8888}]}),
    ({manifests.SERVICE: [service("LoadBalancer")]}, [], {  # no address yet
        "url": f"http://{NAME}.studio-alpha.svc.cluster.local:8888", "serviceAddress": "",
        "serviceType": "LoadBalancer", "ports": [{"name": "port-8888", "port": 8888}]}),
    ({manifests.SERVICE: [service("NodePort", ports=({"name": "port-80", "port": 80, "nodePort": 30080},))]},
     [RUNNING_POD], {"url": f"http://{NAME}.studio-alpha.svc.cluster.local", "serviceAddress": "172.18.0.3",
                     "serviceType": "NodePort", "ports": [{"name": "port-80", "port": 80, "nodePort": 30080}]}),
    ({manifests.SERVICE: [service(name=NAME + "-lb", kind="LoadBalancer"), service()], manifests.INGRESS: [INGRESS]},
     [], {"url": "http://app.example.com/alpha/app/8888", "serviceAddress": "10.96.0.12",
          "serviceType": "ClusterIP", "ports": [{"name": "port-8888", "port": 8888}]}),
    ({manifests.KNATIVE_SERVICE: [{"metadata": {"name": NAME}, "status": {
        "url": "http://app.studio-alpha.example.com"}}]}, [], {
        "url": "http://app.studio-alpha.example.com", "serviceAddress": "app.studio-alpha.example.com",
        "serviceType": "Knative", "ports": [{"name": "http", "port": 80}]}),
], ids=["nothing", "cluster-ip", "load-balancer", "load-balancer-pending", "node-port", "ingress", "knative"])
def test_endpoints_of(objects, pods, expected):
    assert endpoints_of(REF, objects, pods) == expected
