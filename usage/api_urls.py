"""The usage app's routes under /api/v1: Run:ai's Reports, and the chargeback prices (PaaS Studio's own)."""

from django.urls import path

from usage import api

urlpatterns = [
    path("org-unit/reports", api.ReportListView.as_view(), name="report-list"),
    path("org-unit/reports/count", api.ReportCountView.as_view(), name="report-count"),
    path("org-unit/reports/availability", api.ReportAvailabilityView.as_view(), name="report-availability"),
    path("org-unit/reports/<uuid:reportId>", api.ReportDetailView.as_view(), name="report-detail"),
    path("org-unit/reports/<uuid:reportId>/file", api.ReportFileView.as_view(), name="report-file"),
    path("chargeback/prices", api.PriceListView.as_view(), name="price-list"),
    path("chargeback/prices/<str:nodepoolId>", api.PriceDetailView.as_view(), name="price-detail"),
]
