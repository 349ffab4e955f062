"""Run:ai's report shapes (latest: ReportRequestFields, Report) and our chargeback prices."""

import re
import uuid
from datetime import timedelta

from django.conf import settings
from rest_framework import serializers

from studio.serializers import StrictSerializer
from usage.models import NodePoolPrice, Report
from workloads.runai_fields import TENANT_ID

FILTER = re.compile(r"^(projectName|departmentName|clusterId)==(.+)$")
LONGEST = timedelta(days=5 * 366)  # a report covers at most five years


class ReportRequestSerializer(StrictSerializer):
    name = serializers.CharField(max_length=255)
    description = serializers.CharField(max_length=2000, required=False, allow_blank=True, default="")
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    groupBy = serializers.ChoiceField(choices=Report.GroupBy.choices, required=False, allow_null=True, default=None)
    filterBy = serializers.ListField(child=serializers.CharField(max_length=300), required=False, default=list,
                                     max_length=50)

    def validate_filterBy(self, items):
        errors = {}
        for index, item in enumerate(items):
            match = FILTER.match(item)
            if match is None:
                errors[index] = ["A filter is projectName==…, departmentName==… or clusterId==…."]
            elif match.group(1) == "clusterId":
                try:
                    uuid.UUID(match.group(2))
                except ValueError:
                    errors[index] = [f"{match.group(2)!r} is not a cluster id (a UUID)."]
        if errors:
            raise serializers.ValidationError(errors)
        return list(dict.fromkeys(items))

    def validate(self, attrs):
        if attrs["end"] <= attrs["start"]:
            raise serializers.ValidationError({"end": ["Must be after start."]})
        if attrs["end"] - attrs["start"] > LONGEST:
            raise serializers.ValidationError({"end": ["A report covers at most five years."]})
        return attrs


class ReportSerializer(serializers.Serializer):
    """Run:ai's Report (ReportRequestFields and ReportCalculatedFields)."""

    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    groupBy = serializers.ChoiceField(source="group_by", choices=Report.GroupBy.choices, allow_null=True)
    filterBy = serializers.ListField(source="filter_by", child=serializers.CharField())
    tenantId = serializers.SerializerMethodField()
    createdAt = serializers.DateTimeField(source="created_at")
    createdBy = serializers.CharField(source="created_by_name")
    status = serializers.ChoiceField(choices=Report.Status.choices)
    statusUpdatedAt = serializers.DateTimeField(source="status_updated_at")
    statusMessage = serializers.CharField(source="status_message")

    def get_tenantId(self, report) -> int:
        return TENANT_ID


def _price(source: str):
    return serializers.DecimalField(source=source, max_digits=12, decimal_places=4, min_value=0, required=False,
                                    default=0, coerce_to_string=False)


class PriceSerializer(StrictSerializer):
    """A node pool's chargeback prices (PaaS Studio's own): per GPU-hour, CPU-core-hour and memory GiB-hour."""

    nodepoolId = serializers.CharField(source="node_pool_id", read_only=True)
    nodepoolName = serializers.CharField(source="node_pool.name", read_only=True)
    clusterId = serializers.CharField(source="node_pool.cluster_id", read_only=True)
    gpuHour = _price("gpu_hour")
    cpuCoreHour = _price("cpu_core_hour")
    memoryGibHour = _price("memory_gib_hour")
    currency = serializers.SerializerMethodField()
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)
    updatedBy = serializers.CharField(source="updated_by", read_only=True)

    def get_currency(self, price: NodePoolPrice) -> str:
        return settings.CHARGEBACK_CURRENCY
