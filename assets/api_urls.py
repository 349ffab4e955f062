"""Run:ai's asset routes, under /api/v1/asset/ (config/urls.py includes them)."""

from django.urls import path

from assets import api, template_api

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
# Templates of assets: 2.18's asset API and latest's workload-templates (assets/template_api.py).
urlpatterns += [
    path("asset/workload-template", template_api.AssetTemplateListView.as_view(), name="asset-template-list"),
    path("asset/workload-template/<str:AssetId>", template_api.AssetTemplateItemView.as_view(),
         name="asset-template-detail"),
    path("workload-templates", template_api.TemplatesView.as_view(), name="workload-template-list"),
    path("workload-templates/count", template_api.TemplateCountView.as_view(), name="workload-template-count"),
    path("workload-templates/name-availability", template_api.TemplateNameView.as_view(),
         name="workload-template-name"),
]
for _plural in template_api.PLURALS:
    _listing, _item = template_api.typed_views(_plural)
    urlpatterns += [
        path(f"workload-templates/{_plural}", _listing, name=f"workload-template-{_plural}"),
        path(f"workload-templates/{_plural}/<str:templateId>", _item, name=f"workload-template-{_plural}-detail"),
    ]
urlpatterns.append(path("workload-templates/<str:templateId>", template_api.TemplateView.as_view(),
                        name="workload-template-detail"))
# Data volumes and storage classes (assets/datavolumes_api.py, assets/storage_classes.py).
from assets import datavolumes_api, storage_classes  # noqa: E402

urlpatterns += [
    path("datavolumes", datavolumes_api.DataVolumeListView.as_view(), name="datavolume-list"),
    path("datavolumes/count", datavolumes_api.DataVolumeCountView.as_view(), name="datavolume-count"),
    path("datavolumes/name-availability", datavolumes_api.DataVolumeNameView.as_view(), name="datavolume-name"),
    path("datavolumes/<str:datavolumeId>", datavolumes_api.DataVolumeView.as_view(), name="datavolume-detail"),
    path("datavolumes/<str:datavolumeId>/sharedScopes", datavolumes_api.DataVolumeSharedScopesView.as_view(),
         name="datavolume-shared-scopes"),
    # runapy (generated from latest) turns the path's name into `shared-scopes`: the same operation there.
    path("datavolumes/<str:datavolumeId>/shared-scopes", datavolumes_api.DataVolumeSharedScopesAliasView.as_view(),
         name="datavolume-shared-scopes-runapy"),
    path("storage-classes", storage_classes.StorageClassesView.as_view(), name="storage-class-list"),
    path("storage-class-configuration", storage_classes.StorageClassConfigurationListView.as_view(),
         name="storage-class-configuration-list"),
    path("storage-class-configuration/<str:id>", storage_classes.StorageClassConfigurationView.as_view(),
         name="storage-class-configuration-detail"),
]
# Under /api/v2/ and /v1/k8s/ (config/urls.py includes these two lists there).
api_v2_urlpatterns = [
    path("storage-classes", storage_classes.StorageClassesV2View.as_view(), name="storage-class-list-v2")]
k8s_urlpatterns = [
    path("clusters/<str:uuid>/storage-classes", storage_classes.ClusterStorageClassesView.as_view(),
         name="k8s-storage-classes")]
