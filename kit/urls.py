"""Portal pages of Kit App Streaming (the main nav links to them by these names)."""

from django.urls import path

from kit import stream_views, views

urlpatterns = [
    path("kit/apps", views.applications, name="kit-apps"),
    path("kit/apps.csv", views.applications_export, name="kit-apps-export"),
    path("kit/apps/<str:app_id>", views.application, name="kit-app"),
    path("kit/apps/<str:app_id>/edit", views.application_edit, name="kit-app-edit"),
    path("kit/apps/<str:app_id>/delete", views.application_delete, name="kit-app-delete"),
    path("kit/apps/<str:app_id>/versions", views.version_add, name="kit-version-add"),
    path("kit/apps/<str:app_id>/versions/<str:version>/delete", views.version_delete, name="kit-version-delete"),
    path("kit/profiles", views.profiles, name="kit-profiles"),
    path("kit/profiles.csv", views.profiles_export, name="kit-profiles-export"),
    path("kit/profiles/<str:profile_id>", views.profile, name="kit-profile"),
    path("kit/profiles/<str:profile_id>/edit", views.profile_edit, name="kit-profile-edit"),
    path("kit/profiles/<str:profile_id>/delete", views.profile_delete, name="kit-profile-delete"),
    # Forms of new ones: not under kit/apps/ or kit/profiles/, where "new" is a valid id
    path("kit/new/app", views.application_new, name="kit-app-new"),
    path("kit/new/profile", views.profile_new, name="kit-profile-new"),
    path("kit/sessions", stream_views.session_list, name="kit-sessions"),
    path("kit/sessions.csv", stream_views.session_export, name="kit-sessions-export"),
    path("kit/sessions/bulk", stream_views.session_bulk, name="kit-sessions-bulk"),
    path("kit/sessions/<uuid:session_id>", stream_views.session_detail, name="kit-session"),
    path("kit/sessions/<uuid:session_id>/stop", stream_views.session_stop, name="kit-session-stop"),
    path("kit/client-urls/<uuid:link_id>/revoke", stream_views.client_url_revoke, name="kit-client-url-revoke"),
    path("kit/stream-limit", stream_views.stream_limit, name="kit-stream-limit"),
]
