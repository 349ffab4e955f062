"""`/cfg`: applications, versions and application profiles (Kit App Streaming's). Path segments are free text so that
`*` reaches the views, which treat it as a wildcard where Kit App Streaming allows one (kit.matching)."""

from django.urls import path

from kit import api

urlpatterns = [
    path("apps", api.ApplicationListView.as_view(), name="cfg-apps"),
    path("apps/<str:app_id>", api.ApplicationDetailView.as_view(), name="cfg-app"),
    path("apps/<str:app_id>/versions", api.VersionListView.as_view(), name="cfg-versions"),
    path("apps/<str:app_id>/versions/<str:version>", api.VersionDetailView.as_view(), name="cfg-version"),
    path("apps/<str:app_id>/versions/<str:version>/profiles", api.VersionProfileListView.as_view(),
         name="cfg-version-profiles"),
    path("apps/<str:app_id>/versions/<str:version>/profiles/<str:profile_id>",
         api.VersionProfileDetailView.as_view(), name="cfg-version-profile"),
    path("profiles", api.ProfileListView.as_view(), name="cfg-profiles"),
    path("profiles/<str:profile_id>", api.ProfileDetailView.as_view(), name="cfg-profile"),
]
