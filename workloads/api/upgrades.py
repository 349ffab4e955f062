"""GET/POST /api/v1/workloads/{workloadId}/upgrade (workloads.launch.upgrades): whether a catalog workload is behind
its service profile and what an upgrade would change; the upgrade itself, previewed with `?dryRun=true`."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.errors import flatten_errors
from workloads.api.preview_schema import DRY_RUN_PARAMETER, dry_run_requested
from workloads.launch import upgrades
from workloads.models import Workload


class UpgradeChangeSerializer(serializers.Serializer):
    def get_fields(self):  # "from" is a keyword: declared here
        return {"path": serializers.CharField(), "from": serializers.JSONField(), "to": serializers.JSONField()}


STATUS = inline_serializer("UpgradeStatus", {
    "outdated": serializers.BooleanField(), "fromRevision": serializers.IntegerField(allow_null=True),
    "toRevision": serializers.IntegerField(allow_null=True), "upgradable": serializers.BooleanField(),
    "reason": serializers.CharField(allow_blank=True), "changes": UpgradeChangeSerializer(many=True, allow_null=True),
    "problems": serializers.ListField(child=serializers.DictField())})
RESULT = inline_serializer("UpgradeResult", {
    "dryRun": serializers.BooleanField(), "workloadId": serializers.UUIDField(), "profile": serializers.DictField(),
    "fromRevision": serializers.IntegerField(allow_null=True), "toRevision": serializers.IntegerField(),
    "templateVersion": serializers.CharField(), "inputs": serializers.DictField(), "changes": UpgradeChangeSerializer(many=True),
    "objects": serializers.ListField(child=serializers.DictField(), required=False)})
BODY = inline_serializer("UpgradeRequest", {"inputs": serializers.DictField(
    required=False, help_text="Input values that replace the stored ones (secret ones too).")})


class WorkloadUpgradeView(APIView):
    def _workload(self, request, workload_id) -> Workload:
        return get_object_or_404(Workload.objects.visible_to(request.user).live().select_related(
            "project", "cluster"), pk=workload_id)

    @extend_schema(tags=["Workloads"], responses={200: STATUS},
                   summary="Whether a catalog workload is behind its service profile, and what an upgrade changes.")
    def get(self, request, workloadId):
        workload = self._workload(request, workloadId)
        answer = {**upgrades.upgrade_status(workload), "changes": None, "problems": []}
        if answer["upgradable"]:
            try:
                answer["changes"] = upgrades.upgrade_preview_changes(workload=workload, user=request.user)
            except APIException as exc:  # a viewer, or inputs the new revision refuses: said, not raised
                answer["problems"] = flatten_errors(exc.detail) if isinstance(exc.detail, (dict, list)) else [
                    {"field": "", "message": str(exc.detail)}]
        return Response(answer)

    @extend_schema(tags=["Workloads"], request=BODY, responses={202: RESULT, 200: RESULT},
                   parameters=[DRY_RUN_PARAMETER],
                   summary="Upgrade a catalog workload to its profile's current revision (or preview it).",
                   description=upgrades.__doc__)
    def post(self, request, workloadId):
        dry_run = dry_run_requested(request)
        workload = self._workload(request, workloadId)
        body = request.data if request.data not in (None, "") else {}
        if not isinstance(body, dict):
            raise ValidationError({"request": ["Must be a JSON object."]})
        unknown = sorted(set(body) - {"inputs"})
        if unknown:
            raise ValidationError({name: ["Unknown field."] for name in unknown})
        overrides = body.get("inputs", {})
        if dry_run:
            return Response(upgrades.upgrade_preview(workload=workload, user=request.user, overrides=overrides))
        result = upgrades.workload_upgrade(workload=workload, user=request.user, overrides=overrides)
        return Response(result, status=status.HTTP_202_ACCEPTED)
