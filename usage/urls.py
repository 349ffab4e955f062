from django.urls import path

from usage import views

urlpatterns = [
    path("usage", views.usage_page, name="usage"),
    path("usage/trends/overview", views.trend, {"scope": "overview"}, name="usage-trend-overview"),
    path("usage/trends/clusters/<uuid:pk>/pools/<str:name>", views.trend, {"scope": "pool"},
         name="usage-trend-pool"),
    path("usage/trends/projects/<int:pk>", views.trend, {"scope": "project"}, name="usage-trend-project"),
    path("usage/trends/departments/<int:pk>", views.trend, {"scope": "department"}, name="usage-trend-department"),
    path("usage/reports", views.reports, name="usage-reports"),
    path("usage/reports/<uuid:pk>/download", views.report_download, name="usage-report-download"),
    path("usage/reports/<uuid:pk>/delete", views.report_delete, name="usage-report-delete"),
]
