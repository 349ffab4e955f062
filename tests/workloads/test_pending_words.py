"""Why a workload waits, in words a researcher reads (workloads.pending_words), on the workload's page, in the
list and in the GPU queue; the scheduler's own text behind a details toggle, and the API's pendingReason as it was."""

import pytest

from tests.browser.test_workload_pages import make_workload
from workloads.pending_words import explain, ordinal, sentence

NO_ROOM = {"type": "NoNodeRoom", "resource": "nvidia.com/gpu", "resources": ["nvidia.com/gpu"],
           "nodePool": "my-node-pool-a", "queueLength": 3,
           "message": "No node in node pool my-node-pool-a has room for it: not enough nvidia.com/gpu free.",
           "schedulerMessage": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}


@pytest.mark.parametrize(("n", "said"), [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"), (11, "11th"),
                                         (12, "12th"), (13, "13th"), (21, "21st"), (22, "22nd"), (101, "101st")])
def test_ordinals(n, said):
    assert ordinal(n) == said


@pytest.mark.parametrize(("reason", "gpus", "said"), [
    (NO_ROOM, 1, "Waiting for 1 GPU in node pool my-node-pool-a: all its GPUs are in use."),
    (NO_ROOM, 2, "Waiting for 2 GPUs in node pool my-node-pool-a: all its GPUs are in use."),
    ({"type": "NoNodeRoom", "resources": ["cpu", "memory"], "nodePool": "default"}, 0,
     "Waiting for room in node pool default: no node there has enough CPU and memory free for it."),
    ({"type": "OverQuota", "scope": "project", "scopeName": "alpha", "nodePool": "default", "resource": "gpu",
      "quota": "limit", "allowed": 4, "used": 4, "requested": 1},
     1, "Waiting: project alpha may use at most 4 GPUs in node pool default, and 4 are already in use or waiting "
        "ahead of this one, which asks for 1. It starts when the project's other work there ends."),
    ({"type": "OverQuota", "scope": "department", "scopeName": "research", "resource": "gpu", "quota": "deserved",
      "allowed": 1, "used": 1, "requested": 1},
     1, "Waiting: this workload cannot be paused by the scheduler, so it only runs within department research's "
        "guaranteed 1 GPU; 1 is already in use or waiting ahead, and it asks for 1. Trainings may borrow idle "
        "GPUs beyond the quota."),
    ({"type": "ImagePull", "image": "registry.example.com/x:1", "reason": "ErrImagePull"}, 0,
     "Its container image registry.example.com/x:1 cannot be downloaded: check the image's name and tag, and that "
     "the project has the registry's credentials."),
    ({"type": "Reclaimed", "reclaimedBy": {"project": "beta", "workload": "b-one"}}, 1,
     "Paused: project beta needed back GPUs of its own quota that this training had borrowed. It waits in line "
     "and starts again by itself when GPUs free up."),
    ({"type": "Preempted", "preemptedBy": {"workload": "urgent"}}, 1,
     "Paused for a more urgent workload of its own project (urgent). It starts again by itself when GPUs free up."),
    ({"type": "Scheduling", "nodePool": "default"}, 0, "Waiting for the scheduler to place it in node pool default."),
])
def test_reasons_are_sentences(reason, gpus, said):
    assert sentence(reason, gpus=gpus) == said


def test_the_explanation_keeps_the_schedulers_words_and_says_the_place():
    said = explain(NO_ROOM, 3, gpus=1)
    assert said["line"] == "It is 3rd in line."
    assert said["said"] == NO_ROOM["message"] and said["scheduler"] == NO_ROOM["schedulerMessage"]
    assert explain({**NO_ROOM, "waitingFor": {"type": "Scheduling"}}, 1)["now"] == "Waiting for the scheduler to place it."
    assert explain(None) == {}


@pytest.mark.django_db
def test_pages_say_it_in_words_and_the_api_as_before(client, client_for, org):
    waiting = make_workload(org, name="big-train", actual_phase="Pending", gpu_request=1, pending_reason=NO_ROOM,
                            queue_position=3)
    client.force_login(org.users.member)
    page = client.get(f"/workloads/{waiting.pk}").content.decode()
    assert "Waiting for 1 GPU in node pool my-node-pool-a: all its GPUs are in use." in page
    assert "It is 3rd in line." in page
    details = page.split('data-testid="scheduler-words"', 1)[1].split("</details>", 1)[0]
    assert "<summary>The scheduler's own words</summary>" in details
    assert NO_ROOM["message"] in details and NO_ROOM["schedulerMessage"] in details
    listed = client.get("/workloads").content.decode()
    assert "Waiting for 1 GPU in node pool my-node-pool-a" in listed and "It is 3rd in line." in listed
    answer = client_for(org.users.member).get(f"/api/v1/workloads/{waiting.pk}").json()
    assert answer["pendingReason"] == NO_ROOM and answer["queuePosition"] == 3
