"""kit.streams: the spec of a session, as build_manifests renders it; Kit status and routes of a workload."""

import pytest

from kit.streams import (
    AUTHORIZATION_ANNOTATION,
    ENCRYPTION_ANNOTATION,
    argument_list,
    session_routes,
    session_status,
    session_view,
    stream_spec,
)
from workloads.manifests import WorkloadRef, build_manifests

IMAGE = "nvcr.io/nvidia/omniverse/usd-viewer:0.2.0"
FULL = {
    "compute": {"cpuCoreRequest": 2, "cpuCoreLimit": 4, "cpuMemoryRequest": "8Gi", "cpuMemoryLimit": "16Gi",
                "gpuDevicesRequest": 1},
    "node_selector": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    "runtime_class_name": "nvidia",
    "authorization": True,
    "service_type": "LoadBalancer",
    "service_annotations": {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb"},
    "encryption": "pod",
    "tls_secret": "stream-tls",
    "environment": [{"name": "OMNI_LOG_LEVEL", "value": "info"}],
    "ports": [{"name": "signaling", "port": 49100}, {"name": "media", "port": 47998}],
}
REF = WorkloadRef(id="0f3c2a1e-1111-4222-8333-444455556666", name="usd-viewer-abcde", kind="stream",
                  project="alpha", namespace="studio-alpha")


def by_kind(objects):
    return {obj["kind"]: obj for obj in objects}


def test_full_profile_spec():
    spec = stream_spec(image=IMAGE, settings=FULL, arguments={"/app/auto_load_usd": "s3://x/stage.usd", "fps": 60})
    assert spec == {
        "image": IMAGE,
        "ports": [{"container": 49100, "serviceType": "LoadBalancer", "name": "signaling", "protocol": "TCP"},
                  {"container": 47998, "serviceType": "LoadBalancer", "name": "media", "protocol": "UDP"}],
        "serviceAnnotations": {"service.beta.kubernetes.io/aws-load-balancer-type": "nlb",
                               AUTHORIZATION_ANNOTATION: "required", ENCRYPTION_ANNOTATION: "pod"},
        "compute": FULL["compute"],
        "environmentVariables": [{"name": "OMNI_LOG_LEVEL", "value": "info"}],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
        "tolerations": FULL["tolerations"],
        "runtimeClassName": "nvidia",
        "tlsSecret": "stream-tls",
        "args": ["--/app/auto_load_usd=s3://x/stage.usd", "--fps=60"],
    }


def test_full_profile_renders_a_deployment_and_a_service_of_the_profile():
    spec = stream_spec(image=IMAGE, settings=FULL, arguments={"/app/auto_load_usd": "s3://x/stage.usd"})
    objects = by_kind(build_manifests(REF, spec))
    assert set(objects) == {"Deployment", "Service"}
    pod = objects["Deployment"]["spec"]["template"]["spec"]
    main = pod["containers"][0]
    assert main["image"] == IMAGE
    assert main["args"] == ["--/app/auto_load_usd=s3://x/stage.usd"]
    assert main["resources"] == {"requests": {"cpu": "2", "memory": "8Gi"},
                                 "limits": {"cpu": "4", "memory": "16Gi", "nvidia.com/gpu": "1"}}
    assert {"name": "OMNI_LOG_LEVEL", "value": "info"} in main["env"]
    assert [p["containerPort"] for p in main["ports"]] == [49100, 47998]
    assert pod["runtimeClassName"] == "nvidia"
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L40S"}
    assert pod["tolerations"] == [{"operator": "Exists", "key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert {"name": "tls", "secret": {"secretName": "stream-tls"}} in pod["volumes"]
    assert {"name": "tls", "mountPath": "/etc/tls", "readOnly": True} in main["volumeMounts"]
    service = objects["Service"]
    assert service["spec"]["type"] == "LoadBalancer"
    assert [(p["port"], p["protocol"]) for p in service["spec"]["ports"]] == [(49100, "TCP"), (47998, "UDP")]
    assert [p.get("protocol", "TCP") for p in main["ports"]] == ["TCP", "UDP"]
    assert service["metadata"]["annotations"] == spec["serviceAnnotations"]


def test_minimal_profile_uses_kit_ports_and_a_load_balancer():
    spec = stream_spec(image=IMAGE, settings={})
    assert spec == {
        "image": IMAGE,
        "ports": [{"container": 49100, "serviceType": "LoadBalancer", "name": "signaling", "protocol": "TCP"},
                  {"container": 47998, "serviceType": "LoadBalancer", "name": "media", "protocol": "UDP"}],
        "serviceAnnotations": {AUTHORIZATION_ANNOTATION: "none", ENCRYPTION_ANNOTATION: "none"},
    }
    pod = by_kind(build_manifests(REF, spec))["Deployment"]["spec"]["template"]["spec"]
    assert "volumes" not in pod and "runtimeClassName" not in pod and "args" not in pod["containers"][0]


def test_the_media_port_is_published_as_udp_beside_a_tcp_port_of_the_same_number():
    spec = stream_spec(image=IMAGE, settings={"ports": [{"name": "signaling", "port": 8000},
                                                        {"name": "media", "port": 8000, "protocol": "UDP"}]})
    service = by_kind(build_manifests(REF, spec))["Service"]
    assert [(p["name"], p["port"], p["protocol"]) for p in service["spec"]["ports"]] == [
        ("port-8000", 8000, "TCP"), ("port-8000-udp", 8000, "UDP")]


@pytest.mark.parametrize("encryption,secret,mounted", [
    ("none", "", False), ("loadBalancer", "", False), ("pod", "tls-a", True),
    ("loadBalancer", "left-over", False),  # the secret only matters when the pod serves TLS
])
def test_tls_secret_is_mounted_only_when_the_pod_encrypts(encryption, secret, mounted):
    spec = stream_spec(image=IMAGE, settings={"encryption": encryption, "tls_secret": secret})
    assert spec["serviceAnnotations"][ENCRYPTION_ANNOTATION] == encryption
    assert ("tlsSecret" in spec) is mounted
    pod = by_kind(build_manifests(REF, spec))["Deployment"]["spec"]["template"]["spec"]
    assert ("volumes" in pod) is mounted


@pytest.mark.parametrize("service_type", ["LoadBalancer", "NodePort", "ClusterIP"])
def test_service_type_comes_from_the_profile(service_type):
    spec = stream_spec(image=IMAGE, settings={"service_type": service_type})
    assert by_kind(build_manifests(REF, spec))["Service"]["spec"]["type"] == service_type


def test_profile_annotations_cannot_override_the_studio_ones():
    spec = stream_spec(image=IMAGE, settings={"authorization": False,
                                              "service_annotations": {AUTHORIZATION_ANNOTATION: "required"}})
    assert spec["serviceAnnotations"][AUTHORIZATION_ANNOTATION] == "none"


@pytest.mark.parametrize("arguments,expected", [
    ({}, []),
    ({"usd_stage_uri": "omniverse://host/a b.usd"}, ["--usd_stage_uri=omniverse://host/a b.usd"]),
    ({"/rtx/enabled": True, "/app/window/width": 1920, "scale": 0.5}, ["--/rtx/enabled=true", "--/app/window/width=1920", "--scale=0.5"]),
])
def test_argument_list(arguments, expected):
    assert argument_list(arguments) == expected


SPEC = {"ports": [{"container": 49100, "name": "signaling", "protocol": "TCP"},
                  {"container": 47998, "name": "media", "protocol": "UDP"}]}
LB = {"url": "", "serviceAddress": "25.124.78.14", "serviceType": "LoadBalancer",
      "ports": [{"name": "port-49100", "port": 49100, "nodePort": 32452},
                {"name": "port-47998-udp", "port": 47998, "nodePort": 32433, "protocol": "UDP"}]}


@pytest.mark.parametrize("endpoints,expected", [
    (LB, {"25.124.78.14": {"routes": [
        {"description": "signaling", "destination_port": 49100, "protocol": "TCP", "source_port": 49100},
        {"description": "media", "destination_port": 47998, "protocol": "UDP", "source_port": 47998}]}}),
    ({**LB, "serviceType": "NodePort", "serviceAddress": "10.0.0.7"}, {"10.0.0.7": {"routes": [
        {"description": "signaling", "destination_port": 49100, "protocol": "TCP", "source_port": 32452},
        {"description": "media", "destination_port": 47998, "protocol": "UDP", "source_port": 32433}]}}),
    ({"serviceAddress": "10.96.0.12", "serviceType": "ClusterIP", "ports": [{"name": "port-8000", "port": 8000}]},
     {"10.96.0.12": {"routes": [
         {"description": "port-8000", "destination_port": 8000, "protocol": "TCP", "source_port": 8000}]}}),
    ({**LB, "serviceAddress": ""}, {}),  # the load balancer has no address yet
    ({}, {}),
    (None, {}),
])
def test_session_routes(endpoints, expected):
    assert session_routes(endpoints, SPEC) == expected


@pytest.mark.parametrize("phase,message,routes,expected", [
    ("Creating", "", None, {"condition": "starting", "message": "Session is starting (Creating)", "status": False}),
    ("Pending", "0/3 nodes: Insufficient nvidia.com/gpu", None,
     {"condition": "starting", "message": "Session is starting (Pending: 0/3 nodes: Insufficient nvidia.com/gpu)",
      "status": False}),
    ("Initializing", "", None, {"condition": "starting", "message": "Session is starting (Initializing)", "status": False}),
    ("Running", "", {"1.2.3.4": [{}]}, {"condition": "ready", "message": "Session is active", "status": True}),
    ("Running", "", {}, {"condition": "starting", "message": "Session is starting: waiting for the address of its Service",
                         "status": False}),
    ("Degraded", "", None, {"condition": "degraded", "message": "Session is degraded (Degraded)", "status": False}),
    ("Failed", "ImagePullBackOff", None, {"condition": "failed", "message": "Session failed (Failed: ImagePullBackOff)",
                                          "status": False}),
    ("Deleting", "", None, {"condition": "terminating", "message": "Session is terminating (Deleting)", "status": False}),
    ("Unknown", "", None, {"condition": "unknown", "message": "Session state is unknown (Unknown)", "status": False}),
])
def test_session_status(phase, message, routes, expected):
    assert session_status(phase, message, routes=routes) == expected


def test_session_view_gives_routes_only_while_running():
    running = session_view(session_id="s1", phase="Running", phase_message="", endpoints=LB, spec=SPEC)
    assert running["id"] == "s1" and running["status"]["status"] is True
    assert running["routes"]["25.124.78.14"]["routes"][0]["description"] == "signaling"
    failed = session_view(session_id="s1", phase="Failed", phase_message="", endpoints=LB, spec=SPEC)
    assert failed["routes"] == {} and failed["status"]["condition"] == "failed"
