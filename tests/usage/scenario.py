"""A day whose GPU-hours are computed by hand (docs/usage-and-reports.md walks through it).

Day D is three days ago (UTC), so that its hours are still in the hourly window.

- `train` (alpha, bob, pool `default`): 2 GPUs, 4 cores and 8 GiB per pod, running 01:00–04:30 (3.5 h), its
  times set as the sync sets them (started_at, completed_at) with no phase change recorded. Its GPUs were sampled
  at 50 % in 01:00–02:00 and 100 % in 02:00–03:00, not after.
  GPU-hours 2 × 3.5 = 7; measured 4 (hours 1 and 2), used 2 × 0.5 + 2 × 1 = 3, idle 1, unmeasured 3; core-hours
  4 × 3.5 = 14; GiB-hours 8 × 3.5 = 28.
- `space` (beta, dave, pool `a100`): 1 GPU, 1 core and 2 GiB, its phase changes recorded as the sync records them:
  Running 02:00, Stopping 03:00, Stopped 03:30 (a suspend: Stopping still holds the GPU), Running 05:00 (resumed),
  deleted 06:00. Held 1.5 h + 1 h = 2.5 h: 2.5 GPU-hours, 2.5 core-hours, 5 GiB-hours, no GPU sample.

Prices: `default` 2 per GPU-hour, 0.1 per core-hour, 0.01 per GiB-hour; `a100` 4 per GPU-hour only.
Costs: train 7 × 2 = 14 (idle 1 × 2 = 2) + 14 × 0.1 = 1.4 + 28 × 0.01 = 0.28 → 15.68; space 2.5 × 4 = 10."""

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from django.utils import timezone

from studio.models import NodePool
from tests.workloads.cluster_support import make_workload
from usage.models import NodePoolPrice
from workloads.models import MetricSample, Workload, WorkloadEvent


def day_d() -> datetime:
    today = timezone.now().astimezone(UTC).date()
    return datetime.combine(today - timedelta(days=3), datetime.min.time(), tzinfo=UTC)


def make_scenario(org) -> SimpleNamespace:
    d = day_d()
    h = lambda hours: d + timedelta(hours=hours)  # noqa: E731
    default, _ = NodePool.objects.get_or_create(cluster=org.cluster, name="default", defaults={"is_default": True})
    a100 = NodePool.objects.create(cluster=org.cluster, name="a100", label_key="run.ai/node-pool", label_value="a100")
    NodePoolPrice.objects.create(node_pool=default, gpu_hour=2, cpu_core_hour="0.1", memory_gib_hour="0.01")
    NodePoolPrice.objects.create(node_pool=a100, gpu_hour=4)

    train = make_workload(org.a, "train", compute={"gpuDevicesRequest": 2, "cpuCoreRequest": 4,
                                                   "cpuMemoryRequest": "8Gi"})
    Workload.objects.filter(pk=train.pk).update(
        created_at=h(0.5), started_at=h(1), completed_at=h(4.5), actual_phase="Completed", phase_updated_at=h(4.5),
        created_by_name=org.users.member.email, node_pool="")
    for at, value in ((h(1.5), 50.0), (h(2.25), 100.0), (h(2.75), 100.0)):
        MetricSample.objects.create(workload=train, type="GPU_UTILIZATION", value=value, timestamp=at)

    space = make_workload(org.b, "space", kind="workspace", compute={"gpuDevicesRequest": 1, "cpuCoreRequest": 1,
                                                                     "cpuMemoryRequest": "2Gi"})
    Workload.objects.filter(pk=space.pk).update(
        created_at=h(1.75), started_at=h(2), actual_phase="Running", phase_updated_at=h(5), deleted_at=h(6),
        created_by_name=org.users.other.email, node_pool="a100")
    for at, phase in ((h(1.75), "Creating"), (h(2), "Running"), (h(3), "Stopping"), (h(3.5), "Stopped"),
                      (h(5), "Running")):
        WorkloadEvent.objects.create(workload=space, at=at, reason=phase, phase=phase)
    return SimpleNamespace(day=d, train=train, space=space, default=default, a100=a100)
