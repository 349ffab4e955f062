"""`/streaming`: Kit streaming sessions, each a workload of kind "stream"."""

from django.urls import path

from kit import api

urlpatterns = [
    path("stream", api.StreamView.as_view(), name="streaming-stream"),
    path("stream/<str:session_id>", api.StreamDetailView.as_view(), name="streaming-session"),
]
