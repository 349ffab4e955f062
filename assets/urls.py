"""The asset pages (assets/views.py); included at the root by config/urls.py."""

from django.urls import path

from assets import views

urlpatterns = [
    path("assets/items/<uuid:asset_id>", views.asset_edit, name="asset-edit"),
    path("assets/items/<uuid:asset_id>/delete", views.asset_delete, name="asset-delete"),
    path("assets/<slug:family>", views.asset_list, name="asset-list"),
    path("assets/<slug:family>/export.csv", views.asset_export, name="asset-export"),
    path("assets/<slug:family>/bulk", views.asset_bulk, name="asset-bulk"),
    path("assets/<slug:family>/new/<str:kind>", views.asset_new, name="asset-new"),
]
