"""Pages of PaaS Studio (admins) and of the catalog (end users); included at the root by config/urls.py."""

from django.urls import path

from profiles import list_views, views

urlpatterns = [
    path("studio/service-profiles", views.profile_list, name="profile-list"),
    path("studio/service-profiles/export.csv", list_views.profile_export, name="profile-export"),
    path("studio/service-profiles/bulk", list_views.profile_bulk, name="profile-bulk"),
    path("studio/system-profiles", views.system_profiles, name="system-profiles"),
    path("studio/service-profiles/new", views.profile_step, name="profile-new"),
    path("studio/service-profiles/version-options", views.version_options, name="profile-version-options"),
    path("studio/service-profiles/readme-preview", views.readme_preview, name="profile-readme-preview"),
    path("studio/service-profiles/<int:pk>", views.profile_detail, name="profile-detail"),
    path("studio/service-profiles/<int:pk>/edit/<slug:step>", views.profile_step, name="profile-step"),
    path("studio/service-profiles/<int:pk>/delete", views.profile_delete, name="profile-delete"),
    path("studio/service-profiles/<int:pk>/clone", views.profile_clone, name="profile-clone"),
    path("studio/environment-templates", views.template_list, name="template-list"),
    path("studio/environment-templates/export.csv", list_views.template_export, name="template-export"),
    path("studio/environment-templates/bulk", list_views.template_bulk, name="template-bulk"),
    path("studio/environment-templates/<int:pk>", views.template_detail, name="template-detail"),
    path("studio/environment-templates/<int:pk>/delete", views.template_delete, name="template-delete"),
    path("studio/environment-templates/<int:pk>/versions/<str:version>/state", views.version_state,
         name="version-state"),
    path("catalog", views.catalog, name="catalog"),
]
