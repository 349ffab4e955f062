"""A Kit stream of the test world, requested as a member requests one: USD Composer 2025.1.0 on alpha's profile
that takes any application, optionally shown as running behind a load balancer."""

from kit import services as kit_services
from kit import sessions as kit_sessions
from workloads.models import Workload


def requested_stream(org):
    app = kit_services.application_create(actor=org.users.platform_admin, app_id="usd-composer",
                                          name="USD Composer", description="Compose OpenUSD scenes.")
    kit_services.version_create(actor=org.users.platform_admin, application=app, version="2025.1.0",
                                container="nvcr.io/nvidia/omniverse/usd-composer", container_version="2025.1.0")
    kit_services.profile_create(actor=org.users.platform_admin, profile_id="any-app", owner_project_id=org.a.pk,
                                fields={"name": "Any application",
                                        "supported_applications": [{"name": "*", "versions": ["*"]}]})
    return kit_sessions.session_request(user=org.users.member, app_id="usd-composer", profile_id="any-app")


def running_stream(org, *, address: str):
    """The stream, Running behind a LoadBalancer at `address` (its streaming TCP and UDP ports)."""
    found = requested_stream(org)
    Workload.objects.filter(pk=found.pk).update(actual_phase="Running", endpoints={
        "serviceAddress": address, "serviceType": "LoadBalancer",
        "ports": [{"name": "port-49100", "port": 49100}, {"name": "port-47998-udp", "port": 47998, "protocol": "UDP"}]})
    return found
