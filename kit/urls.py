"""Portal pages of Kit App Streaming (the main nav links to them by these names)."""

from django.urls import path

from kit import views

urlpatterns = [
    path("kit/apps", views.applications, name="kit-apps"),
    path("kit/apps/<str:app_id>", views.application, name="kit-app"),
    path("kit/profiles", views.profiles, name="kit-profiles"),
    path("kit/profiles/<str:profile_id>", views.profile, name="kit-profile"),
    path("kit/sessions", views.sessions, name="kit-sessions"),
    path("kit/sessions/<uuid:session_id>/stop", views.session_stop, name="kit-session-stop"),
]
