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

# Run:ai's Registry tag: registries, and the repositories and tags read from each (assets/registry_api.py).
from assets import registry_api  # noqa: E402

urlpatterns += [
    path("asset/registries", registry_api.RegistryListView.as_view(), name="asset-registry-list"),
    path("asset/registries/<str:AssetId>", registry_api.RegistryView.as_view(), name="asset-registry-detail"),
    path("asset/registries/<str:AssetId>/repositories", registry_api.RepositoriesView.as_view(),
         name="asset-registry-repositories"),
    path("asset/registries/<str:AssetId>/repositories/tags", registry_api.RepositoryTagsView.as_view(),
         name="asset-registry-tags"),
]
