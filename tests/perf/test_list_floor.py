"""bench.list_floor, the floor of the watcher's first pass in `make bench`: every Job and pod read page by page,
decoded or not, and none missed (the wire alone finds each next page in the list's metadata without decoding)."""

from kubernetes import client

from bench import list_floor
from tests.conftest import SIM_TOKEN, official_client

PODS, JOBS, PAGE = 20, 15, 7


def _pod(i: int) -> dict:
    return {"metadata": {"name": f"p{i}", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def _suspended_job(i: int) -> dict:  # suspended: no pod of its own to count
    return {"metadata": {"name": f"j{i}", "namespace": "default"},
            "spec": {"suspend": True, "template": {"spec": {"restartPolicy": "Never",
                                                            "containers": [{"name": "c", "image": "busybox"}]}}}}


def test_the_floor_reads_every_job_and_pod_page_by_page_decoded_or_not(start_kubesim):
    sim = start_kubesim(knative=False)
    with official_client(sim) as api:
        for i in range(PODS):
            client.CoreV1Api(api).create_namespaced_pod("default", _pod(i))
        for i in range(JOBS):
            client.BatchV1Api(api).create_namespaced_job("default", _suspended_job(i))
    pages = -(-PODS // PAGE) + -(-JOBS // PAGE)

    decoded = list_floor.raw_lists(sim.url, SIM_TOKEN, page=PAGE)
    wire = list_floor.raw_lists(sim.url, SIM_TOKEN, decode=False, page=PAGE)

    assert (decoded["count"], decoded["pages"]) == (PODS + JOBS, pages)
    assert wire["pages"] == pages
    assert wire["count"] > 200 * (PODS + JOBS)  # bytes: every object came, not only the first pages
