"""The home page per role: a member's own workloads (Starting not counting what waits in a queue or cannot
start) and their projects' GPU quota in use; an admin's clusters with their pools' GPUs, the clusters that do not
answer, what waits and why, and what failed in the last 24 hours."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studio.models import Cluster
from tests.browser.test_workload_pages import make_workload
from tests.factories import ClusterFactory, seed_node_pools

pytestmark = pytest.mark.django_db

NO_ROOM = {"type": "NoNodeRoom", "resource": "nvidia.com/gpu", "resources": ["nvidia.com/gpu"], "nodePool": "default",
           "message": "No node in node pool default has room for it: not enough nvidia.com/gpu free."}


def tile(html: str, title: str) -> str:
    """The number on the count tile titled `title`."""
    head = html.split(f'<span class="text-secondary">{title}</span><strong>', 1)[1]
    return head.split("</strong>", 1)[0]


def test_a_members_home_counts_what_starts_and_shows_her_workloads_and_quota(client, org):
    bob = org.users.member
    org.a.gpu_deserved = 4
    org.a.save()
    make_workload(org, name="runs", created_by=bob, gpu_request=2)
    make_workload(org, name="creating", created_by=bob, actual_phase="Creating")
    make_workload(org, name="queued", created_by=bob, actual_phase="Pending", gpu_request=1, pending_reason=NO_ROOM,
                  queue_position=2)
    make_workload(org, name="bad-image", created_by=bob, actual_phase="Pending",
                  pending_reason={"type": "ImagePull", "image": "nope:1", "message": "Image nope:1 cannot be pulled"})
    make_workload(org, name="crashed", created_by=bob, actual_phase="Failed", phase_updated_at=timezone.now())
    make_workload(org, name="someone-elses", actual_phase="Creating")
    client.force_login(bob)
    html = client.get("/").content.decode()
    assert (tile(html, "Running"), tile(html, "Starting"), tile(html, "Waiting"), tile(html, "Failing")) == (
        "1", "1", "1", "2")  # the queued one waits, the image that cannot be pulled and the crash fail
    mine = html.split('id="h-mine"', 1)[1].split("</section>", 1)[0]
    assert "queued" in mine and "Waiting for 1 GPU in node pool default: all its GPUs are in use." in mine
    assert "someone-elses" not in mine and "crashed" not in mine
    quota = html.split('id="h-quota"', 1)[1].split("</section>", 1)[0]
    assert "<strong>2</strong> of 4 GPUs deserved in use (50 %); 3 with what waits" in quota


def test_an_admins_home_shows_clusters_pools_waits_and_failures(client, org):
    seed_node_pools(org.cluster)
    org.cluster.status = Cluster.Status.CONNECTED
    org.cluster.gpu_capacity = {"total": 8, "largestNode": 8, "pools": {"default": {"total": 8}}}
    org.cluster.save()
    ClusterFactory(name="far-away", status=Cluster.Status.DISCONNECTED, status_message="Connection refused.")
    make_workload(org, name="runs", gpu_request=2)
    make_workload(org, name="queued", actual_phase="Pending", gpu_request=1, pending_reason=NO_ROOM)
    make_workload(org, name="crashed", actual_phase="Failed", phase_updated_at=timezone.now(),
                  phase_message="Job has reached the specified backoff limit")
    make_workload(org, name="old-crash", actual_phase="Failed", phase_updated_at=timezone.now() - timedelta(days=2))
    client.force_login(org.users.platform_admin)
    html = client.get("/").content.decode()
    main = html.split('data-cluster="main"', 1)[1].split('data-testid="home-cluster"', 1)[0]
    assert "Answers" in main and "8 GPUs" in main
    default = main.split('data-pool="default">', 1)[1].split("</tr>", 1)[0]
    assert '<td data-label="GPUs">8</td>' in default and "2 <span" in default and "(25 %)" in default
    assert '<td data-label="Waiting for">1</td>' in default
    far = html.split('data-cluster="far-away"', 1)[1].split("</section>", 1)[0]
    assert "Does not answer" in far and "Connection refused." in far
    waits = html.split('id="h-waiting"', 1)[1].split("</section>", 1)[0]
    assert "queued" in waits and "Waiting for 1 GPU in node pool default" in waits
    failed = html.split('id="h-failed"', 1)[1].split("</section>", 1)[0]
    assert "crashed" in failed and "backoff limit" in failed and "old-crash" not in failed
