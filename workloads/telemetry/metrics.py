"""Reads of stored metric samples: validation of the query, and reduction to `numberOfSamples` points."""

from collections import defaultdict
from datetime import datetime

from rest_framework import serializers

from studio.listing import CommaListField
from workloads.metric_types import ALIASES, NO_SOURCE_TYPES, POD_ALIASES, PROMETHEUS_TYPES
from workloads.models import MetricSample, Workload


class MetricsQuerySerializer(serializers.Serializer):
    metricType = CommaListField(child=serializers.CharField(), min_length=1)
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    numberOfSamples = serializers.IntegerField(min_value=0, max_value=1000, default=20)

    def __init__(self, *args, allowed_types=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.allowed_types = allowed_types

    def validate_metricType(self, types):
        unknown = [t for t in types if ALIASES.get(t, t) not in self.allowed_types]
        if unknown:
            raise serializers.ValidationError(
                f"Unknown metric types: {', '.join(unknown)}. Known: {', '.join(self.allowed_types)}."
            )
        return list(dict.fromkeys(types))

    def validate(self, attrs):
        if attrs["start"] >= attrs["end"]:
            raise serializers.ValidationError({"end": ["Must be after start."]})
        return attrs


class MeasurementValueSerializer(serializers.Serializer):
    value = serializers.CharField()
    timestamp = serializers.CharField()


class MeasurementSerializer(serializers.Serializer):
    type = serializers.CharField()
    labels = serializers.DictField(child=serializers.CharField())
    values = MeasurementValueSerializer(many=True)


class MeasurementsSerializer(serializers.Serializer):
    measurements = MeasurementSerializer(many=True)


def reduce_samples(points: list[tuple[datetime, float]], start: datetime, end: datetime, samples: int) -> list[dict]:
    """Average the points into `samples` equal time buckets over [start, end]; 0 keeps every point."""
    if samples == 0:
        return [{"value": _fmt(v), "timestamp": t.isoformat()} for t, v in points]
    width = (end - start) / samples
    buckets: dict[int, list[tuple[datetime, float]]] = defaultdict(list)
    for t, v in points:
        buckets[min(samples - 1, int((t - start) / width))].append((t, v))
    return [
        {"value": _fmt(sum(v for _, v in rows) / len(rows)), "timestamp": rows[-1][0].isoformat()}
        for _, rows in sorted(buckets.items())
    ]


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"


def measurements(workload: Workload, *, types: list[str], start, end, samples: int,
                 pod_name: str | None = None) -> tuple[list[dict], bool]:
    """({"type", "labels", "values"} per type and label set, partial) — partial when a type has no source."""
    has_prometheus = bool(workload.cluster.prometheus_url)
    aliases = {**ALIASES, **POD_ALIASES} if pod_name else ALIASES  # per-GPU types are a pod's GPU samples
    stored_types = {aliases.get(t, t) for t in types}
    rows = (
        MetricSample.objects.filter(
            workload=workload, type__in=stored_types, timestamp__gte=start, timestamp__lte=end,
            pod_name=pod_name or "",
        )
        .order_by("timestamp")
        .values_list("type", "labels", "timestamp", "value")
    )
    series: dict[tuple[str, str], dict] = {}
    for type_, labels, timestamp, value in rows:
        key = (type_, repr(sorted((labels or {}).items())))
        series.setdefault(key, {"labels": labels or {}, "points": []})["points"].append((timestamp, value))
    out, partial = [], False
    for requested in types:
        stored = aliases.get(requested, requested)
        if stored in NO_SOURCE_TYPES or (stored in PROMETHEUS_TYPES and not has_prometheus):
            partial = True
            out.append({"type": requested, "labels": {}, "values": []})
            continue
        found = [s for (t, _), s in series.items() if t == stored]
        if not found:
            out.append({"type": requested, "labels": {}, "values": []})
        for item in found:
            out.append({"type": requested, "labels": item["labels"],
                        "values": reduce_samples(item["points"], start, end, samples)})
    return out, partial


def gpu_series(workload: Workload, *, start, end, samples: int) -> list[dict]:
    """Every pod's per-GPU utilisation over [start, end] ({"type", "labels": {"pod", "gpu"}, "values"} per pod and
    GPU), from the stored samples: a pod that is gone keeps its history."""
    rows = (MetricSample.objects.filter(workload=workload, type="GPU_UTILIZATION", timestamp__gte=start,
                                        timestamp__lte=end).exclude(pod_name="")
            .order_by("timestamp").values_list("pod_name", "labels", "timestamp", "value"))
    series: dict[tuple[str, str], list] = defaultdict(list)
    for pod, labels, timestamp, value in rows:
        series[(pod, str((labels or {}).get("gpu", "")))].append((timestamp, value))
    return [{"type": "GPU_UTILIZATION_PER_GPU", "labels": {"pod": pod, "gpu": gpu},
             "values": reduce_samples(points, start, end, samples)} for (pod, gpu), points in sorted(series.items())]
