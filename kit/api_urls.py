"""PaaS Studio's own Kit APIs under /api/v1 (kit.client_api)."""

from django.urls import path

from kit import client_api

urlpatterns = [
    path("kit/client-urls", client_api.ClientUrlListView.as_view(), name="kit-client-url-list"),
    path("kit/client-urls/<uuid:clientUrlId>", client_api.ClientUrlDetailView.as_view(), name="kit-client-url-detail"),
    path("kit/projects/<str:projectId>/stream-limit", client_api.StreamLimitView.as_view(), name="kit-stream-limit-api"),
]
