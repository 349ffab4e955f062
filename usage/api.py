"""Run:ai latest's Reports tag, and PaaS Studio's chargeback prices (platform admins only).

Run:ai lets a user read the reports it made, and those who may view every project read them all; here the history
spans every project, so reports are for platform admins, who see them all. Availability answers every signed-in
caller: `isAvailable` says whether the caller may request reports."""

from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import generics, serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.response import Response
from rest_framework.views import APIView

from studio import api_schemas
from studio.iam.permissions import IsPlatformAdmin
from studio.ids import parse_id
from studio.models import NodePool, is_platform_admin
from usage import services
from usage.filtersets import ReportFilterSet
from usage.models import NodePoolPrice, Report
from usage.serializers import PriceSerializer, ReportRequestSerializer, ReportSerializer

REPORTS = ["Reports"]
CHARGEBACK = ["Chargeback"]


class ReportListView(generics.ListAPIView):
    permission_classes = [IsPlatformAdmin]
    serializer_class = ReportSerializer
    filterset_class = ReportFilterSet
    results_key = "reports"
    omit_last_next = True

    def get_queryset(self):
        return Report.objects.defer("csv")

    @extend_schema(tags=REPORTS, operation_id="list_reports")
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)

    @extend_schema(tags=REPORTS, operation_id="create_report", request=ReportRequestSerializer,
                   responses={202: ReportSerializer})
    def post(self, request):
        body = ReportRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        report = services.report_create(user=request.user, name=data["name"], description=data["description"],
                                        start=data["start"], end=data["end"], group_by=data["groupBy"],
                                        filter_by=data["filterBy"])
        return Response(ReportSerializer(report).data, status=status.HTTP_202_ACCEPTED)


class ReportCountView(generics.GenericAPIView):
    permission_classes = [IsPlatformAdmin]
    filterset_class = ReportFilterSet
    queryset = Report.objects.all()

    @extend_schema(tags=REPORTS, operation_id="count_reports", responses={200: api_schemas.COUNT})
    def get(self, request):
        return Response({"count": self.filter_queryset(self.get_queryset()).count()})


class ReportAvailabilityView(APIView):
    @extend_schema(tags=REPORTS, operation_id="are_reports_available",
                   responses={200: inline_serializer("ReportsAvailability", {"isAvailable": serializers.BooleanField()})})
    def get(self, request):
        return Response({"isAvailable": is_platform_admin(request.user)})


class ReportDetailView(APIView):
    permission_classes = [IsPlatformAdmin]

    def report(self, report_id) -> Report:
        return get_object_or_404(Report.objects.defer("csv"), pk=report_id)

    @extend_schema(tags=REPORTS, operation_id="get_report_by_id", responses={200: ReportSerializer})
    def get(self, request, reportId):
        return Response(ReportSerializer(self.report(reportId)).data)

    @extend_schema(tags=REPORTS, operation_id="delete_report_by_id",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, reportId):
        services.report_delete(report=self.report(reportId), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class FirstRenderer(BaseContentNegotiation):
    """The CSV comes as an HttpResponse of its own; errors are JSON whatever the client accepts (text/csv)."""

    def select_parser(self, request, parsers):
        return parsers[0]

    def select_renderer(self, request, renderers, format_suffix=None):
        request.query_params  # noqa: B018 — read as DRF's negotiation would: a flood of parameters is a JSON 400
        return renderers[0], renderers[0].media_type


class ReportFileView(APIView):
    permission_classes = [IsPlatformAdmin]
    content_negotiation_class = FirstRenderer

    @extend_schema(tags=REPORTS, operation_id="download_report_by_id",
                   responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request, reportId):
        report = get_object_or_404(Report, pk=reportId)
        if report.status != Report.Status.READY:
            raise ValidationError(f"Report {report.name!r} is {report.status}: its file is there once it is Ready.")
        response = HttpResponse(report.csv, content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="report-{report.pk}.csv"'
        return response


class PriceListView(APIView):
    """Every priced pool, in one answer (a pool has one row at most)."""

    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=CHARGEBACK, operation_id="list_node_pool_prices",
                   responses={200: inline_serializer("NodePoolPrices", {"prices": PriceSerializer(many=True)})})
    def get(self, request):
        prices = NodePoolPrice.objects.select_related("node_pool").order_by("node_pool__cluster_id", "node_pool__name")
        return Response({"prices": PriceSerializer(prices, many=True).data})


class PriceDetailView(APIView):
    """One node pool's prices: GET (404 when it has none), PUT (sets all three; a price left out is 0), DELETE."""

    permission_classes = [IsPlatformAdmin]

    def pool(self, nodepool_id: str) -> NodePool:
        pk = parse_id(nodepool_id)
        if pk is None:
            raise NotFound(f"No node pool {nodepool_id!r}.")
        return get_object_or_404(NodePool.objects.visible_to(self.request.user), pk=pk)

    @extend_schema(tags=CHARGEBACK, operation_id="get_node_pool_price", responses={200: PriceSerializer})
    def get(self, request, nodepoolId):
        price = get_object_or_404(NodePoolPrice.objects.select_related("node_pool"), node_pool=self.pool(nodepoolId))
        return Response(PriceSerializer(price).data)

    @extend_schema(tags=CHARGEBACK, operation_id="set_node_pool_price", request=PriceSerializer,
                   responses={200: PriceSerializer})
    def put(self, request, nodepoolId):
        pool = self.pool(nodepoolId)
        body = PriceSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        price = services.price_set(node_pool=pool, user=request.user, **body.validated_data)
        return Response(PriceSerializer(price).data)

    @extend_schema(tags=CHARGEBACK, operation_id="delete_node_pool_price",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, nodepoolId):
        price = get_object_or_404(NodePoolPrice, node_pool=self.pool(nodepoolId))
        services.price_clear(price=price, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
