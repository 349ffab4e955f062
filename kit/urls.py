"""Portal pages of Kit App Streaming (the main nav links to them by these names)."""

from django.urls import path

from kit import views

urlpatterns = [
    path("kit/apps", views.applications, name="kit-apps"),
    path("kit/apps/<str:app_id>", views.application, name="kit-app"),
    path("kit/apps/<str:app_id>/edit", views.application_edit, name="kit-app-edit"),
    path("kit/apps/<str:app_id>/delete", views.application_delete, name="kit-app-delete"),
    path("kit/apps/<str:app_id>/versions", views.version_add, name="kit-version-add"),
    path("kit/apps/<str:app_id>/versions/<str:version>/delete", views.version_delete, name="kit-version-delete"),
    path("kit/profiles", views.profiles, name="kit-profiles"),
    path("kit/profiles/<str:profile_id>", views.profile, name="kit-profile"),
    path("kit/profiles/<str:profile_id>/edit", views.profile_edit, name="kit-profile-edit"),
    path("kit/profiles/<str:profile_id>/delete", views.profile_delete, name="kit-profile-delete"),
    # Forms of new ones: not under kit/apps/ or kit/profiles/, where "new" is a valid id
    path("kit/new/app", views.application_new, name="kit-app-new"),
    path("kit/new/profile", views.profile_new, name="kit-profile-new"),
    path("kit/sessions", views.sessions, name="kit-sessions"),
    path("kit/sessions/<uuid:session_id>/stop", views.session_stop, name="kit-session-stop"),
]
