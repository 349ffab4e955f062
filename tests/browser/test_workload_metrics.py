"""The workload page's charts: samples stay drawn across the page's refreshes (an incremental read never narrows
the window), GPU charts (mean, per GPU, memory) for a job with GPUs, none for a job without, and a finished
workload that no longer claims to want to run."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN
from tests.browser.test_workload_pages import make_workload
from workloads.models import MetricSample

pytestmark = pytest.mark.django_db(transaction=True)

POINTS = ("(id) => { const c = Chart.getChart(document.getElementById(id)); "
          "return c ? c.data.datasets.filter((d) => !d.stepped).reduce((n, d) => n + d.data.length, 0) : -1; }")
LABELS = "(id) => Chart.getChart(document.getElementById(id)).data.datasets.map((d) => d.label)"


def samples(workload, type_, values, *, pod="", labels=None, minutes=10):
    """One sample a minute over the last `minutes`, oldest first."""
    now = timezone.now()
    MetricSample.objects.bulk_create(
        MetricSample(workload=workload, pod_name=pod, type=type_, labels=labels or {}, value=values[i % len(values)],
                     timestamp=now - timedelta(minutes=minutes - i)) for i in range(minutes))


def test_charts_keep_their_samples_across_refreshes(open_session, org):
    workload = make_workload(org)
    samples(workload, "CPU_USAGE_CORES", [0.5, 1.0, 1.5])
    samples(workload, "CPU_REQUEST_CORES", [2.0])
    session = open_session("bob")
    page = session.page
    page.goto(f"/workloads/{workload.pk}")
    page.wait_for_function(f"() => typeof Chart !== 'undefined' && ({POINTS})('chart-cpu') === 10")
    # a sample that comes while the page is open is added by the next refresh (every 5 s) ...
    MetricSample.objects.create(workload=workload, type="CPU_USAGE_CORES", value=2.0, timestamp=timezone.now())
    page.wait_for_function(f"() => ({POINTS})('chart-cpu') === 11", timeout=12_000)
    # ... and a refresh that brings nothing keeps what is drawn (it used to narrow the axis to the newest point)
    with page.expect_response(lambda r: "/metrics?" in r.url and "numberOfSamples=0" in r.url, timeout=12_000):
        pass
    page.wait_for_timeout(300)
    assert page.evaluate(POINTS, "chart-cpu") == 11
    expect(page.locator(".chart-note").first).to_be_hidden()
    span = page.evaluate("() => { const x = Chart.getChart(document.getElementById('chart-cpu')).options.scales.x;"
                         " return x.max - x.min; }")
    assert abs(span - 900_000) < 60_000  # the window of a young workload: 15 minutes
    # no GPU asked for: no GPU chart at all, rather than an empty one
    expect(page.locator("#chart-gpu, #chart-gpu-per, #chart-gpu-memory")).to_have_count(0)


@pytest.mark.parametrize("width", [1440, 390])
def test_gpu_charts_mean_per_gpu_and_memory(open_session, org, width):
    org.cluster.prometheus_url = "http://prometheus.example:9090"
    org.cluster.save(update_fields=["prometheus_url"])
    workload = make_workload(org, gpu_request=2)
    # no Pod row: the pod is gone (a finished retry), its GPUs' history stays on the chart
    samples(workload, "GPU_UTILIZATION", [40, 60])
    samples(workload, "GPU_MEMORY_USAGE_BYTES", [8 * 2**30, 10 * 2**30])
    samples(workload, "GPU_MEMORY_REQUEST_BYTES", [16 * 2**30])
    samples(workload, "CPU_USAGE_CORES", [1.0])
    for gpu, values in (("0", [20, 30]), ("1", [80, 90])):
        samples(workload, "GPU_UTILIZATION", values, pod="train-a-0", labels={"gpu": gpu})
    session = open_session("bob", width=width)
    page = session.page
    page.goto(f"/workloads/{workload.pk}")
    for chart in ("chart-gpu", "chart-gpu-memory", "chart-cpu"):
        page.wait_for_function(f"() => typeof Chart !== 'undefined' && ({POINTS})('{chart}') === 10")
    page.wait_for_function(f"() => ({POINTS})('chart-gpu-per') === 20")
    assert page.evaluate(LABELS, "chart-gpu-per") == ["train-a-0 · GPU 0", "train-a-0 · GPU 1"]
    assert page.evaluate(LABELS, "chart-gpu-memory") == ["GPU memory used", "GPU memory requested"]
    top = page.evaluate("() => Math.max(...Chart.getChart(document.getElementById('chart-gpu-memory'))"
                        ".data.datasets[0].data.map((p) => p.y))")
    assert top == 10  # GiB
    expect(page.get_by_test_id("gpu-metrics-note")).to_have_count(0)
    page.get_by_role("group", name="Time range").get_by_role("button", name="15 min").click()
    page.wait_for_function(f"() => ({POINTS})('chart-gpu-per') === 20")
    spans = "() => [...document.querySelectorAll('#metrics canvas')].map((c) => { const x = Chart.getChart(c).options" \
            ".scales.x; return Math.round((x.max - x.min) / 60000); })"
    page.wait_for_function(f"() => ({spans})().every((m) => m === 15)")  # every chart, none left on the old range
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.locator("#h-metrics").scroll_into_view_if_needed()
    session.screenshot(f"workload-metrics-{width}")


def test_gpu_job_on_a_cluster_without_prometheus_says_why_and_finished_job_wants_nothing(open_session, org):
    workload = make_workload(org, gpu_request=1, actual_phase="Completed", running_pods=0)
    page = open_session("bob").page
    page.goto(f"/workloads/{workload.pk}")
    expect(page.get_by_test_id("gpu-metrics-note")).to_contain_text("no Prometheus URL set")
    expect(page.get_by_test_id("desired")).to_have_text("Nothing: it has finished")


def test_the_per_gpu_series_refuses_a_bad_query_as_json_and_hides_other_projects(client, org):
    workload = make_workload(org, gpu_request=1)
    client.force_login(org.users.member)
    answer = client.get(f"/workloads/{workload.pk}/gpu-series", {"start": "yesterday", "end": "2026-01-01T00:00:00Z"})
    assert answer.status_code == 400 and "start" in answer.json()
    client.force_login(org.users.other)
    assert client.get(f"/workloads/{workload.pk}/gpu-series", {"start": "2026-01-01T00:00:00Z",
                                                               "end": "2026-01-02T00:00:00Z"}).status_code == 404
