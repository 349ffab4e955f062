"""The runapy script of docs/scheduling.md (scripts/runapy_over_quota.py) against a live server whose cluster runs
KAI Scheduler (kubesim's): a training over its project's quota waits, runs on lent GPUs, is reclaimed by the
project whose quota they are, and runs again by itself — all through Run:ai's own SDK."""

import uuid

import pytest

from scripts import runapy_over_quota
from studio import services
from tests import docs_output
from tests.conftest import SIM_TOKEN
from tests.factories import UserFactory
from tests.runapy_support import runapy_client
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_training_over_quota_waits_runs_is_reclaimed_and_runs_again(live_server, worker, start_kubesim):
    sim = start_kubesim(nodes=2, gpus_per_node=8, kai=True, run_seconds=3600, pull_seconds=0.1, tick=0.02)
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    cluster = services.cluster_create(actor=root, name=f"kai-{uuid.uuid4().hex[:6]}", api_server_url=sim.url,
                                      token=SIM_TOKEN, verify_tls=False)
    said = []
    result = runapy_over_quota.run(runapy_client(live_server.url, root), str(cluster.pk), gpus=16, per_node=8,
                                   say=said.append, step=lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)]),
                                   timeout=60)
    text = "\n".join(said)
    (docs_output.folder() / "scheduling-runapy-kubesim.txt").write_text(text + "\n")
    assert result["watched"] == "a-over" and result["reclaimedBy"].startswith("kai-b-")
    for expected in ("a-over     Pending      NoNodeRoom", "a-over     Running", "a-over     Pending      Reclaimed by "
                     "project kai-b-"):
        assert expected in text, text
    assert text.rindex("a-over     Running") > text.index("Reclaimed by project"), text  # and ran again
