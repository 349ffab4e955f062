"""Run:ai's asset routes, under /api/v1/asset/ (config/urls.py includes them)."""

from django.urls import path

from assets import api

urlpatterns = [
    *[path(f"asset/{prefix}", api.family_view(kinds, tag, listed_in, operation_id), name=f"asset-{listed_in}")
      for prefix, kinds, tag, listed_in, operation_id in api.FAMILIES],
    path("asset/datasource/pvc/<str:AssetId>/history", api.history_view(), name="asset-pvc-history"),
]
for prefix, kind, tag, stem in api.ROUTES:
    urlpatterns += [
        path(f"asset/{prefix}", api.collection_view(kind, tag, stem), name=f"asset-{kind}-list"),
        path(f"asset/{prefix}/<str:AssetId>", api.item_view(kind, tag, stem), name=f"asset-{kind}-detail"),
    ]
